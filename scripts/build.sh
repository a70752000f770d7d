#!/usr/bin/env bash
# build.sh -- configure and build the release tree in build/ (the CLI
# build/pocketllm and the engine build/libpocketllm.so).  PL_ORACLE_DIR, when
# set, also builds the llama.cpp oracle for the tests; PL_MTMD_DIR (what
# scripts/install-mtmd.sh prints) also its multimodal one, pl_mtmd.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPL_ORACLE_DIR="${PL_ORACLE_DIR:-}" \
  -DPL_MTMD_DIR="${PL_MTMD_DIR:-}" >/dev/null
cmake --build build -j "$(nproc)"
