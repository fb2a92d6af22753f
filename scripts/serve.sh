#!/usr/bin/env bash
# The image server: builds the CLI and runs `webimage serve`. With no arguments it runs the demo:
# the bundled samples served as the origin on 127.0.0.1, a key made for this run, and signed URLs
# printed to open (Ctrl-C stops it). Other arguments go to `webimage serve` (e.g. --config serve.json).
set -euo pipefail
cd "$(dirname "$0")/.."
# A server decodes what strangers send: its codec libraries get their security updates first.
WEBIMAGE_UPGRADE_CODECS=1 . scripts/install-deps.sh
swift build -c release --product webimage --static-swift-stdlib --no-color-diagnostics
if [ $# -eq 0 ]; then set -- --demo; fi
exec .build/release/webimage serve "$@"
