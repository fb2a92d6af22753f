#!/usr/bin/env bash
# Makes FIXTURES_DIR/photo-4000x3000.png, the 12 MP PNG the codec and modern-format rows read,
# from the anchors' photo-4000x3000.jpg, once (nothing is done when the file exists).
# Usage: photo-png.sh FIXTURES_DIR [PYTHON_WITH_PILLOW]
set -eu
fx=${1:?usage: photo-png.sh FIXTURES_DIR [PYTHON_WITH_PILLOW]}
py=${2:-/usr/bin/python3}
[ -f "$fx/photo-4000x3000.png" ] && exit 0
"$py" - "$fx/photo-4000x3000.jpg" "$fx/photo-4000x3000.png" <<'PY'
import sys
from PIL import Image
Image.open(sys.argv[1]).convert('RGB').save(sys.argv[2], compress_level=1)
PY
