#!/usr/bin/env bash
# Serves the benchmark fixtures with nginx on 127.0.0.1 and runs HTTPBenchmarks, ManagerBenchmarks, FleetBenchmarks and SoakBenchmarks against it
# (WEBIMAGE_BENCH_ONLY=manager: only the manager's; =quick: what quick.sh asks for).
# Usage: http-bench.sh FIXTURES_DIR ANCHORS_FILE (run.sh calls it after anchors.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$1; anchors=$2
work=$(mktemp -d); chmod 755 "$work"
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
[ -f "$fixtures/large-50MiB.bin" ] || head -c 52428800 /dev/urandom > "$fixtures/large-50MiB.bin"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<NGX
worker_processes 1; daemon on; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 2048; }
http { access_log off; keepalive_requests 100000; sendfile on;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work; uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$port; root $fixtures;
           location /slow/ { alias $fixtures/small/; limit_rate 200; } } }
NGX
nginx -c "$work/nginx.conf"
sleep 0.3
if [ "${WEBIMAGE_BENCH_ONLY:-}" = quick ]; then   # quick.sh: the HTTP rows asked for, or one manager mode
  if [ "${QUICK_HTTP:-0}" = 1 ]; then "$here/.build/release/HTTPBenchmarks" "$fixtures" "$anchors" "http://127.0.0.1:$port"; fi
  if [ -n "${MANAGER_MODE:-}" ]; then env "$MANAGER_MODE" "$here/.build/release/ManagerBenchmarks" "$fixtures" "$anchors" "http://127.0.0.1:$port"; fi
  exit 0
fi
if [ "${WEBIMAGE_BENCH_ONLY:-}" != manager ]; then
  "$here/.build/release/HTTPBenchmarks" "$fixtures" "$anchors" "http://127.0.0.1:$port"
fi
"$here/.build/release/ManagerBenchmarks" "$fixtures" "$anchors" "http://127.0.0.1:$port"
WEBIMAGE_BENCH_DIR=/dev/shm "$here/.build/release/ManagerBenchmarks" "$fixtures" "$anchors" "http://127.0.0.1:$port"
# Three machine processes with and without the shared memcached tier (WebImageMemcached).
if [ "${WEBIMAGE_BENCH_ONLY:-}" != manager ]; then
  "$here/.build/release/FleetBenchmarks" "$fixtures" "$anchors" "http://127.0.0.1:$port"
fi
# Peak memory against its budget, and load with 1,024 open files (issue "Reliability").
if [ "${WEBIMAGE_BENCH_ONLY:-}" != manager ]; then
  "$here/.build/release/SoakBenchmarks" "$fixtures" "$anchors" "http://127.0.0.1:$port"
fi
