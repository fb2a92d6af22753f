#!/usr/bin/env bash
# Instruction counts of the CPU-bound rows (codecs, transformers, memory hit) under callgrind:
# figures that do not move with the machine's noise, so that a regression shows where timings
# cannot. Each row's side runs once and three times in a process of its own
# (WEBIMAGE_COUNT_ROW/SIDE/TIMES, see BenchSupport's InstructionCount); half the difference is
# one operation, with start-up, fixtures and the first call's warm-up cancelled out.
# Usage: instructions.sh FIXTURES_DIR (run.sh calls it after the release build).
# Needs valgrind 3.20 or later (valgrind/find.sh builds one when the system's is older).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$1
source "$here/valgrind/find.sh"

# Instructions of one process: BINARY ROW SIDE TIMES. Two sources of spread are taken out: Swift's
# per-process hash seed (SWIFT_DETERMINISTIC_HASHING: a dictionary's probes differ with it) and
# the order valgrind runs threads in (--fair-sched=yes: the rows whose callers wait on both cores
# otherwise spin and park a different number of times each run). See Benchmarks/README.md,
# "Instruction counts that repeat".
count() {
  LD_PRELOAD="$shim" WEBIMAGE_COUNT_ROW="$2" WEBIMAGE_COUNT_SIDE="$3" WEBIMAGE_COUNT_TIMES="$4" SWIFT_BACKTRACE=enable=no \
    SWIFT_DETERMINISTIC_HASHING=1 \
    "$valgrind" --tool=callgrind --fair-sched=yes --callgrind-out-file=/dev/null "$here/.build/release/$1" "$fixtures" 2>&1 >/dev/null \
    | awk '/Collected :/ { print $NF }'
}
# Instructions of one operation of one side: BINARY ROW SIDE.
per_op() {
  local one three
  one=$(count "$1" "$2" "$3" 1); three=$(count "$1" "$2" "$3" 3)
  [ -n "$one" ] && [ -n "$three" ] || { echo "?"; return; }
  echo $(( (three - one) / 2 ))
}
human() { awk -v n="$1" 'BEGIN { if (n == "?") print "?"; else if (n >= 1e6) printf "%.2f M", n / 1e6; else printf "%.0f", n }'; }

echo "Instructions per operation (callgrind $("$valgrind" --version | sed 's/valgrind-//'); one run of 3 minus one run of 1, halved)."
echo "They do not move with the machine's load; a change of a few per cent is a real change. The floor runs"
echo "in the same process: for a codec, its C library called directly; for the memory hit, the memory cache alone;"
echo "for the 1,000 callers, one task that loads and decodes the image while 1,000 tasks wait for it; for the"
echo "pipeline overhead, the same 1,000 loads and decodes written by hand over the same loader."
echo
echo "| row | ours | floor | ours / floor |"
echo "| --- | ---: | ---: | ---: |"
# Rows in parallel, one process each per core at a time (the counts do not depend on timing),
# printed in their order.
out=$(dirname "$shim"); index=0
for binary in CodecBenchmarks TransformBenchmarks ManagerBenchmarks; do
  while IFS=$'\t' read -r row sides; do
    index=$((index + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
    {
      ours=$(per_op "$binary" "$row" 0)
      if [ "$sides" -ge 2 ]; then
        floor=$(per_op "$binary" "$row" 1)
        ratio=$(awk -v a="$ours" -v b="$floor" 'BEGIN { if (a == "?" || b == "?" || b == 0) print "?"; else printf "%.2fx", a / b }')
        echo "| $row | $(human "$ours") | $(human "$floor") | $ratio |"
      else
        echo "| $row | $(human "$ours") | (none: the anchors run in other processes) | |"
      fi
    } > "$out/row-$(printf %03d $index)" &
  done < <(WEBIMAGE_COUNT_LIST=1 "$here/.build/release/$binary" "$fixtures")
done
wait
cat "$out"/row-*
rm -rf "$(dirname "$shim")"
