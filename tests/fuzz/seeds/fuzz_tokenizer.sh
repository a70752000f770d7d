#!/usr/bin/env bash
# Seeds for fuzz_tokenizer: texts for each small vocabulary (first byte
# picks it) and, for the loader mode (first byte 0xf0), the small
# vocabularies themselves as GGUF images.
set -euo pipefail
out=$1 root=$2
tool=$root/build-asan/pl_tok_tool
texts=("Hello world" "<|im_start|>user
h\xc3\xa9llo <tool_call> 123456 don't<|im_end|>" "  \t\n\n\r\n   x" "\xff\xfe\xc0\x80\xed\xa0\x80 \xe4\xb8" \
       "The  quick'S ZWJ \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9 a\xcc\x81 \xe4\xb8\x80\xe4\xba\x8c\xef\xbc\x91")
i=0
for k in 0 1 2 3 4 5 6 7 8 9; do
  for t in "${texts[@]}"; do
    printf "\\x$(printf %02x "$k")$t" >"$out/text_$i"
    i=$((i + 1))
  done
done
k=0
for kind in spm qwen2 gpt-2 deepseek-llm falcon; do
  "$tool" minivocab "$kind" "$out/v.gguf"
  { printf '\xf0'; cat "$out/v.gguf"; } >"$out/vocab_$k"
  k=$((k + 1))
done
rm -f "$out/v.gguf"
