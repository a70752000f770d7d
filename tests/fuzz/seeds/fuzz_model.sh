#!/usr/bin/env bash
# Seeds for fuzz_model: tiny checkpoints of each architecture (the mixtures
# of experts too) and weight type, small enough for the fuzzer's input limit.
set -euo pipefail
T="$2/build-asan/pl_tinymodel"
dims=(--n-embd 16 --n-layer 1 --n-head 2 --n-head-kv 1 --head-dim 8 --n-ff 32 --n-vocab 40)
"$T" "$1/qwen3-f32.gguf" --arch qwen3 --type f32 "${dims[@]}"
"$T" "$1/qwen3-f16-tied.gguf" --arch qwen3 --type f16 --tied "${dims[@]}"
"$T" "$1/qwen2-bf16.gguf" --arch qwen2 --type bf16 --qkv-bias "${dims[@]}"
"$T" "$1/llama-q8_0.gguf" --arch llama --type q8_0 --n-rot 4 --rope-freqs --n-embd 32 --n-layer 1 --n-head 2 \
    --n-head-kv 1 --head-dim 16 --n-ff 32 --n-vocab 40
# mixtures of experts: 4 experts, 2 a token; qwen2moe with its shared expert
"$T" "$1/qwen3moe-f16.gguf" --arch qwen3moe --type f16 --n-expert 4 --n-expert-used 2 --n-ff-exp 16 "${dims[@]}"
"$T" "$1/qwen2moe-q8_0.gguf" --arch qwen2moe --type q8_0 --qkv-bias --n-expert 4 --n-expert-used 2 --n-ff-exp 32 \
    --n-ff-shexp 32 --n-embd 32 --n-layer 1 --n-head 2 --n-head-kv 2 --head-dim 16 --n-ff 32 --n-vocab 40
