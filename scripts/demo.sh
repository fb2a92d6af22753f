#!/usr/bin/env bash
# The main job on its embedded default: builds the CLI and runs `webimage demo`, which serves the
# bundled sample images from a local HTTP server on 127.0.0.1 and loads them through the whole
# pipeline (network with progress and previews, memory, disk, thumbnails). No internet needed.
# Extra arguments go to `webimage demo` (e.g. --port 9000, -o thumbnails/).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install-deps.sh
# --no-color-diagnostics: with a terminal SwiftPM would add -color-diagnostics to every compile
# command, and switching between a terminal and a pipe would rebuild every module.
swift build -c release --product webimage --no-color-diagnostics
.build/release/webimage demo "$@"
