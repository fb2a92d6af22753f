#!/usr/bin/env bash
# Builds the benchmarks in release, installs the anchors (Debian packages and PyPI only), runs
# every benchmark beside its anchors in one run, and writes Benchmarks/RESULTS.md: each figure,
# its anchor and the ratio, with the machine and the date (and DocC Performance's table from it). Takes about 25 minutes (thumbor included).
# `scripts/bench.sh --quick ROW` runs only the rows whose name contains ROW (any case; for example
# "disk hit", "6 at once", "png", "image(for:)"), reuses the anchors of the last run when there are
# any, prints to the terminal and leaves RESULTS.md alone: a minute or two instead of 25.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --quick ]; then
  [ -n "${2:-}" ] || { echo "usage: scripts/bench.sh --quick ROW" >&2; exit 2; }
  WEBIMAGE_BENCH_ROW=$2 exec bash Benchmarks/run.sh
fi
. scripts/install-deps.sh
out=Benchmarks/RESULTS.md
tmp=$(mktemp)
bash Benchmarks/run.sh | tee "$tmp"
{
  echo "# Benchmark results"
  echo
  echo "Written by \`scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'): one run, every figure beside its anchor"
  echo "measured in the same run. Ratios from one run are comparable; figures from different machines are not."
  echo
  echo "- machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "- system: $(uname -sr), $(swift --version 2>/dev/null | head -1)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  cat "$tmp"
} > "$out"
rm -f "$tmp"
# DocC Performance shows this run as one table.
python3 scripts/performance-table.py "$out" DocC/WebImage.docc/Performance.md
echo "wrote $out"
