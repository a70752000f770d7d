#!/usr/bin/env bash
# install-oracle.sh -- put llama.cpp v0.4.0 (prebuilt libraries, headers,
# vocabulary files with test vectors, chat templates) into a cache outside
# the repository, from the npm package node-llama-cpp@3.21.1.  Does nothing
# when it is already there.  Prints the cache folder on stdout.
# The libraries are this machine's: linux-x64 on x86-64, linux-arm64 on an
# ARM64 board (bench/arm_kernels.sh), or POCKETLLM_ORACLE_ARCH=x64|arm64.
#   cache: ${POCKETLLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pocketllm}/llama.cpp-v0.4.0
set -euo pipefail
CACHE=${POCKETLLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pocketllm}
DIR=$CACHE/llama.cpp-v0.4.0
case "${POCKETLLM_ORACLE_ARCH:-$(uname -m)}" in
  x86_64|x64) NPM_ARCH=x64 ;;
  aarch64|arm64) NPM_ARCH=arm64 ;;
  *) echo "install-oracle: no prebuilt llama.cpp for $(uname -m) (linux x64 and arm64 only)" >&2; exit 1 ;;
esac
PKG=@node-llama-cpp/linux-$NPM_ARCH
LIBDIR=$DIR/node_modules/$PKG/bins/linux-$NPM_ARCH
if [ -f "$DIR/.complete" ] && [ -f "$LIBDIR/libllama.v0.4.0.so" ] && [ -f "$DIR/src/include/llama.h" ]; then
  echo "$DIR"
  exit 0
fi
echo "install-oracle: fetching node-llama-cpp@3.21.1 into $DIR" >&2
rm -rf "$DIR.tmp"
mkdir -p "$DIR.tmp"
(
  cd "$DIR.tmp"
  npm i -E --ignore-scripts --omit=optional --no-audit --no-fund \
    node-llama-cpp@3.21.1 "$PKG@3.21.1" >&2
  git -c advice.detachedHead=false clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle src >&2
)
[ -f "$DIR.tmp/node_modules/$PKG/bins/linux-$NPM_ARCH/libllama.v0.4.0.so" ] || {
  echo "install-oracle: the npm package has no prebuilt libllama" >&2; exit 1; }
rm -rf "$DIR"
mv "$DIR.tmp" "$DIR"
touch "$DIR/.complete"
echo "$DIR"
