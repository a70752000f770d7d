#!/usr/bin/env bash
# build.sh -- configure and build the release tree in build/ (the CLI
# build/pocketllm and the engine build/libpocketllm.so).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
