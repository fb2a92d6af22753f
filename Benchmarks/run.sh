#!/usr/bin/env bash
# Runs the codec, transformer, cache and HTTP benchmarks beside their anchors in one run and prints ratios.
# Installs what it needs (Debian packages and PyPI, via ../shared/bench/anchors.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=$(cd "$here/../../shared" && pwd)
fixtures=${FIXTURES:-/tmp/bench-fixtures}
. "$here/../scripts/install-deps.sh"
bash "$shared/bench/anchors.sh" "$fixtures" | tee /tmp/webimage-anchors.txt
cd "$here"
swift build -c release
.build/release/CodecBenchmarks "$fixtures" /tmp/webimage-anchors.txt
.build/release/TransformBenchmarks "$fixtures" /tmp/webimage-anchors.txt
taskset -c 0 .build/release/TransformBenchmarks "$fixtures" /tmp/webimage-anchors.txt   # one core, as Pillow uses
.build/release/CacheBenchmarks "$fixtures" /tmp/webimage-anchors.txt
WEBIMAGE_BENCH_DIR=/dev/shm .build/release/CacheBenchmarks "$fixtures" /tmp/webimage-anchors.txt
bash "$here/http-bench.sh" "$fixtures" /tmp/webimage-anchors.txt
