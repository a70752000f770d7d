#!/usr/bin/env bash
# build-wheel.sh -- build the Python wheel (dist/pocketllm-*.whl): the
# package in python/pocketllm plus the built libpocketllm.so, with Debian's
# python3-setuptools and python3-wheel, no network.  The library comes from
# the build tree (scripts/build.sh first; BUILD_DIR names another tree).
# Install it with: python3 -m venv v && v/bin/pip install dist/pocketllm-*.whl
# Usage: scripts/build-wheel.sh [OUT_DIR]   (default: dist)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
OUT=${1:-$ROOT/dist}
PY=/usr/bin/python3
LIB=$BUILD/libpocketllm.so
[ -f "$LIB" ] || { echo "build-wheel: no $LIB (run scripts/build.sh first, or set BUILD_DIR)" >&2; exit 1; }
"$PY" -c "import setuptools, wheel" 2>/dev/null ||
  { echo "build-wheel: python3-setuptools and python3-wheel are needed (scripts/install-deps.sh)" >&2; exit 1; }
VERSION=$(sed -n 's/^project(pocketllm VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
STAGE=$(mktemp -d /tmp/pl_wheel.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
# a clean copy: nothing of the source tree's caches goes into the wheel
mkdir -p "$STAGE/pocketllm"
cp "$ROOT"/python/setup.py "$STAGE/"
cp "$ROOT"/python/pocketllm/*.py "$ROOT"/python/pocketllm/py.typed "$STAGE/pocketllm/"
cp "$LIB" "$STAGE/pocketllm/libpocketllm.so"
strip --strip-unneeded "$STAGE/pocketllm/libpocketllm.so" 2>/dev/null || true
mkdir -p "$OUT"
(cd "$STAGE" && POCKETLLM_VERSION=$VERSION "$PY" setup.py -q bdist_wheel -d "$OUT" >"$STAGE/log" 2>&1) ||
  { cat "$STAGE/log" >&2; echo "build-wheel: setup.py bdist_wheel failed" >&2; exit 1; }
ls "$OUT"/pocketllm-"$VERSION"-*.whl
