#!/usr/bin/env bash
# Installs the C libraries WebImage links (libcurl, libpng, libjpeg-turbo, libwebp, giflib,
# OpenSSL's libcrypto), libmemcached for the shared cache tier (WebImageMemcached)
# and, for the tests, Debian's Pillow and memcached servers (the independent reference for the transformers), when
# they are missing. Sourced by the other scripts.
packages="libcurl4-openssl-dev libpng-dev libjpeg-dev libwebp-dev libgif-dev libssl-dev pkg-config python3-pil libmemcached-dev memcached"
if ! { pkg-config --exists libpng libjpeg libwebp libwebpdemux libwebpmux libcurl libcrypto libmemcached 2>/dev/null \
       && [ -f /usr/include/gif_lib.h ] && [ -x /usr/bin/memcached ] && /usr/bin/python3 -c "import PIL" 2>/dev/null; }; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq $packages >/dev/null
fi
