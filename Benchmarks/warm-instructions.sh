#!/usr/bin/env bash
# Instructions of one warm answer of `webimage serve`: the server under callgrind, asked for a
# few results until they are in its response cache, its counts zeroed, then COUNT requests for
# them over one keep-alive connection; the counts (every thread of the server, user space only)
# divided by COUNT. A figure that does not move with the machine's noise, where the warm
# requests per second of server-bench.sh move about 8% between runs on two cores.
# The decoding workers are off (`isolation: false`): a worker is the server's own executable
# started again, which under valgrind is valgrind's; a warm answer involves none.
# Usage: warm-instructions.sh WEBIMAGE_BINARY URL_LIST [COUNT]
# (server-bench.sh calls it with its warm URLs, unsigned, from 127.0.0.1; the origin must be up).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1; list=$2; count=${3:-2000}
source "$here/valgrind/find.sh"
control="$(dirname "$valgrind")/callgrind_control"
tmp=$(mktemp -d)
srv=""
cleanup() { [ -z "$srv" ] || { kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true; }; rm -rf "$tmp" "$(dirname "$shim")"; }
trap cleanup EXIT
cat > "$tmp/serve.json" <<JSON
{ "insecure": true, "allowedNetworks": ["127.0.0.0/8"], "cacheDirectory": "$tmp/cache", "isolation": false }
JSON
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
LD_PRELOAD="$shim" SWIFT_DETERMINISTIC_HASHING=1 SWIFT_BACKTRACE=enable=no \
  "$valgrind" --tool=callgrind --fair-sched=yes --callgrind-out-file="$tmp/callgrind.%p" \
  "$bin" serve --config "$tmp/serve.json" --port "$port" --log-level warning > "$tmp/serve.log" 2>&1 & srv=$!
for _ in $(seq 600); do curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.2; done
# Eight of the list's results, asked for twice before counting: rendered, then kept.
mapfile -t paths < <(head -8 "$list")
ask() { # COUNT: requests for the paths in turn, on one connection; fails on any answer but 200
  python3 - "$port" "$1" "${paths[@]}" <<'PY'
import http.client, sys
port, n, paths = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
for i in range(n):
    connection.request("GET", paths[i % len(paths)])
    response = connection.getresponse(); response.read()
    if response.status != 200: sys.exit(f"warm-instructions: {paths[i % len(paths)]} answered {response.status}")
PY
}
ask 16
"$control" -z "$srv" >/dev/null 2>&1
ask "$count"
"$control" -d "$srv" >/dev/null 2>&1
for _ in $(seq 50); do total=$(cat "$tmp"/callgrind.* 2>/dev/null | awk '/^(summary|totals):/ {n = $2} END {print n}'); [ -n "$total" ] && break; sleep 0.2; done
[ -n "${total:-}" ] || { echo "warm-instructions: no counts"; exit 0; }
echo "$((total / count)) instructions per warm answer (callgrind $("$valgrind" --version | sed 's/valgrind-//'), $count answers of 8 results over one keep-alive connection)"
