# tok_lib.sh -- shared by the tokenizer oracle tests (test_tok_*.sh): the
# vocabularies compared with llama.cpp and where their files are.
. "$(dirname "$0")/lib.sh"
MODELS=$LLAMA_SRC/models
STORIES=$PL_SHARED/models/stories260K.gguf
# the vocabularies the issue names, then the bundle's others we also load
TOK_VOCABS="qwen2 llama-bpe gpt-2 deepseek-llm deepseek-coder falcon starcoder refact qwen35 llama-spm phi-3 stories260K"
TOK_EXTRA="aquila baichuan gpt-neox mpt command-r"
TOOL=$PL_TOOLS/pl_tok_tool
GEN=$PL_TOOLS/pl_tok_gen

# vocab_file NAME: the GGUF of a vocabulary name
vocab_file() {
    if [ "$1" = stories260K ]; then echo "$STORIES"; else echo "$MODELS/ggml-vocab-$1.gguf"; fi
}

for f in "$TOOL" "$GEN"; do
    [ -x "$f" ] || { echo "FAIL: $f is not built" >&2; exit 1; }
done
[ -f "$STORIES" ] || { echo "FAIL: $STORIES is missing" >&2; exit 1; }
[ -d "$MODELS" ] || { echo "FAIL: the llama.cpp bundle's models are not at $MODELS" >&2; exit 1; }
