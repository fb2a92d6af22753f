#!/usr/bin/env bash
# Installs the C libraries WebImage links (libcurl, libpng, libjpeg-turbo, libwebp, giflib,
# OpenSSL's libcrypto, lcms2 for colour management), libmemcached for the shared cache tier
# (WebImageMemcached), libavif, libheif, libjxl, librsvg, libtiff and poppler for the coder
# plug-ins (WebImageAVIF, WebImageHEIF, WebImageJXL, WebImageSVG, WebImageTIFF, WebImagePDF),
# libseccomp for the decoding workers (WebImageIsolation) and, for the tests, Debian's Pillow
# and numpy (the independent reference for the transformers), memcached servers, pdftoppm and
# avifdec, djxl and heif-convert (the references for PDF pages and deep AVIF, JPEG XL and HEIC), when they are
# missing; and, with WEBIMAGE_TEST_TOOLS=1, Pillow's AVIF, HEIF and
# JPEG XL plug-ins from PyPI in /opt/webimage-pillow-plugins (the independent readers of what the
# plug-ins encode). Sourced by the other scripts.
packages="libcurl4-openssl-dev libpng-dev libjpeg-dev libwebp-dev libgif-dev libssl-dev libdeflate-dev pkg-config python3-pil python3-numpy python3-venv libmemcached-dev memcached libavif-dev libheif-dev libjxl-dev liblcms2-dev librsvg2-dev libtiff-dev libseccomp-dev libpoppler-glib-dev poppler-utils libavif-bin libjxl-tools libheif-examples"
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
if ! { pkg-config --exists libpng libjpeg libwebp libwebpdemux libwebpmux libcurl libcrypto libmemcached libavif libheif libjxl lcms2 librsvg-2.0 libtiff-4 libseccomp poppler-glib 2>/dev/null \
       && [ -f /usr/include/gif_lib.h ] && [ -x /usr/bin/pdftoppm ] && [ -x /usr/bin/avifdec ] && [ -x /usr/bin/djxl ] && [ -x /usr/bin/heif-convert ] && [ -x /usr/bin/memcached ] && /usr/bin/python3 -c "import PIL, numpy, venv" 2>/dev/null; }; then
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq $packages >/dev/null
fi
# The libraries that decode untrusted bytes get the distribution's security fixes. apt-get installs
# a missing -dev package at the newest version, but leaves one already installed (and the library
# under it) where it was: a machine set up months ago kept libde265 1.0.11-1+deb12u2 after
# deb12u3 and deb12u4 had fixed a dozen out-of-bounds writes and reads on crafted HEVC. So the
# tests, the benchmarks (WEBIMAGE_TEST_TOOLS=1) and the image server (WEBIMAGE_UPGRADE_CODECS=1,
# scripts/serve.sh) upgrade in place those of them that are installed, once per run of a script
# (its children see WEBIMAGE_CODECS_UPGRADED); the demo does not wait for the package lists.
# Without root, only through a sudo that asks no password (a script never stops at a prompt).
if { [ "${WEBIMAGE_TEST_TOOLS:-}" = 1 ] || [ "${WEBIMAGE_UPGRADE_CODECS:-}" = 1 ]; } && [ -z "${WEBIMAGE_CODECS_UPGRADED:-}" ] \
   && command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; then
  if [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; then
    echo "install-deps: the codec libraries are not upgraded (it needs root or sudo without a password)" >&2
    codecs=""
  else
    codecs=$(dpkg-query -W -f='${binary:Package} ${db:Status-Status}\n' 2>/dev/null | awk '$2 == "installed" {print $1}' \
      | grep -E '^(libde265|libheif|libavif|libdav1d|libaom|libjxl|libwebp|libpng16|libjpeg62-turbo|libturbojpeg|libgif|librsvg2|libtiff|liblcms2|libcurl|libssl)' || true)
  fi
  if [ -n "$codecs" ]; then
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq && $sudo apt-get install -y -qq --only-upgrade $codecs >/dev/null \
      || echo "install-deps: could not upgrade the codec libraries (they stay as they are)" >&2
  fi
  export WEBIMAGE_CODECS_UPGRADED=1
fi
# Pillow's plug-ins come from PyPI: only for the tests and benchmarks (WEBIMAGE_TEST_TOOLS=1, set
# by scripts/test.sh and Benchmarks/run.sh), so that the demo needs the package mirror alone.
plugins=${WEBIMAGE_PILLOW_PLUGINS_DIR:-/opt/webimage-pillow-plugins}
if [ "${WEBIMAGE_TEST_TOOLS:-}" = 1 ] && ! "$plugins/bin/python" -c "import pillow_avif, pillow_heif, pillow_jxl" 2>/dev/null; then
  $sudo /usr/bin/python3 -m venv "$plugins"
  $sudo "$plugins/bin/pip" install -q --disable-pip-version-check \
    pillow==13.0.0 pillow-avif-plugin==1.6.0 pillow-heif==1.8.1 pillow-jxl-plugin==1.3.8
fi
# Public test images for the BMP, ICO and TIFF decoders: Pillow's own suite (bmpsuite, its icons
# and TIFFs) from the Pillow 11.0.0 source archive on PyPI, unpacked into
# /opt/webimage-pillow-suite (tests only; nothing is copied into the project).
suite=${WEBIMAGE_PILLOW_SUITE_DIR:-/opt/webimage-pillow-suite}
if [ "${WEBIMAGE_TEST_TOOLS:-}" = 1 ] && [ ! -f "$suite/.complete" ]; then
  archive=$(mktemp -d)
  "$plugins/bin/pip" download -q --disable-pip-version-check --no-binary :all: --no-deps pillow==11.0.0 -d "$archive"
  $sudo mkdir -p "$suite"
  $sudo tar xzf "$archive/pillow-11.0.0.tar.gz" -C "$suite" --strip-components=3 --wildcards \
    'pillow-11.0.0/Tests/images/bmp/*' 'pillow-11.0.0/Tests/images/*.ico' 'pillow-11.0.0/Tests/images/*.tif' \
    'pillow-11.0.0/Tests/images/*.tiff'
  $sudo touch "$suite/.complete"
  rm -rf "$archive"
fi
