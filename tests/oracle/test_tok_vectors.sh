# test_tok_vectors.sh -- llama.cpp's own tokenizer test vectors: every
# src/models/ggml-vocab-*.gguf.inp/.out pair of the v0.4.0 bundle whose
# tokenizer type we implement gives exactly the listed ids (add_special
# and parse_special off, as llama.cpp's test-tokenizer-0 runs them).  The
# bundle's vocabularies of types we do not implement (WordPiece, T5,
# Gemma 4's BPE) must be refused at load by name, and every file of the
# bundle must be in one of the two lists, so a new one cannot go unseen.
. "$(dirname "$0")/tok_lib.sh"
WITH_VECTORS="qwen2 llama-bpe gpt-2 deepseek-llm deepseek-coder falcon starcoder refact qwen35 llama-spm phi-3 mpt command-r"
NO_VECTORS="aquila baichuan gpt-neox"   # loaded; no .inp/.out shipped (covered by test_tok_diff)
REFUSED="bert-bge:'bert' gemma-4:'gemma4' nomic-bert-moe:'t5'"

for v in $WITH_VECTORS; do
    f=$(vocab_file "$v")
    expect_rc 0 "$TOOL" vectors "$f" "$f.inp" "$f.out" || continue
    expect_grep ", 0 differ" "$PL_TMP/out"
    cat "$PL_TMP/out"
done
for r in $REFUSED; do
    v=${r%%:*} name=${r#*:}
    expect_rc 1 "$PL_BIN" tokenize --model "$(vocab_file "$v")" --text x
    expect_grep "tokenizer model $name is not supported" "$PL_TMP/err"
done
# the CLI on vocabulary-only files gives llama.cpp's ids
for v in qwen2 llama-bpe llama-spm; do
    f=$(vocab_file "$v")
    text="<|im_start|>user
Hello, world! Grüße 👋🏽 <s>  x=1234567;<|im_end|>"
    expect_rc 0 "$ORACLE" tokenize "$f" --text "$text" || continue
    mv "$PL_TMP/out" "$PL_TMP/llama"
    expect_rc 0 "$PL_BIN" tokenize --model "$f" --text "$text" || continue
    ok
    cmp -s "$PL_TMP/llama" "$PL_TMP/out" || fail "$v: pocketllm tokenize '$(cat "$PL_TMP/out")', llama.cpp '$(cat "$PL_TMP/llama")'"
done
# every vocabulary of the bundle is accounted for
REFUSED_NAMES=$(echo "$REFUSED" | sed 's/:[^ ]*//g')
for f in "$MODELS"/ggml-vocab-*.gguf; do
    v=$(basename "$f" .gguf)
    v=${v#ggml-vocab-}
    ok
    case " $WITH_VECTORS $NO_VECTORS $REFUSED_NAMES " in
    *" $v "*) ;;
    *) fail "$f is in no list of this test" ;;
    esac
    if [ -f "$f.inp" ]; then
        case " $WITH_VECTORS $REFUSED_NAMES " in
        *" $v "*) ;;
        *) fail "$f has test vectors that are not checked" ;;
        esac
    fi
done
done_testing
