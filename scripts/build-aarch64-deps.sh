#!/usr/bin/env bash
# build-aarch64-deps.sh DIR -- the server's two libraries as static aarch64
# archives for the statically linked CLI (scripts/build-aarch64.sh): cJSON
# and libmicrohttpd from their Debian 12 source packages (Debian's patches
# applied by dpkg-source), cross-compiled into DIR/root/{lib,include}.
# libmicrohttpd is configured without HTTPS: Debian's arm64 archive links
# GnuTLS, whose static dependencies (p11-kit, libunistring) Debian does not
# ship as archives, and `pocketllm serve` speaks plain HTTP (put a TLS proxy
# in front of it).  Needs root the first time (a deb-src entry, dpkg-dev).
set -euo pipefail
DIR=${1:?usage: build-aarch64-deps.sh DIR}
mkdir -p "$DIR/src" "$DIR/root/lib" "$DIR/root/include/cjson"
DIR=$(cd "$DIR" && pwd)
JOBS=$(nproc)

if ! command -v dpkg-source >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || { echo "build-aarch64-deps: needs dpkg-dev and make; run as root" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dpkg-dev make >/dev/null
fi
# Debian's source packages: a deb-src entry for the release the machine runs
SRC_LIST=/etc/apt/sources.list.d/pocketllm-deb-src.sources
if ! apt-get source --print-uris cjson >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || { echo "build-aarch64-deps: no deb-src entry for apt and not root" >&2; exit 1; }
  . /etc/os-release
  cat >"$SRC_LIST" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: ${VERSION_CODENAME:-bookworm}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
  apt-get update -q >/dev/null
fi

cd "$DIR/src"
for pkg in cjson libmicrohttpd; do
  if ! ls -d "$pkg"-*/ >/dev/null 2>&1; then
    echo "build-aarch64-deps: fetching the Debian source of $pkg" >&2
    apt-get source -q "$pkg" >/dev/null 2>"$pkg.log" || { cat "$pkg.log" >&2; exit 1; }
  fi
done

# cJSON: one file
CJ=$(ls -d cjson-*/ | head -1)
aarch64-linux-gnu-gcc -O2 -c "$CJ/cJSON.c" -o cJSON.o
aarch64-linux-gnu-ar rcs "$DIR/root/lib/libcjson.a" cJSON.o
cp "$CJ/cJSON.h" "$DIR/root/include/cjson/"

# libmicrohttpd: autotools, static only, no TLS
MHD=$(ls -d libmicrohttpd-*/ | head -1)
mkdir -p mhd-build
(cd mhd-build && "../$MHD/configure" --host=aarch64-linux-gnu --prefix="$DIR/root" --enable-static --disable-shared \
  --disable-https --without-gnutls --disable-curl --disable-doc --disable-examples --disable-tools >config.out 2>&1 ||
  { tail -30 config.out >&2; exit 1; })
make -C mhd-build -j "$JOBS" >mhd-build/make.out 2>&1 || { tail -30 mhd-build/make.out >&2; exit 1; }
make -C mhd-build install >mhd-build/install.out 2>&1 || { tail -30 mhd-build/install.out >&2; exit 1; }
echo "build-aarch64-deps: $DIR/root/lib/libcjson.a, $DIR/root/lib/libmicrohttpd.a" >&2
