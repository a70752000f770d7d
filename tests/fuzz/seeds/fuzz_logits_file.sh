#!/usr/bin/env bash
# Seeds for fuzz_logits_file: a tiny model's saved log-probabilities over a
# short text, in the f32 and the u16 (llama.cpp) layout.
set -euo pipefail
b="$2/build-asan"
"$b/pocketllm" synth --quiet --shape tiny --n-layer 1 "$1/.model.gguf"
for t in f32 u16; do
    "$b/pocketllm" perplexity --quiet --model "$1/.model.gguf" --file "$2/tests/oracle/data/eval_story.txt" \
        --ctx 16 --chunks 2 --save-logits "$1/tiny.$t" --logits-type "$t" >/dev/null
done
rm -f "$1/.model.gguf"
