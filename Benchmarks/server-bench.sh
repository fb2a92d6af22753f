#!/usr/bin/env bash
# `webimage serve` against thumbor, in one run, on the same work: ../shared/bench/thumbor.sh measures
# thumbor (its own nginx origin, 200 photos, 2 processes, wrk 32 connections for 30 s, cold and
# warm); then this script makes the same 200 photos and the same URL lists with thumbor.sh's own
# generators (read out of it, so they cannot drift), serves them from nginx on 127.0.0.1 and runs
# the same wrk script against `webimage serve` (release build, one process, a 64 MiB memory
# cache): thumbor's `/unsafe/WxH/URL` becomes `/unsafe/rs:fill-crop:W:H/q:80/plain/URL`, the
# same crop, size and quality. Prints a markdown table with the ratios.
# Then ../shared/bench/libvips.sh in the same run: a libvips server with ipx's behaviour (pyvips, one
# process per core, no result cache), cold and warm, and warm behind nginx's proxy_cache (ipx's
# deployment); its columns print beside thumbor's.
# Then, on an empty cache, the cold run again with AVIF output (f:avif), beside the source format's.
# Then the cold run once more with isolation off (sources decoded in the server's process instead of
# its sandboxed workers), for the cost of isolation.
# Env: DURATION (30), CONNS (32), WARMUP (5), SKIP_THUMBOR=1 (only ours; no ratios), SKIP_VIPS=1, SKIP_AVIF=1,
# SKIP_IN_PROCESS=1.
# --write: also put the table into RESULTS.md as its own section (with its date and commit),
# replacing the one of an earlier run; scripts/bench.sh writes the whole file instead.
set -euo pipefail
if [ "${1:-}" = --write ]; then
  dir=$(cd "$(dirname "$0")" && pwd); out=$(mktemp)
  bash "$0" | tee "$out"
  python3 - "$dir/RESULTS.md" "$out" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(git -C "$dir" rev-parse --short HEAD)" <<'PY'
import sys, re
path, table, when, commit = sys.argv[1:]
title = "## Image server against thumbor (webimage serve, wrk)"
section = f"{title}\n\nWritten by `Benchmarks/server-bench.sh --write` on {when} (commit {commit}): its own run, both servers\nmeasured in it.\n\n" + open(table).read().strip() + "\n"
text = open(path).read()
start = text.find(title)
if start < 0:
    text = text.rstrip() + "\n\n" + section
else:
    end = text.find("\n## ", start + len(title))
    text = text[:start] + section + ("" if end < 0 else text[end:])
open(path, "w").write(text)
PY
  rm -f "$out"
  python3 "$dir/../scripts/performance-table.py" "$dir/RESULTS.md" "$dir/../DocC/WebImage.docc/Performance.md"
  exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bench=$(cd "$root/../shared/bench" && pwd)
dur=${DURATION:-30}; conns=${CONNS:-32}; warm=${WARMUP:-5}
venv=${THUMBOR_VENV:-${TMPDIR:-/tmp}/thumbor-venv}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/serve-bench.XXXXXX"); chmod 755 "$tmp"
ngx=""; srv=""
stop_server() {
  [ -n "$srv" ] || return 0
  kill -TERM "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; srv=""
}
cleanup() {
  stop_server
  if [ -n "$ngx" ]; then kill -QUIT "$ngx" 2>/dev/null || true; wait "$ngx" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# thumbor first (it installs nginx, wrk and its venv, whose Pillow makes the photos below).
if [ "${SKIP_THUMBOR:-}" != 1 ]; then
  DURATION=$dur CONNS=$conns WARMUP=$warm THUMBOR_VENV=$venv bash "$bench/thumbor.sh" > "$tmp/thumbor.txt" 2> "$tmp/thumbor.err" \
    || { cat "$tmp/thumbor.err" >&2; exit 1; }
fi
[ -x "$venv/bin/python" ] || { echo "server-bench: $venv has no python (run thumbor.sh once)" >&2; exit 1; }
if [ "${SKIP_VIPS:-}" != 1 ]; then
  DURATION=$dur CONNS=$conns WARMUP=$warm THUMBOR_VENV=$venv bash "$bench/libvips.sh" > "$tmp/vips.txt" 2> "$tmp/vips.err" \
    || { cat "$tmp/vips.err" >&2; exit 1; }
fi

# thumbor.sh's here-documents, in order: 1 the photos (python), 2 the URL lists (python), 3 the wrk script (lua).
heredoc() { # $1: which one (1-based) of the here-documents ending with $2
  awk -v n="$1" -v end="$2" 'copy && $0 == end {copy = 0; next} copy {print} /<<.'"$2"'.$/ {k++; if (k == n) copy = 1}' "$bench/thumbor.sh"
}
mkdir -p "$tmp/img"
heredoc 1 PY > "$tmp/photos.py"; heredoc 2 PY > "$tmp/urls.py"; heredoc 1 LUA > "$tmp/urls.lua"
for f in photos.py urls.py urls.lua; do [ -s "$tmp/$f" ] || { echo "server-bench: no $f in thumbor.sh" >&2; exit 1; }; done
"$venv/bin/python" "$tmp/photos.py" "$tmp/img" "$bench"

port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
nport=$(port)
# The origin says how long its images stay fresh, as an image origin or CDN does: the photos were
# written seconds ago, and without Cache-Control the server's heuristic freshness (RFC 9111:
# a tenth of the time since Last-Modified) would be a few seconds, so the warm run would
# revalidate and render its 200 URLs again every few seconds (809 such requests and a warm p99
# of 526 ms in the run of 2026-12-02). thumbor keeps its results whatever the origin says.
cat > "$tmp/nginx.conf" <<NGX
worker_processes 1; daemon off; pid $tmp/nginx.pid; error_log $tmp/nginx-error.log;
events { worker_connections 1024; }
http { access_log off; keepalive_requests 100000; sendfile on;
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
  types { image/jpeg jpg; image/png png; image/webp webp; }
  server { listen 127.0.0.1:$nport; root $tmp/img; add_header Cache-Control "max-age=86400"; } }
NGX
nginx -c "$tmp/nginx.conf" & ngx=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$nport/img000.jpg" && break; sleep 0.1; done
"$venv/bin/python" "$tmp/urls.py" "$tmp" "$nport"
for list in cold warm; do
  sed -E 's#^/unsafe/([0-9]+)x([0-9]+)/#/unsafe/rs:fill-crop:\1:\2/q:80/plain/#' "$tmp/$list.txt" > "$tmp/$list-ours.txt"
done

(cd "$root" && swift build -c release --product webimage --static-swift-stdlib --no-color-diagnostics 2>&1 | grep -E "error|warning:" >&2 || true)
bin="$root/.build/release/webimage"
cat > "$tmp/serve.json" <<JSON
{ "insecure": true, "allowedNetworks": ["127.0.0.0/8"], "memoryCacheMegabytes": 64, "cacheDirectory": "$tmp/cache"${SERVE_CONFIG:+, $SERVE_CONFIG} }
JSON
sport=""
start_server() {
  rm -rf "$tmp/cache"; sport=$(port)
  "$bin" serve --config "$tmp/serve.json" --port "$sport" --log-level warning >> "$tmp/serve.log" 2>&1 & srv=$!
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$sport/health" && return 0; sleep 0.1; done
  echo "server-bench: webimage serve did not start" >&2; cat "$tmp/serve.log" >&2; exit 1
}
runwrk() { # $1 name, $2 URL list, $3 offset, $4 seconds
  wrk -t2 -c"$conns" -d"${4}s" --timeout 60s -s "$tmp/urls.lua" "http://127.0.0.1:$sport" -- "$2" "$3" 2 > "$tmp/wrk-$1.out" 2>&1 || true
  grep '^RES' "$tmp/wrk-$1.out" | sed "s/^/$1: /" >&2
}
field() { grep '^RES' "$tmp/wrk-$1.out" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k {print $2}'; }
# The server's peak resident memory and its decoding workers' (each worker's own peak, summed).
peak_mb() {
  local pids="$srv $(pgrep -P "$srv" | tr '\n' ' ')"
  for pid in $pids; do awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null; done | awk '{s += $1} END {printf "%.1f", s / 1024}'
}
server_mb() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$srv/status"; }
# The server's and its workers' proportional set size summed (each shared page counted once,
# split between the processes that map it: the libraries' text, the memfd a worker hands its
# pixels back in), sampled every half second while $1 runs; the peak, in MB.
# Read with the shell's own builtins (the server's children from /proc, no pgrep or awk): a
# sampler that starts processes twice a second takes CPU from the run it measures.
pss_sampler() {
  local total pid key value rest children task
  while :; do
    total=0
    children=""
    for task in /proc/"$srv"/task/*/children; do
      # The file ends without a newline: read fails at its end, having read the line.
      rest=""; read -r rest < "$task" 2>/dev/null || true
      children="$children $rest"
    done
    for pid in $srv $children; do
      while read -r key value rest; do
        if [ "$key" = "Pss:" ]; then total=$((total + value)); break; fi
      done < "/proc/$pid/smaps_rollup" 2>/dev/null || true
    done
    echo "$total"
    sleep 0.5
  done
}
sources() { # requests by where the result came from, from /metrics
  curl -s "http://127.0.0.1:$sport/metrics" | awk -F'[{}"]' '/^webimage_server_requests_total\{/ {
    for (i = 1; i <= NF; i++) { if ($i ~ /source=$/) s = $(i + 1); if ($i ~ /status=$/) c = $(i + 1) }
    split($0, v, " "); n[c " " s] += v[length(v)] } END { for (k in n) printf "%s%s=%d", (d++ ? ", " : ""), k, n[k] }'
}

# cold: warm-up on URLs 7000+, measured from URL 0 (8,000 distinct pairs: no repeats).
start_server
runwrk cold-warmup "$tmp/cold-ours.txt" 7000 "$warm"
pss_sampler > "$tmp/pss-cold.txt" & sampler=$!
runwrk cold "$tmp/cold-ours.txt" 0 "$dur"
kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true
cold_pss=$(sort -n "$tmp/pss-cold.txt" | tail -1 | awk '{printf "%.1f", $1 / 1024}')
cold_rss=$(peak_mb); cold_server_rss=$(server_mb); cold_sources=$(sources)
[ -n "${METRICS_OUT:-}" ] && curl -s "http://127.0.0.1:$sport/metrics" > "$METRICS_OUT"
stop_server

# cold with AVIF output (f:avif, libavif speed 9): the same URLs on an empty cache, beside the
# source-format run above. SKIP_AVIF=1 leaves it out.
if [ "${SKIP_AVIF:-}" != 1 ]; then
  sed 's#/q:80/plain/#/q:80/f:avif/plain/#' "$tmp/cold-ours.txt" > "$tmp/cold-avif.txt"
  start_server
  runwrk cold-avif-warmup "$tmp/cold-avif.txt" 7000 "$warm"
  runwrk cold-avif "$tmp/cold-avif.txt" 0 "$dur"
  avif_rss=$(peak_mb); avif_sources=$(sources); stop_server
fi

# cold with isolation off: the same URLs on an empty cache, decoded in the server's process.
if [ "${SKIP_IN_PROCESS:-}" != 1 ]; then
  cp "$tmp/serve.json" "$tmp/serve-isolated.json"
  sed 's/^{ /{ "isolation": false, /' "$tmp/serve-isolated.json" > "$tmp/serve.json"
  start_server
  runwrk cold-inproc-warmup "$tmp/cold-ours.txt" 7000 "$warm"
  runwrk cold-inproc "$tmp/cold-ours.txt" 0 "$dur"
  inproc_rss=$(peak_mb); stop_server
  cp "$tmp/serve-isolated.json" "$tmp/serve.json"
fi

# warm: the 200 URLs once (curl, 4 parallel), warm-up, then the measured run on the same 200.
start_server
sed "s|.*|url = \"http://127.0.0.1:$sport&\"\noutput = \"/dev/null\"|" "$tmp/warm-ours.txt" > "$tmp/warm.curl"
primed=$(curl -s --parallel --parallel-max 4 --max-time 120 -K "$tmp/warm.curl" -w '%{http_code}\n' 2>/dev/null | grep -c '^200$' || true)
runwrk warm-warmup "$tmp/warm-ours.txt" 0 "$warm"
runwrk warm "$tmp/warm-ours.txt" 0 "$dur"
warm_rss=$(peak_mb); warm_sources=$(sources); warm_workers=$(pgrep -P "$srv" | wc -l); stop_server
# The same warm answers counted in instructions (a figure that does not move with the machine's load).
warm_instructions=$(bash "$here/warm-instructions.sh" "$bin" "$tmp/warm-ours.txt" 2000 2>/dev/null || true)

th() { awk -v k="$1" '$1 == k {print $2}' "$tmp/thumbor.txt" 2>/dev/null; }
vips() { awk -v k="$1" '$1 == k {print $2}' "$tmp/vips.txt" 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2fx", a / b }'; }
row() { # label, ours, thumbor, libvips (its warm row: behind nginx's cache), [libvips' figure name]
  printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "${3:--}" "$(ratio "$2" "$3")" "${4:--}" "$(ratio "$2" "$4")"
}
echo "Sources: 200 photos (180 JPEG of 1-12 MP, 10 PNG, 10 WebP) from nginx on 127.0.0.1, made by thumbor.sh's own"
echo "generator; wrk -t2 -c$conns for ${dur} s after a ${warm} s warm-up. cold: every request a new source/size pair"
echo "(fill-crop, quality 80, the source's format); warm: 200 fixed URLs requested once before. webimage serve: one"
echo "process, 64 MiB memory cache, 32 MiB of encoded results, disk cache in /tmp. thumbor 7.8.0: $(nproc) processes,"
echo "no storage when cold, file result storage when warm."
echo
echo "libvips: ../shared/bench/libvips.sh, ipx's work on pyvips, $(nproc) processes, no result cache; its warm column is"
echo "the same server behind nginx proxy_cache (2 workers), as ipx is deployed."
echo
echo "| figure | webimage serve | thumbor | ours / thumbor | libvips (warm: nginx cache) | ours / libvips |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for run in cold warm; do
  vrun=$run; [ $run = warm ] && vrun=warm_cached
  row "$run requests/s" "$(field $run rps)" "$(th thumbor_${run}_rps)" "$(vips vips_${vrun}_rps)"
  row "$run p50 ms" "$(field $run p50_ms)" "$(th thumbor_${run}_p50_ms)" "$(vips vips_${vrun}_p50_ms)"
  row "$run p99 ms" "$(field $run p99_ms)" "$(th thumbor_${run}_p99_ms)" "$(vips vips_${vrun}_p99_ms)"
  printf '| %s errors: non-2xx, socket, timeouts | %s, %s, %s | %s, %s, %s | - | %s, %s, %s | - |\n' "$run" \
    "$(field $run non2xx)" "$(field $run sock_errors)" "$(field $run timeouts)" \
    "$(th thumbor_${run}_non2xx)" "$(th thumbor_${run}_sock_errors)" "$(th thumbor_${run}_timeouts)" \
    "$(vips vips_${vrun}_non2xx)" "$(vips vips_${vrun}_sock_errors)" "$(vips vips_${vrun}_timeouts)"
done
row "libvips without a cache, warm requests/s" "$(field warm rps)" "" "$(vips vips_warm_rps)"
if [ "${SKIP_AVIF:-}" != 1 ]; then
  printf '| %s | %s | - | %s of the same run in the source format | - | - |\n' "cold requests/s, f:avif" "$(field cold-avif rps)" "$(ratio "$(field cold-avif rps)" "$(field cold rps)")"
  printf '| %s | %s | - | - | - | - |\n' "cold p50 / p99 ms, f:avif" "$(field cold-avif p50_ms) / $(field cold-avif p99_ms)"
  printf '| %s | %s | - | - | - | - |\n' "cold errors, f:avif: non-2xx, socket, timeouts" "$(field cold-avif non2xx), $(field cold-avif sock_errors), $(field cold-avif timeouts)"
  printf '| %s | %s | - | - | - | - |\n' "peak RSS MB, cold f:avif" "$avif_rss"
fi
if [ "${SKIP_IN_PROCESS:-}" != 1 ]; then
  printf '| %s | %s | - | with isolation / without: %s | - | - |\n' "cold requests/s, isolation off (decoded in the server)" "$(field cold-inproc rps)" "$(ratio "$(field cold rps)" "$(field cold-inproc rps)")"
  printf '| %s | %s | - | - | - | - |\n' "cold p50 / p99 ms, isolation off" "$(field cold-inproc p50_ms) / $(field cold-inproc p99_ms)"
  printf '| %s | %s | - | - | - | - |\n' "peak RSS MB, cold, isolation off" "$inproc_rss"
fi
row "peak RSS MB, cold, server and workers (thumbor: its processes summed)" "$cold_rss" "$(th thumbor_cold_peak_rss_mb)" "$(vips vips_cold_peak_rss_mb)"
printf '| %s | %s | - | - | - | - |\n' "peak PSS MB, cold, server and workers (sampled every 0.5 s; shared pages counted once)" "$cold_pss"
row "peak RSS MB, warm" "$warm_rss" "$(th thumbor_warm_peak_rss_mb)" "$(vips vips_warm_cached_peak_rss_mb)"
echo
echo "- webimage serve decodes in $(nproc) sandboxed workers (isolation, the default); the cold peak RSS is the server's ($cold_server_rss MB) and its workers' summed; $warm_workers workers were running after the warm run (they decoded the priming requests; the measured warm requests are answered from the response cache, sources below)"
[ -n "$warm_instructions" ] && echo "- webimage serve, one warm answer: $warm_instructions"
echo "- webimage serve, requests by status and result source: cold $cold_sources; warm $warm_sources (primed $primed/200)${avif_sources:+; cold f:avif $avif_sources}"
echo "- targets: cold >= 3x thumbor's requests/s, warm >= 10x, p99 lower in both, peak RSS under 300 MB; against libvips no row slower than 1.25x cold, 0.76x warm (before the hardening); cold with isolation >= 0.95x without"
[ -s "$tmp/vips.txt" ] && echo "- libvips: $(grep -E '^(machine|vips_(cold|warm|warm_cached)_worker_cpu_s|vips_warm_primed|vips_warm_cached_primed)' "$tmp/vips.txt" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
[ -s "$tmp/thumbor.txt" ] && echo "- thumbor: $(grep -E '^(machine|thumbor_(cold|warm)_worker_cpu_s|thumbor_warm_primed)' "$tmp/thumbor.txt" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
true
