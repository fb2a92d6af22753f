#!/usr/bin/env bash
# Runs the whole test suite under a sanitizer, in its own build folder (.build-sanitize/KIND).
# Usage: scripts/sanitize.sh KIND [KIND]   (thread, address)
# With two kinds, both are built (one after the other: a build takes both cores), then both
# suites run at the same time: a sanitized suite runs its tests one at a time and keeps about
# 0.8 of a core busy (TSan 389 s of CPU in 509 s, ASan 341 s in 403 s), so the two together
# take about the wall time of the longer one.
#   thread:  ThreadSanitizer. Built with -DWEBIMAGE_TSAN, which swaps Synchronization.Mutex for a
#            pthread-based lock of the same API (Sources/WebImage/Internal/SanitizerMutex.swift):
#            Mutex locks inside the uninstrumented standard library, so TSan cannot see it and
#            reports races on everything it guards. No suppressions.
#   address: AddressSanitizer (with its leak checker) and, for the C shim, UndefinedBehaviorSanitizer
#            in trap mode (Swift on Linux has no -sanitize=undefined; Swift itself traps on overflow
#            and out-of-bounds access in every build).
# Any report fails the run: TSan and ASan make the process exit non-zero, and the CLI tests,
# which run the sanitized `webimage`, fail when it does. The one suppression (scripts/lsan.supp) is
# XCTest's runner, which keeps its objects until exit.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/sanitize.sh thread|address [thread|address]" >&2; exit 2; }
for kind in "$@"; do
  case $kind in thread|address) ;; *) echo "sanitize.sh: unknown kind $kind (thread or address)" >&2; exit 2 ;; esac
done
WEBIMAGE_TEST_TOOLS=1 . scripts/install-deps.sh

# The compiler flags, the tests left out and the runtime options of KIND.
configure() {
  case $1 in
    # Under TSan, the sweeps that run on one thread from start to end are skipped: a decoder fed
    # each corpus file in pieces, the APNG encoder's round trip, the GIF frame counter at every
    # cut, the colour path against lcms2 over every 8-bit input and the area reduction against
    # exact means (C called directly, no bands). With no second thread there is nothing for TSan
    # to report, and they were its longest tests. The debug suite and ASan run them.
    thread) flags=(--sanitize=thread -Xswiftc -DWEBIMAGE_TSAN)
            skip=(--skip 'everyCorpus[A-Za-z]*StreamsToTheSameImageAsTheWholeFileDecoder|everyAnimationOfTheCorpusRoundTripsThroughOurDecoderAndPillows|theFrameCounterAgreesWithGiflibAtEveryCut|everyInputIsWithinOneOfLCMS2|rowsAreAveragedByTheirCoverage')
            export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1" ;;
    address) flags=(--sanitize=address -Xcc -fsanitize=undefined -Xcc -fsanitize-trap=undefined); skip=()
             export ASAN_OPTIONS="detect_leaks=1 exitcode=66" LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp print_suppressions=0" ;;
  esac
  # Tests that measure memory skip that check under a sanitizer (ASan's redzones and quarantine,
  # TSan's shadow memory); everything else they check still runs.
  export WEBIMAGE_SANITIZER=$1
  # Swift's crash backtracer reads the crashed process's memory, which the sanitizers forbid.
  export SWIFT_BACKTRACE=enable=no
}

mkdir -p .build-sanitize
for kind in "$@"; do
  configure "$kind"
  build=".build-sanitize/$kind"
  start=$(date +%s)
  # What the suite runs, not the whole package: the test bundle and the executables the tests
  # start (the CLI, the crash-consistency writer, the Prometheus example); the other examples are
  # built, without a sanitizer, by the plain build. One product after another: all but the first
  # only compile their own main module and link.
  : >"$build.log"
  built=1
  for product in swift-web-imagePackageTests webimage cache-crash-writer PrometheusMetrics; do
    swift build --product "$product" --no-color-diagnostics --build-path "$build" "${flags[@]}" >>"$build.log" 2>&1 || { built=0; break; }
  done
  [ "$built" = 1 ] || {
    { grep -E "error" "$build.log" || true; } | head -20 >&2 || true
    echo "sanitize $kind: the build failed (log: $build.log)" >&2
    exit 1
  }
  echo "sanitize $kind: build $(( $(date +%s) - start )) s"
done

# The suite of KIND (in a subshell of its own: each kind has its own environment); its summary
# line, and any report, on standard error.
suite() (
  kind=$1
  configure "$kind"
  build=".build-sanitize/$kind"; log="$build/test.log"
  start=$(date +%s)
  status=0
  swift test --skip-build --no-parallel --no-color-diagnostics --build-path "$build" "${flags[@]}" ${skip[@]+"${skip[@]}"} >"$log" 2>&1 || status=$?
  reports=$(grep -cE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer" "$log" || true)
  summary=$(grep -E "^✔ Test run|^✘ Test run" "$log" | tail -1 || true)
  echo "sanitize $kind: tests $(( $(date +%s) - start )) s, $reports reports; ${summary:-no summary}"
  if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
    { grep -E -A12 "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer" "$log" || true; } | head -60 >&2 || true
    # Every failed test and the issue it recorded (a display name can start with a quote).
    { grep -E "^✘ (Test|Suite) " "$log" | grep -v "^✘ Test run" || true; } | head -20 >&2 || true
    echo "sanitize $kind: failed (log: $log)" >&2
    exit 1
  fi
)

pids=()
for kind in "$@"; do suite "$kind" & pids+=($!); done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit $failed
