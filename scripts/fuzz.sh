#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, under AddressSanitizer) of one decoder entry.
# Usage: scripts/fuzz.sh TARGET SECONDS     TARGET: png jpeg webp gif sniff incremental http, or all
# Seeds come from ../shared/testdata/corpus; what the fuzzer learns stays in .build/fuzz-corpus.
# Exits 1 on any finding (crash, leak, timeout, out-of-memory): the input is copied to
# Tests/WebImageTests/Fixtures/FuzzFindings, where the ordinary test suite replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:-60}
. scripts/install-deps.sh
corpus=$(cd "$root/../shared/testdata/corpus" && pwd)
findings="$root/Tests/WebImageTests/Fixtures/FuzzFindings"

if [ "$target" = all ]; then
  for each in png jpeg webp gif sniff incremental http; do bash "$0" "$each" "$seconds"; done
  exit 0
fi
case $target in
  png) product=FuzzPNG; seeds="$corpus/png $corpus/apng"; dict=png ;;
  jpeg) product=FuzzJPEG; seeds="$corpus/jpeg"; dict=jpeg ;;
  webp) product=FuzzWebP; seeds="$corpus/webp"; dict=webp ;;
  gif) product=FuzzGIF; seeds="$corpus/gif"; dict=gif ;;
  sniff) product=FuzzSniff; seeds="$corpus/png $corpus/jpeg $corpus/webp $corpus/gif"; dict=all ;;
  incremental) product=FuzzIncremental; seeds="$corpus/png $corpus/jpeg $corpus/webp $corpus/gif"; dict=all ;;
  # HTTP responses (corpus images in plain, chunked, gzip, lying and 304 replies) for a loopback
  # server in front of the real loader; with cached entries whose extended data is fuzzed.
  http) product=FuzzHTTP; seeds="$root/Fuzz/.build/fuzz-seeds/http"; dict=http
        python3 Fuzz/make-http-seeds.py "$corpus" "$seeds" >/dev/null ;;
  *) echo "unknown target $target (png jpeg webp gif sniff incremental http all)" >&2; exit 2 ;;
esac
cd Fuzz
build() {
  swift build -c release --sanitize=fuzzer --sanitize=address --product "$product" --no-color-diagnostics 2>&1 \
    | grep -vE "Cannot export local symbol|found 1 file\(s\) which are unhandled" | grep -E "error|warning|Compiling|Build" | tail -3
}
build
# On a fresh checkout SwiftPM's first sanitized builds of the parent package can leave WebImage
# without coverage instrumentation (libFuzzer then runs blind: cov ~70 instead of ~500). Seen on
# Swift 6.3.1: it took up to two rebuilds after touching one of its sources. Checked, not assumed.
for attempt in 1 2 3; do
  [ "$(nm ".build/release/$product" | grep -c sancov_gen)" -ge 100 ] && break
  touch "$root/Sources/WebImage/Coding/ImageCoder.swift"
  build
done
counters=$(nm ".build/release/$product" | grep -c sancov_gen)
# Still blind: say so and run anyway (AddressSanitizer still catches every crash; the search is
# only less guided). A known open problem of this setup, see the README's Reliability section.
[ "$counters" -ge 100 ] || echo "fuzz $target: warning: the build has $counters coverage arrays: the fuzzer runs without guidance" >&2
work="$root/Fuzz/.build/fuzz-corpus/$target"; artifacts="$root/Fuzz/.build/fuzz-findings/$target/"
mkdir -p "$work" "$artifacts"
log="$root/Fuzz/.build/fuzz-$target.log"
status=0
# Inputs up to 1 MiB, 10 s per input, 2 GiB of memory; -detect_leaks stays on (ASan's LeakSanitizer).
# Swift's own crash backtracer is off: it would read the crashed process's memory under ASan.
# LeakSanitizer reads the suppressions the sanitized test suite uses (pointers it cannot decode:
# Swift's weak-reference side tables, Data's tagged storage; see scripts/lsan.supp).
LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp print_suppressions=0" SWIFT_BACKTRACE=enable=no .build/release/"$product" -max_total_time="$seconds" -max_len=1048576 -timeout=10 -rss_limit_mb=2048 \
  -dict="Dictionaries/$dict.dict" -artifact_prefix="$artifacts" -print_final_stats=1 \
  "$work" $seeds >"$log" 2>&1 || status=$?
runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$" || echo 0)
coverage=$(grep -E "cov: [0-9]+" "$log" | tail -1 | grep -oE "cov: [0-9]+ ft: [0-9]+" || echo "cov: ?")
echo "fuzz $target: $runs executions in ${seconds} s, $coverage"
if [ "$status" -ne 0 ] || ls "$artifacts" | grep -q .; then
  mkdir -p "$findings"
  for file in "$artifacts"*; do [ -f "$file" ] && cp "$file" "$findings/$target-$(basename "$file")"; done
  grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -20 >&2
  echo "fuzz $target: a finding (log: $log), copied to $findings" >&2
  exit 1
fi
