#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, under AddressSanitizer) of one decoder entry.
# Usage: scripts/fuzz.sh TARGET SECONDS     TARGET: png jpeg webp gif bmp ico sniff incremental http avif heif jxl tiff worker metadata pdf, or all
# Seeds come from ../shared/testdata/corpus (and ../shared/testdata/modern for avif, heif, jxl); what the fuzzer learns stays in .build/fuzz-corpus.
# Exits 1 on any finding (crash, leak, timeout, out-of-memory): the input is copied to
# Tests/WebImageTests/Fixtures/FuzzFindings, where the ordinary test suite replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:-60}
. scripts/install-deps.sh
corpus=$(cd "$root/../shared/testdata/corpus" && pwd)
modern=$(cd "$root/../shared/testdata/modern" && pwd)
findings="$root/Tests/WebImageTests/Fixtures/FuzzFindings"
pillow_suite=${WEBIMAGE_PILLOW_SUITE_DIR:-/opt/webimage-pillow-suite}
fuzz_seeds="$root/Fuzz/.build/fuzz-seeds"

# SwiftPM hands each --sanitize to swiftc as its own -sanitize= flag, in the order of a Set (it
# changes between runs), and the Swift driver keeps only the last: the Swift code was built either
# with coverage and no ASan, or with ASan and no coverage (the fuzzer ran blind). One combined
# -Xswiftc flag comes after them and wins. SwiftPM's own flags stay for the C targets and the link.
# build [PRODUCT]: one target's product, or without one every target of the Fuzz package.
build() {
  (cd "$root/Fuzz" && swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
    ${1:+--product "$1"} --no-color-diagnostics 2>&1 \
    | grep -vE "Cannot export local symbol|found 1 file\(s\) which are unhandled" | grep -E "error|warning|Compiling|Build" | tail -3)
}

# `all` builds every target in one build, then runs them two at a time, one per core: the same
# seconds of fuzzing each, in half the time. Any finding fails the whole run. FUZZ_STEP=build
# only builds them; FUZZ_STEP=run only runs them (FUZZ_JOBS at a time), as scripts/test.sh does
# beside the test suite.
if [ "$target" = all ]; then
  [ "${FUZZ_STEP:-both}" = run ] || build
  [ "${FUZZ_STEP:-both}" != build ] || exit 0
  printf '%s\n' png jpeg webp gif bmp ico sniff incremental http avif heif jxl tiff worker metadata pdf \
    | FUZZ_STEP=run xargs -P "${FUZZ_JOBS:-2}" -I{} bash "$0" {} "$seconds" || {
    echo "fuzz: at least one target failed (see above)" >&2
    exit 1
  }
  exit 0
fi
# FUZZ_STEP=run runs the target's last build without building it again (as `all` does).
step=${FUZZ_STEP:-both}
case $target in
  png) product=FuzzPNG; seeds="$corpus/png $corpus/apng"; dict=png ;;
  jpeg) product=FuzzJPEG; seeds="$corpus/jpeg"; dict=jpeg ;;
  webp) product=FuzzWebP; seeds="$corpus/webp"; dict=webp ;;
  gif) product=FuzzGIF; seeds="$corpus/gif"; dict=gif ;;
  # Our own BMP and ICO decoders, seeded with bmpsuite and Pillow's icons (install-deps.sh).
  bmp) product=FuzzBMP; seeds="$pillow_suite/bmp/g $pillow_suite/bmp/q $pillow_suite/bmp/b"; dict=bmp ;;
  ico) product=FuzzICO; seeds="$fuzz_seeds/ico"; dict=bmp
       mkdir -p "$seeds" && cp "$pillow_suite"/*.ico "$seeds/" ;;
  sniff) product=FuzzSniff; seeds="$corpus/png $corpus/jpeg $corpus/webp $corpus/gif"; dict=all ;;
  incremental) product=FuzzIncremental; seeds="$corpus/png $corpus/jpeg $corpus/webp $corpus/gif"; dict=all ;;
  # HTTP responses (corpus images in plain, chunked, gzip, lying and 304 replies) for a loopback
  # server in front of the real loader; with cached entries whose extended data is fuzzed.
  http) product=FuzzHTTP; seeds="$root/Fuzz/.build/fuzz-seeds/http"; dict=http
        python3 Fuzz/make-http-seeds.py "$corpus" "$seeds" >/dev/null ;;
  avif) product=FuzzAVIF; seeds="$modern/avif"; dict=isobmff ;;
  heif) product=FuzzHEIF; seeds="$modern/heic"; dict=isobmff ;;
  jxl) product=FuzzJXL; seeds="$modern/jxl"; dict=jxl ;;
  tiff) product=FuzzTIFF; seeds="$fuzz_seeds/tiff"; dict=tiff
        mkdir -p "$seeds" && cp "$pillow_suite"/*.tif "$pillow_suite"/*.tiff "$seeds/" ;;
  # A decoding worker's replies (WebImageIsolation's pool reads them as untrusted input).
  worker) product=FuzzWorkerReply; seeds="$fuzz_seeds/worker"; dict=all
          python3 Fuzz/make-reply-seeds.py "$seeds" ;;
  # ImageMetadata: stripped, which webimage serve runs in its own process on strangers' files,
  # and read (EXIF, XMP and ICC out of every format that carries them).
  metadata) product=FuzzMetadata; seeds="$corpus/png $corpus/jpeg $corpus/webp $corpus/gif $modern/avif $modern/heic $modern/jxl $fuzz_seeds/metadata-tiff"; dict=all
            mkdir -p "$fuzz_seeds/metadata-tiff" && cp "$pillow_suite"/*.tif "$pillow_suite"/*.tiff "$fuzz_seeds/metadata-tiff/" ;;
  # PDF pages through poppler (WebImagePDF): small documents of shapes, text, several pages,
  # an image, annotations and actions (Fuzz/make-pdf-seeds.py).
  pdf) product=FuzzPDF; seeds="$fuzz_seeds/pdf"; dict=pdf
       python3 Fuzz/make-pdf-seeds.py "$seeds" ;;
  *) echo "unknown target $target (png jpeg webp gif bmp ico sniff incremental http avif heif jxl tiff worker metadata pdf all)" >&2; exit 2 ;;
esac
cd Fuzz
[ "$step" = run ] || build "$product"
# Checked, not assumed: the library's objects carry both the coverage counters and ASan's checks.
counters=$(nm ".build/release/$product" | grep -c sancov_gen || true)
checks=$(nm .build/release/WebImage.build/DiskCache.swift.o | grep -c __asan_report || true)
if [ "$counters" -lt 100 ] || [ "$checks" -eq 0 ]; then
  echo "fuzz $target: the build is not instrumented ($counters coverage arrays, $checks ASan checks in DiskCache)" >&2
  exit 1
fi
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
# The system libraries under the target, with their versions: a finding inside one of them is
# reproduced (or found fixed) with the same versions.
case $target in
  heif) libraries="libheif1 libde265-0" ;; avif) libraries="libavif15 libdav1d6 libaom3" ;; jxl) libraries="libjxl0.7" ;;
  tiff) libraries="libtiff6" ;; png) libraries="libpng16-16" ;; jpeg) libraries="libjpeg62-turbo" ;; webp) libraries="libwebp7" ;;
  gif) libraries="libgif7" ;; pdf) libraries="libpoppler126 libpoppler-glib8 libcairo2" ;; *) libraries="" ;;
esac
versions=$([ -n "$libraries" ] && dpkg-query -W -f='${Package} ${Version}, ' $libraries 2>/dev/null | sed 's/, $//' || true)
echo "fuzz $target: $runs executions in ${seconds} s, $coverage${versions:+ ($versions)}"
if [ "$status" -ne 0 ] || ls "$artifacts" | grep -q .; then
  mkdir -p "$findings"
  for file in "$artifacts"*; do [ -f "$file" ] && cp "$file" "$findings/$target-$(basename "$file")"; done
  grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -20 >&2
  echo "fuzz $target: a finding (log: $log), copied to $findings" >&2
  exit 1
fi
