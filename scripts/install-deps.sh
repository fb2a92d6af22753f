#!/usr/bin/env bash
# Installs the C libraries WebImage links (libcurl, libpng, libjpeg-turbo, libwebp, giflib)
# when their headers are missing. Sourced by the other scripts.
packages="libcurl4-openssl-dev libpng-dev libjpeg-dev libwebp-dev libgif-dev pkg-config"
if ! { pkg-config --exists libpng libjpeg libwebp libwebpdemux libwebpmux libcurl 2>/dev/null && [ -f /usr/include/gif_lib.h ]; }; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq $packages >/dev/null
fi
