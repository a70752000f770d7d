#!/usr/bin/env bash
# build-aarch64.sh -- cross-build PocketLLM for 64-bit ARM Linux on Debian 12
# x86-64: the library, the CLI and the test binaries into build-aarch64/
# (linked against Debian's arm64 multiarch libraries), and a statically
# linked CLI, build-aarch64/static/pocketllm, that runs on any aarch64 Linux
# (a board, or Android under Termux) with nothing installed.
#
# Installs what it needs when missing (as root): gcc-aarch64-linux-gnu,
# qemu-user-static (to run the tests), the arm64 development packages of
# cJSON, libmicrohttpd, libjpeg-turbo, libpng (and zlib) and libwebp
# (Debian multiarch: dpkg --add-architecture arm64; the image libraries'
# own .a archives serve the static CLI),
# and for the static CLI the Debian sources of both, built here without
# TLS (Debian's libmicrohttpd needs GnuTLS, whose static closure Debian does
# not ship).  Everything is cached under build-aarch64/.
#
#   PL_AARCH64_STATIC=0      skip the static CLI
#   PL_AARCH64_VULKAN=OFF    build without the Vulkan backend (default AUTO:
#                            with it when glslc and the Vulkan headers are here)
#   PL_AARCH64_TARGETS="a b" build only these targets of the dynamic tree
#                            (scripts/test.sh: what the emulated tests run)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/build-aarch64"
JOBS=$(nproc)

need=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v file >/dev/null 2>&1 || need+=(file)
have_arm64() { dpkg-query -W -f='${Status}' "$1:arm64" 2>/dev/null | grep -q "install ok installed"; }
arm64=()
have_arm64 libcjson-dev || arm64+=(libcjson-dev:arm64)
have_arm64 libmicrohttpd-dev || arm64+=(libmicrohttpd-dev:arm64)
# the image decoders (their .a archives too, for the static CLI; zlib for libpng's)
for p in libjpeg62-turbo-dev libpng-dev libwebp-dev zlib1g-dev; do have_arm64 $p || arm64+=($p:arm64); done
if [ ${#need[@]} -gt 0 ] || [ ${#arm64[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "build-aarch64: missing packages (${need[*]} ${arm64[*]}) and not root; run as root" >&2
    exit 1
  fi
  echo "build-aarch64: installing ${need[*]} ${arm64[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if [ ${#arm64[@]} -gt 0 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
  fi
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${need[@]}" "${arm64[@]}" >/dev/null
fi

# ---- the dynamic build: library, CLI, tests ---------------------------------
# (PL_AUDIO_DECODE=OFF: no audio decoders -- Debian ships no libsndfile.a or
# libsoxr.a for the static CLI, and the dynamic tree matches it; audio then
# comes in as 16 kHz PCM, pocketllm_audio_from_pcm)
cmake -S . -B "$OUT" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DPOCKETLLM_VULKAN="${PL_AARCH64_VULKAN:-AUTO}" -DPL_AUDIO_DECODE=OFF >/dev/null
targets=()
for t in ${PL_AARCH64_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$OUT" -j "$JOBS" "${targets[@]}"
file -L "$OUT/pocketllm" "$OUT/libpocketllm.so"

[ "${PL_AARCH64_STATIC:-1}" = 0 ] && exit 0

# ---- the static CLI -----------------------------------------------------------
DEPS="$OUT/static-deps"
SYSROOT="$DEPS/root"
if [ ! -f "$SYSROOT/lib/libmicrohttpd.a" ] || [ ! -f "$SYSROOT/lib/libcjson.a" ]; then
  bash "$ROOT/scripts/build-aarch64-deps.sh" "$DEPS"
fi
cmake -S . -B "$OUT/static" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DPOCKETLLM_STATIC_CLI=ON -DPOCKETLLM_TESTS=OFF -DPOCKETLLM_VULKAN=OFF -DPL_AUDIO_DECODE=OFF \
  -DCJSON_LIB="$SYSROOT/lib/libcjson.a" -DCJSON_INCLUDE="$SYSROOT/include" \
  -DMHD_LIB="$SYSROOT/lib/libmicrohttpd.a" -DMHD_INCLUDE="$SYSROOT/include" >/dev/null
cmake --build "$OUT/static" -j "$JOBS" --target pocketllm_cli
# the file a user copies: without symbols (libmicrohttpd's autotools build
# carries debug info)
aarch64-linux-gnu-strip "$OUT/static/pocketllm"
file "$OUT/static/pocketllm"
