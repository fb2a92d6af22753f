#!/usr/bin/env bash
# Starts a real nginx on 127.0.0.1 (HTTP/1.1 with keep-alive and gzip, HTTPS with HTTP/2 and a
# self-signed certificate made now) over sample files, and runs the loader's integration tests
# against it. Installs nginx-light and openssl when missing. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nginx >/dev/null || ! command -v openssl >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq nginx-light openssl >/dev/null
fi
work=$(mktemp -d)
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/root"
chmod 755 "$work" "$work/root"   # nginx workers run as an unprivileged user
cp Sources/webimage/Samples/* "$work/root/"
python3 -c "import sys; sys.stdout.write('swift-web-image gzip check\n' * 4000)" > "$work/root/text.txt"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" \
  -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
http_port=$(free_port); https_port=$(free_port)
cat > "$work/nginx.conf" <<NGX
worker_processes 1; daemon on; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 256; }
http {
  types { image/png png; image/jpeg jpg; image/gif gif; image/webp webp; text/plain txt; }
  log_format conn '\$connection \$connection_requests \$server_protocol \$status \$request_uri';
  access_log $work/access.log conn;
  keepalive_requests 1000;
  gzip on; gzip_types text/plain; gzip_min_length 100;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  server { listen 127.0.0.1:$http_port; root $work/root;
           # Caching headers for HTTPCachePolicyNginxTests (nginx answers If-None-Match with 304).
           location /fresh60/ { alias $work/root/; add_header Cache-Control "max-age=60"; }
           location /nostore/ { alias $work/root/; add_header Cache-Control "no-store"; }
           location /vary/ { alias $work/root/; add_header Cache-Control "max-age=600"; add_header Vary "Accept"; } }
  server { listen 127.0.0.1:$https_port ssl http2; root $work/root;
           ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem; }
}
NGX
mkdir -p "$work/tmp"
nginx -c "$work/nginx.conf"
for _ in $(seq 50); do [ -f "$work/nginx.pid" ] && break; sleep 0.1; done
WEBIMAGE_NGINX_HTTP="http://127.0.0.1:$http_port" WEBIMAGE_NGINX_HTTPS="https://127.0.0.1:$https_port" \
WEBIMAGE_NGINX_LOG="$work/access.log" swift test --skip-build --filter "NginxIntegrationTests|HTTPCachePolicyNginxTests"
