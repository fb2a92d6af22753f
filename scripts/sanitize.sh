#!/usr/bin/env bash
# Runs the whole test suite under a sanitizer, in its own build folder (.build-sanitize/KIND).
# Usage: scripts/sanitize.sh thread|address
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
kind=${1:?usage: scripts/sanitize.sh thread|address}
WEBIMAGE_TEST_TOOLS=1 . scripts/install-deps.sh
case $kind in
  # Under TSan, the corpus sweeps that run on one thread from start to end (a decoder fed each
  # file in pieces, the APNG encoder's round trip) are skipped: with no second thread there is
  # nothing for TSan to report, and they took 80 s of its 10 minutes. The debug suite and ASan
  # run them.
  thread) flags=(--sanitize=thread -Xswiftc -DWEBIMAGE_TSAN)
          skip=(--skip 'everyCorpus[A-Za-z]*StreamsToTheSameImageAsTheWholeFileDecoder|everyAnimationOfTheCorpusRoundTripsThroughOurDecoderAndPillows')
          export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1" ;;
  address) flags=(--sanitize=address -Xcc -fsanitize=undefined -Xcc -fsanitize-trap=undefined); skip=()
           export ASAN_OPTIONS="detect_leaks=1 exitcode=66" LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp print_suppressions=0" ;;
  *) echo "sanitize.sh: unknown kind $kind (thread or address)" >&2; exit 2 ;;
esac
# Tests that measure memory skip that check under a sanitizer (ASan's redzones and quarantine,
# TSan's shadow memory); everything else they check still runs.
export WEBIMAGE_SANITIZER=$kind
# Swift's crash backtracer reads the crashed process's memory, which the sanitizers forbid.
export SWIFT_BACKTRACE=enable=no
build=".build-sanitize/$kind"
mkdir -p .build-sanitize
start=$(date +%s)
swift build --build-tests --no-color-diagnostics --build-path "$build" "${flags[@]}" >"$build.log" 2>&1 || {
  { grep -E "error" "$build.log" || true; } | head -20 >&2 || true
  echo "sanitize $kind: the build failed (log: $build.log)" >&2
  exit 1
}
built=$(date +%s)
log="$build/test.log"
status=0
swift test --skip-build --no-parallel --no-color-diagnostics --build-path "$build" "${flags[@]}" ${skip[@]+"${skip[@]}"} >"$log" 2>&1 || status=$?
reports=$(grep -cE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer" "$log" || true)
summary=$(grep -E "^✔ Test run|^✘ Test run" "$log" | tail -1 || true)
echo "sanitize $kind: build $((built - start)) s, tests $(( $(date +%s) - built )) s, $reports reports; ${summary:-no summary}"
if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
  { grep -E -A12 "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer" "$log" || true; } | head -60 >&2 || true
  { grep -E "^✘ Test [a-zA-Z].* failed" "$log" || true; } | head -20 >&2 || true
  echo "sanitize $kind: failed (log: $log)" >&2
  exit 1
fi
