#!/usr/bin/env bash
# Runs every benchmark beside its anchors in one run and prints markdown: the anchors measured
# by ../shared/bench/anchors.sh, then codecs, today's formats (modern-anchors.sh beside them), transformers (2 cores and 1 core), instruction
# counts of the CPU-bound rows (instructions.sh, under callgrind), caches (disk and
# tmpfs), HTTP loading and the ImageManager pipeline (against nginx on 127.0.0.1), and
# `webimage serve` against thumbor (server-bench.sh, which runs ../shared/bench/thumbor.sh).
# Installs what it needs (Debian packages and PyPI, via anchors.sh). scripts/bench.sh wraps it
# and writes Benchmarks/RESULTS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=$(cd "$here/../../shared" && pwd)
fixtures=${FIXTURES:-/tmp/bench-fixtures}
WEBIMAGE_TEST_TOOLS=1 . "$here/../scripts/install-deps.sh"
# The 12 MP PNG the codec rows read (modern-anchors.sh, which runs after them, reads it too):
# made once the anchors' photos exist.
png_fixture() { bash "$here/photo-png.sh" "$fixtures" /usr/bin/python3; }
if [ -n "${WEBIMAGE_BENCH_ROW:-}" ]; then
  # One row (scripts/bench.sh --quick ROW): the anchors of the last run when there are any.
  [ -s /tmp/webimage-anchors.txt ] && [ -f "$fixtures/small/0999.jpg" ] \
    || bash "$shared/bench/anchors.sh" "$fixtures" > /tmp/webimage-anchors.txt
  png_fixture
  cd "$here"
  swift build -c release 2>&1 | grep -E "error|Build complete" | tail -1 >&2
  bash "$here/quick.sh" "$fixtures" /tmp/webimage-anchors.txt "$WEBIMAGE_BENCH_ROW"
  exit 0
fi
echo "## Anchors"; echo; echo '```'
bash "$shared/bench/anchors.sh" "$fixtures" | tee /tmp/webimage-anchors.txt
echo '```'; echo
png_fixture
cd "$here"
swift build -c release 2>&1 | grep -E "error|Compiling|Build complete" | tail -1 >&2
echo "## Codecs"; echo
.build/release/CodecBenchmarks "$fixtures" /tmp/webimage-anchors.txt
echo; echo "## Today's formats (the AVIF, HEIF and JPEG XL coder plug-ins)"; echo
echo '```'; bash "$here/modern-anchors.sh" "$fixtures" | tee /tmp/webimage-modern-anchors.txt; echo '```'; echo
.build/release/ModernCodecBenchmarks "$fixtures" /tmp/webimage-modern-anchors.txt
echo; echo "## Transformers (2 cores)"; echo
.build/release/TransformBenchmarks "$fixtures" /tmp/webimage-anchors.txt
echo; echo "## Transformers (1 core, as Pillow uses)"; echo
taskset -c 0 .build/release/TransformBenchmarks "$fixtures" /tmp/webimage-anchors.txt
echo; echo "## Instruction counts (callgrind)"; echo
bash "$here/instructions.sh" "$fixtures"
echo; echo "## Caches (disk cache in /tmp)"; echo
.build/release/CacheBenchmarks "$fixtures" /tmp/webimage-anchors.txt
echo; echo "## Caches (disk cache on tmpfs)"; echo
WEBIMAGE_BENCH_DIR=/dev/shm .build/release/CacheBenchmarks "$fixtures" /tmp/webimage-anchors.txt
echo; echo "## HTTP loading and the ImageManager pipeline (nginx on 127.0.0.1)"; echo
bash "$here/http-bench.sh" "$fixtures" /tmp/webimage-anchors.txt
echo; echo "## Image server against thumbor (webimage serve, wrk)"; echo
bash "$here/server-bench.sh"
