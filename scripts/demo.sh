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
# --static-swift-stdlib: the Swift runtime and Foundation are linked in, so the binary runs where
# no toolchain is installed (a larger binary and a longer link: Benchmarks/README.md, "Figures once
# in source comments"). Every script builds the CLI with the same flags: a change of flags rebuilds
# everything.
swift build -c release --product webimage --static-swift-stdlib --no-color-diagnostics
.build/release/webimage demo "$@"
