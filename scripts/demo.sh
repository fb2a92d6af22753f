#!/usr/bin/env bash
# The main job on its embedded default: builds the CLI and runs `webimage info` over the
# sample images bundled with it (no network needed). Extra arguments go to `webimage info`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install-deps.sh
swift build -c release --product webimage
.build/release/webimage info "$@"
