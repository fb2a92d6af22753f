#!/usr/bin/env bash
# The anchors of the modern-format rows, measured in the same run as the rows: the reference
# tools as processes (avifdec/avifenc, heif-convert, djxl/cjxl) and Pillow's plug-ins in-process.
# Makes the fixtures first (into FIXTURES_DIR, from ../shared/bench's 12 MP photo): a 12 MP
# AVIF, HEIC and JPEG XL, and a 1024x768 PNG to encode. Prints `name value ms` lines.
# Usage: modern-anchors.sh FIXTURES_DIR
set -eu
fx=${1:?usage: modern-anchors.sh FIXTURES_DIR}
if ! command -v avifenc >/dev/null || ! command -v heif-enc >/dev/null || ! command -v cjxl >/dev/null || ! command -v hyperfine >/dev/null \
   || ! command -v rsvg-convert >/dev/null || ! command -v pdftoppm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq libavif-bin libheif-examples libjxl-tools hyperfine librsvg2-bin poppler-utils >/dev/null
fi
plugins=${WEBIMAGE_PILLOW_PLUGINS_DIR:-/opt/webimage-pillow-plugins}
py="$plugins/bin/python"
src=$fx/photo-4000x3000.jpg
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bash "$(dirname "$0")/photo-png.sh" "$fx" "$py"
[ -f "$fx/photo-1024x768.png" ] || "$py" -c "from PIL import Image; Image.open('$src').convert('RGB').resize((1024, 768), Image.LANCZOS).save('$fx/photo-1024x768.png')"
[ -f "$fx/photo-4000x3000.avif" ] || avifenc -j 2 -s 8 -d 8 -y 420 --min 20 --max 28 "$fx/photo-4000x3000.png" "$fx/photo-4000x3000.avif" >/dev/null
[ -f "$fx/photo-4000x3000.heic" ] || heif-enc -q 80 -o "$fx/photo-4000x3000.heic" "$fx/photo-4000x3000.png" >/dev/null
# The photo coded in 10 bits (issue #59's depth row).
[ -f "$fx/photo-4000x3000-10bit.avif" ] || avifenc -j 2 -s 8 -d 10 -y 420 --min 20 --max 28 "$fx/photo-4000x3000.png" "$fx/photo-4000x3000-10bit.avif" >/dev/null
[ -f "$fx/photo-4000x3000.jxl" ] || cjxl "$fx/photo-4000x3000.png" "$fx/photo-4000x3000.jxl" -d 1 -e 7 --quiet
# A JPEG XL that says 16 bits a sample, and a HEIC coded in 10 bits (from the 10-bit AVIF's
# 16-bit decode): the other depth rows.
[ -f "$fx/photo-4000x3000-16bit.jxl" ] || cjxl "$fx/photo-4000x3000.png" "$fx/photo-4000x3000-16bit.jxl" -d 1 -e 7 --override_bitdepth=16 --quiet
if [ ! -f "$fx/photo-4000x3000-10bit.heic" ]; then
  avifdec -j 2 --depth 16 "$fx/photo-4000x3000-10bit.avif" "$tmp/photo-16.png" >/dev/null
  heif-enc -q 80 -b 10 -o "$fx/photo-4000x3000-10bit.heic" "$tmp/photo-16.png" >/dev/null
fi

ms() { # median wall ms of a command, via hyperfine
  hyperfine -N -w 1 -r "${RUNS:-7}" --export-json "$tmp/h.json" "$@" >/dev/null 2>&1
  python3 -c 'import json,sys;print("%.2f"%(json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$tmp/h.json"
}
pyms() { # median ms of a Python statement with the plug-ins loaded, in-process
  "$py" - "$@" <<'PY'
import sys, time, statistics
import pillow_avif, pillow_jxl
from pillow_heif import register_heif_opener
register_heif_opener()
from PIL import Image
stmt = sys.argv[1]
ts = []
for _ in range(5):
    t = time.perf_counter(); exec(stmt, {"Image": Image}); ts.append(time.perf_counter() - t)
print("%.2f" % (statistics.median(ts) * 1000))
PY
}
echo "avif12mp_decode_avifdec_process $(ms "avifdec -j 1 $fx/photo-4000x3000.avif $tmp/a.y4m") ms"
echo "avif12mp_decode_pillow $(pyms "Image.open('$fx/photo-4000x3000.avif').convert('RGBA')") ms"
echo "heic12mp_decode_heifconvert_process $(ms "heif-convert -q 100 $fx/photo-4000x3000.heic $tmp/h.jpg") ms"
echo "heic12mp_decode_pillow $(pyms "Image.open('$fx/photo-4000x3000.heic').convert('RGBA')") ms"
echo "jxl12mp_decode_djxl_process $(ms "djxl --num_threads=0 $fx/photo-4000x3000.jxl $tmp/j.ppm --quiet") ms"
echo "jxl12mp_decode_pillow $(pyms "Image.open('$fx/photo-4000x3000.jxl').convert('RGBA')") ms"
echo "avif1024_encode_avifenc_process $(ms "avifenc -j 1 -s 6 -d 8 -y 420 --min 8 --max 8 $fx/photo-1024x768.png $tmp/o.avif") ms"
echo "avif1024_encode_pillow $(pyms "Image.open('$fx/photo-1024x768.png').save('$tmp/p.avif', quality=90, speed=6)") ms"
echo "jxl1024_encode_cjxl_process $(ms "cjxl $fx/photo-1024x768.png $tmp/o.jxl -d 1 -e 7 --num_threads=0 --quiet") ms"
echo "jxl1024_encode_pillow $(pyms "Image.open('$fx/photo-1024x768.png').save('$tmp/p.jxl', quality=90, effort=7)") ms"

# Colour (issue #35): a 12 MP JPEG tagged Display P3 (the photo, re-saved by Pillow with the
# corpus's P3 profile), decoded as stored and converted to sRGB, by libvips (pyvips, one thread,
# its own lcms2 transform) and by Pillow (ImageCms, lcms2).
p3=$fx/photo-4000x3000-p3.jpg
[ -f "$p3" ] || "$py" -c "
from PIL import Image
icc = Image.open('$(cd "$(dirname "$0")/.." && pwd)/../shared/testdata/modern/icc/png_displayp3.png').info['icc_profile']
Image.open('$src').convert('RGB').save('$p3', quality=90, icc_profile=icc)"
vvenv=${VIPS_VENV:-${TMPDIR:-/tmp}/vips-venv}
if ! "$vvenv/bin/python" -c 'import pyvips' 2>/dev/null; then
  python3 -m venv "$vvenv" && "$vvenv/bin/pip" install -q pyvips==3.2.0 pyvips-binary==8.18.7 'pillow>=10.4,<13'
fi
vipsms() { # median ms of a pyvips expression over the P3 JPEG, one libvips thread
  VIPS_CONCURRENCY=1 "$vvenv/bin/python" - "$1" "$p3" <<'PY'
import sys, time, statistics
import pyvips
pyvips.cache_set_max(0)
expr, path = sys.argv[1], sys.argv[2]
ts = []
for _ in range(5):
    t = time.perf_counter(); eval(expr, {"pyvips": pyvips, "path": path}); ts.append(time.perf_counter() - t)
print("%.2f" % (statistics.median(ts) * 1000))
PY
}
echo "p3jpeg12mp_decode_vips $(vipsms "pyvips.Image.new_from_file(path, access='sequential').copy_memory()") ms"
echo "p3jpeg12mp_decode_srgb_vips $(vipsms "pyvips.Image.new_from_file(path, access='sequential').icc_transform('srgb', embedded=True).copy_memory()") ms"
echo "p3jpeg12mp_decode_pillow $(pyms "Image.open('$p3').convert('RGBA')") ms"
echo "p3jpeg12mp_decode_srgb_pillow $(pyms "import io; from PIL import ImageCms; im = Image.open('$p3'); im.load(); ImageCms.profileToProfile(im, ImageCms.ImageCmsProfile(io.BytesIO(im.info['icc_profile'])), ImageCms.createProfile('sRGB'), outputMode='RGB').convert('RGBA')") ms"

# SVG (issue #35): the corpus's gradients document as a 256 px thumbnail, by rsvg-convert as a
# process (PNG written), the way a service without a library calls it.
svg=$(cd "$(dirname "$0")/.." && pwd)/../shared/testdata/modern/svg/gradients.svg
cp "$svg" "$fx/gradients.svg"
echo "svg256_rsvgconvert_process $(ms "rsvg-convert -w 256 -h 256 -a $fx/gradients.svg -o $tmp/s.png") ms"

# PDF (issue #59): a page holding the 1024x768 photo (Pillow's PDF writer) as a 256 px
# thumbnail, by pdftoppm as a process (PNG written).
[ -f "$fx/document.pdf" ] || "$py" -c "from PIL import Image; Image.open('$fx/photo-1024x768.png').convert('RGB').save('$fx/document.pdf', resolution=96)"
echo "pdf256_pdftoppm_process $(ms "pdftoppm -png -singlefile -scale-to 256 $fx/document.pdf $tmp/p") ms"
