#!/usr/bin/env bash
# install-deps.sh -- install the Debian packages PocketLLM needs to build and
# test, only those that are missing (so a ready machine is not touched).
# Run as root on Debian 12.  Each package and why: see README "Dependencies".
set -euo pipefail

PACKAGES=(
  gcc make cmake pkg-config      # the build
  g++                            # llama.cpp's libmtmd, compiled from the bundle for the oracle tests (scripts/install-mtmd.sh)
  clang libclang-rt-14-dev       # libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer
  libcjson-dev                   # JSON output of the CLI (and the server's requests)
  libmicrohttpd-dev              # the HTTP server of `pocketllm serve`
  libjpeg62-turbo-dev libpng-dev libwebp-dev # image input: JPEG, PNG and WebP decoding (src/vision/image_*.c)
  imagemagick                    # the image tests' reference decoder and test-image writer (tests only)
  libsndfile1-dev libsoxr-dev    # audio input: WAV/FLAC/Ogg/MP3 decoding (libsndfile) and resampling to 16 kHz (libsoxr) (src/audio/)
  sox espeak-ng                  # the audio tests' reference resampler and converter, and their speech (tests only)
  binutils                       # nm: the export check
  python3                        # test scripts (JSON checks)
  python3-jinja2                 # the reference renderer of the chat-template tests (tests only)
  python3-prometheus-client      # the Prometheus text-format parser the /metrics test reads the page with (tests only)
  python3-jsonschema             # the validator of the structured-output tests (tests only)
  python3-setuptools python3-wheel python3-venv # the Python binding's wheel (scripts/build-wheel.sh) and the venv it is tested in
  python3-pytest                 # the Python binding's tests (tests/python, tests only)
  python3-numpy                  # the binding's array results are tested with numpy too (optional for users)
  unicode-data                   # Unicode Character Database: the tokenizer's tables are generated from it at build time
  glslc libvulkan-dev            # the Vulkan backend's build: GLSL -> SPIR-V compiler, Vulkan headers
  libvulkan1 mesa-vulkan-drivers # the Vulkan tests: the loader and Mesa's lavapipe (a Vulkan device on the CPU)
  git nodejs npm                 # fetching the llama.cpp oracle (npm package, git bundle)
  chromium                       # the chat page's browser test, driven headless by puppeteer-core (tests only)
  ca-certificates
)

# a package counts as present when dpkg has it or, for the tools below, when
# the command is already on the PATH (a machine may carry its own Node.js)
declare -A COMMAND_FOR=([nodejs]=node [npm]=npm [git]=git [cmake]=cmake [clang]=clang)
missing=()
for p in "${PACKAGES[@]}"; do
  if [ -n "${COMMAND_FOR[$p]:-}" ] && command -v "${COMMAND_FOR[$p]}" >/dev/null 2>&1; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing packages (${missing[*]}) and not root; run as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
