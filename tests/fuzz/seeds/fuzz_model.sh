#!/usr/bin/env bash
# Seeds for fuzz_model: tiny checkpoints of each architecture and weight
# type, small enough for the fuzzer's input limit.
set -euo pipefail
T="$2/build-asan/pl_tinymodel"
dims=(--n-embd 16 --n-layer 1 --n-head 2 --n-head-kv 1 --head-dim 8 --n-ff 32 --n-vocab 40)
"$T" "$1/qwen3-f32.gguf" --arch qwen3 --type f32 "${dims[@]}"
"$T" "$1/qwen3-f16-tied.gguf" --arch qwen3 --type f16 --tied "${dims[@]}"
"$T" "$1/qwen2-bf16.gguf" --arch qwen2 --type bf16 --qkv-bias "${dims[@]}"
"$T" "$1/llama-q8_0.gguf" --arch llama --type q8_0 --n-rot 4 --rope-freqs --n-embd 32 --n-layer 1 --n-head 2 \
    --n-head-kv 1 --head-dim 16 --n-ff 32 --n-vocab 40
