# Sourced by instructions.sh and warm-instructions.sh: sets `valgrind` to a valgrind of 3.20 or
# later (Debian 12's 3.19 cannot read Swift 6.3's DWARF 5; when the system's is older, 3.24 is
# built once from Debian 13's source package into ${VALGRIND_PREFIX:-/opt/valgrind-3.24}, about 2
# minutes on 2 cores) and `shim` to the preloaded library of sigsuspend-copy.c; exits the script
# that sourced it (status 0, a message on stderr) when there can be none.
valgrind_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=${VALGRIND_PREFIX:-/opt/valgrind-3.24}
sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo

usable() { "$1" --version 2>/dev/null | awk -F'[-.]' '{ exit !($2 > 3 || ($2 == 3 && $3 >= 20)) }'; }
valgrind=""
if usable valgrind; then valgrind=$(command -v valgrind)
elif usable "$prefix/bin/valgrind"; then valgrind="$prefix/bin/valgrind"
else
  echo "instructions: building valgrind 3.24 into $prefix (once)" >&2
  $sudo apt-get install -y -qq gcc make bzip2 dpkg-dev >/dev/null
  list=/etc/apt/sources.list.d/webimage-valgrind-src.sources
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    | $sudo tee "$list" >/dev/null
  work=$(mktemp -d)
  ( cd "$work" && $sudo apt-get update -qq && apt-get source --download-only -qq valgrind/trixie ) >/dev/null 2>&1 || true
  $sudo rm -f "$list"; $sudo apt-get update -qq >/dev/null 2>&1 || true
  tarball=$(ls "$work"/valgrind_3.*.orig.tar.bz2 2>/dev/null | head -1)
  [ -n "$tarball" ] || { echo "instructions: could not fetch valgrind's source; skipped" >&2; exit 0; }
  ( cd "$work" && tar xjf "$tarball" && cd valgrind-3.* && ./configure --prefix="$prefix" >/dev/null \
      && make -j"$(nproc)" >/dev/null 2>&1 && $sudo make install >/dev/null ) || { echo "instructions: valgrind's build failed; skipped" >&2; exit 0; }
  rm -rf "$work"
  valgrind="$prefix/bin/valgrind"
fi
shim=$(mktemp -d)/sigsuspend-copy.so
gcc -shared -fPIC -O2 "$valgrind_dir/sigsuspend-copy.c" -o "$shim" -ldl
