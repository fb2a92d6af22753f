#!/usr/bin/env bash
# One row of the benchmarks (scripts/bench.sh --quick ROW): the executables whose rows can be
# picked by name run with WEBIMAGE_BENCH_ROW (they print only the rows that match); the manager's
# rows map to its single-figure modes; `webimage serve` against thumbor runs when ROW names it.
# Usage: quick.sh FIXTURES_DIR ANCHORS_FILE ROW (run.sh calls it after the release build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$1; anchors=$2; row=$(printf '%s' "$3" | tr '[:upper:]' '[:lower:]')
export WEBIMAGE_BENCH_ROW=$3
has() { case "$1" in *"$row"*) return 0 ;; *) return 1 ;; esac; }
echo "## Rows matching \"$3\""; echo
"$here/.build/release/CodecBenchmarks" "$fixtures" "$anchors" | grep -E '^\| [^-b]|^[a-z]' || true
"$here/.build/release/TransformBenchmarks" "$fixtures" "$anchors" | grep -E '^\| [^-b]' || true
"$here/.build/release/CacheBenchmarks" "$fixtures" "$anchors" | grep -E '^\| [^-b]' || true
manager=""
if has "memory hit through image(for:)"; then manager=WEBIMAGE_HITS=5; fi
if has "1,000 concurrent image(for:) of one uncached 1024x768 webp"; then manager=WEBIMAGE_COALESCE=11; fi
if has "pipeline overhead: image(for:) without caches"; then manager=WEBIMAGE_OVERHEAD=7; fi
if has "1,000 small jpegs end to end"; then manager=WEBIMAGE_E2E=7; fi
http=0
for name in "1,000 x 12 kb, 6 at once" "1,000 x 12 kb, 32 at once" "100 x 12 kb from a new client (cold)" "one 50 mib file" "memory per in-flight transfer"; do
  if has "$name"; then http=1; fi
done
if [ "$http" = 1 ] || [ -n "$manager" ]; then
  WEBIMAGE_BENCH_ONLY=quick MANAGER_MODE="$manager" QUICK_HTTP="$http" bash "$here/http-bench.sh" "$fixtures" "$anchors" | grep -E '^\| [^-b]|^[a-z]|^one call|^pipeline|^end to end' || true
fi
case "webimage serve against thumbor" in *"$row"*) bash "$here/server-bench.sh" ;; esac
# "instruction counts": every CPU-bound row under callgrind (a few minutes).
case "instruction counts" in *"$row"*) WEBIMAGE_BENCH_ROW= bash "$here/instructions.sh" "$fixtures" ;; esac
