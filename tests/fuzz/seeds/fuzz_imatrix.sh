#!/usr/bin/env bash
# Seeds for fuzz_imatrix: a tiny model's importance matrix, GGUF and legacy.
set -euo pipefail
b="$2/build-asan"
"$b/pocketllm" synth --quiet --shape tiny --n-layer 1 "$1/.model.gguf"
"$b/pl_imatrix_gen" "$1/.model.gguf" "$1/tiny.imatrix" 2>/dev/null
"$b/pl_imatrix_gen" "$1/.model.gguf" "$1/tiny.dat" --legacy 2>/dev/null
rm -f "$1/.model.gguf"
