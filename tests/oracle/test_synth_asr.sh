# test_synth_asr.sh -- `pocketllm synth --shape qwen3asr-0.6b|1.7b [--mmproj]`
# is what llama.cpp's converter makes of Qwen3-ASR, as llama.cpp reads it:
#  - the mmproj: libmtmd loads the pair (`pl_mtmd info`) as an audio-only
#    qwen3a tower with Qwen3-ASR's audio_config -- 0.6B: d_model 896, 18
#    layers, 14 heads, FFN 3584, output 1024; 1.7B: 1024, 24, 16, 4096, 2048;
#    128 mel bins, eps 1e-5, GELU (erf) -- and the text width as its input;
#  - the text model: llama.cpp tokenizes Qwen3-ASR's prompt tokens
#    (<|audio_start|> 151669, <|audio_end|> 151670, <|audio_pad|> 151676,
#    <asr_text> 151704: the ids of its tokenizer_config.json) to their ids,
#    with the built-in vocabulary and with the bundle's qwen2 one copied;
#    BOS = EOS = <|im_end|> (151645 in the qwen2 vocabulary); and generates;
#  - --audio-layers cuts the encoder; the options that do not fit a shape
#    are refused.
. "$(dirname "$0")/mtmd_lib.sh"
BIN=$PL_BIN
VOCAB=$LLAMA_SRC/models/ggml-vocab-qwen2.gguf
[ -f "$VOCAB" ] || { echo "FAIL: no $VOCAB in the llama.cpp bundle" >&2; exit 1; }
PROMPT_TOKENS="<|audio_start|><|audio_pad|><|audio_end|><asr_text>"

# info_is FILE KEY VALUE : pl_mtmd info printed "KEY VALUE"
info_is() {
    ok
    local got
    got=$(awk -v k="$2" '$1 == k {print $2}' "$1")
    [ "$got" = "$3" ] || fail "pl_mtmd info: $2 is '$got', expected '$3' ($(tr '\n' ' ' <"$1" | head -c 400))"
}

# the 0.6B pair: text cut to one layer, the whole tower (f16)
expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --n-layer 1 --type f16 --mmproj "$PL_TMP/mm06.gguf" --type f16 \
    --seed 5 --quiet "$PL_TMP/t06.gguf"
if expect_rc 0 "$PL_MTMD" info "$PL_TMP/t06.gguf" "$PL_TMP/mm06.gguf"; then
    cp "$PL_TMP/out" "$PL_TMP/info06"
    for kv in "projector qwen3a" "vision 0" "audio 1" "mrope 1" "n_embd 896" "n_layer 18" "n_head 14" "n_ff 3584" \
              "projection_dim 1024" "mmproj_embd 1024" "n_mel_bins 128" "ffn_op gelu_erf" "eps 1e-05" \
              "audio_sample_rate 16000" "text_n_embd_inp 1024"; do
        info_is "$PL_TMP/info06" $kv
    done
fi
# the 1.7B widths: text cut to one layer, the tower to two blocks (bf16 matrices)
expect_rc 0 "$BIN" synth --shape qwen3asr-1.7b --n-layer 1 --type bf16 --vocab "$VOCAB" --mmproj "$PL_TMP/mm17.gguf" \
    --audio-layers 2 --seed 6 --quiet "$PL_TMP/t17.gguf"
if expect_rc 0 "$PL_MTMD" info "$PL_TMP/t17.gguf" "$PL_TMP/mm17.gguf"; then
    cp "$PL_TMP/out" "$PL_TMP/info17"
    for kv in "projector qwen3a" "audio 1" "n_embd 1024" "n_layer 2" "n_head 16" "n_ff 4096" "projection_dim 2048" \
              "mmproj_embd 2048" "n_mel_bins 128" "eps 1e-05" "text_n_embd_inp 2048"; do
        info_is "$PL_TMP/info17" $kv
    done
fi

# the prompt tokens, llama.cpp's tokenizer and ours; BOS/EOS; generation
for t in t06 t17; do
    want="151669 151676 151670 151704"
    if expect_rc 0 "$ORACLE" tokenize "$PL_TMP/$t.gguf" --parse-special --text "$PROMPT_TOKENS"; then
        ok
        [ "$(tr -s ' \n' '  ' <"$PL_TMP/out" | sed 's/ *$//')" = "$want" ] ||
            fail "$t: llama.cpp tokenizes the audio tokens to '$(cat "$PL_TMP/out")', expected '$want'"
    fi
    if expect_rc 0 "$BIN" tokenize --model "$PL_TMP/$t.gguf" --text "$PROMPT_TOKENS"; then
        ok
        [ "$(tr -s ' \n' '  ' <"$PL_TMP/out" | sed 's/ *$//')" = "$want" ] ||
            fail "$t: pocketllm tokenizes the audio tokens to '$(cat "$PL_TMP/out")', expected '$want'"
    fi
    expect_rc 0 "$ORACLE" greedy "$PL_TMP/$t.gguf" --prompt "hello" -n 4 --fa off --kv f16
done
# BOS = EOS = <|im_end|>: 151645 in the qwen2 vocabulary (vocab-info's first
# line: n_vocab bos eos ...); the chatml template
if expect_rc 0 "$ORACLE" vocab-info "$PL_TMP/t17.gguf" "$PL_TMP/vi"; then
    ok
    [ "$(head -1 "$PL_TMP/vi" | cut -d' ' -f1-3)" = "151936 151645 151645" ] ||
        fail "t17: vocab-info says '$(head -1 "$PL_TMP/vi")', expected n_vocab 151936, BOS = EOS = 151645"
fi
expect_rc 0 "$BIN" inspect "$PL_TMP/t17.gguf" --json && expect_grep '"n_deepstack_layers"' "$PL_TMP/out"
# Qwen3ASRTextModel.set_vocab's chatml: one user turn and the generation prompt
echo '[{"role": "user", "content": "x"}]' >"$PL_TMP/msgs.json"
printf '<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n' >"$PL_TMP/want"
for t in t06 t17; do
    if expect_rc 0 "$BIN" template --model "$PL_TMP/$t.gguf" --messages "$PL_TMP/msgs.json" --add-generation-prompt; then
        ok
        cmp -s "$PL_TMP/out" "$PL_TMP/want" || fail "$t: the template renders '$(cat "$PL_TMP/out")'"
    fi
done

# refusals: a tower option for the wrong kind of shape, a cut past the depth
expect_rc 2 "$BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/x.gguf" --vision-layers 2 &&
    expect_grep "has an audio tower" "$PL_TMP/err"
expect_rc 2 "$BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/x.gguf" --audio-layers 2 &&
    expect_grep "has no audio tower" "$PL_TMP/err"
expect_rc 2 "$BIN" synth --shape qwen3asr-1.7b --mmproj "$PL_TMP/x.gguf" --audio-layers 25 &&
    expect_grep "24 blocks" "$PL_TMP/err"
expect_rc 2 "$BIN" synth --shape qwen3asr-0.6b --audio-layers 2 "$PL_TMP/x.gguf" && expect_grep "needs --mmproj" "$PL_TMP/err"
done_testing
