#!/usr/bin/env bash
# Builds the DocC static site from the top-level catalog (DocC/WebImage.docc) and the library's
# symbol graphs: `swift build` emits them, `docc convert` renders them. Fails on any warning.
# Output: .build/docs (open index.html through a static web server).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install-deps.sh
graphs=.build/symbol-graphs
# The graphs are written when the library compiles; an up-to-date build keeps the last ones.
rm -rf .build/docs
mkdir -p "$graphs"
swift build --target WebImage -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public
# Only the library's own module: the C shims and dependencies are not documented here.
find "$graphs" -name '*.symbols.json' ! -name 'WebImage.symbols.json' ! -name 'WebImage@*.symbols.json' -delete
docc convert DocC/WebImage.docc \
    --additional-symbol-graph-dir "$graphs" \
    --output-dir .build/docs \
    --fallback-display-name WebImage \
    --fallback-bundle-identifier com.webimage.WebImage \
    --transform-for-static-hosting \
    --hosting-base-path swift-web-image \
    --warnings-as-errors
echo "documentation: $PWD/.build/docs"
