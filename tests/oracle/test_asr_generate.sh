# test_asr_generate.sh -- speech in the prompt, end to end, against
# llama.cpp's libmtmd + libllama (pl_mtmd generate --audio): the greedy ids
# of `pocketllm run --mmproj --audio` identical to llama.cpp's up to its
# first undecidable step (a near-tie by its own margins, or a step where
# its plain and flash-attention runs part) -- vision_lib.sh's rule -- on a
# 4-second clip (one mel window) and a 31-second one (two windows: two
# audio chunks, positions running on across them) with f16 text weights,
# and the 31-second one with Q8_0 weights and the language forced.  The prompt is Qwen3-ASR's request as pl_asr_prompt renders it
# through the converter's chat template (the unit test test_asr checks that
# rendering): the same string, with the media marker, goes to both sides;
# also with the language forced ("language English<asr_text>" after the
# generation prompt).  The prompt's layout (text ids, each audio token as
# -1) must be identical too, and the teacher-forced logits along llama.cpp's
# sequence (through the C API: tests/tools/pl_asr_logits.c) must agree on
# the argmax at every step llama.cpp decides by more than the margin, with
# the largest difference within a bound of llama.cpp's logit range (f16:
# 1e-3, Q8_0: 2e-2 -- the bounds test_vlm_generate.sh uses).
#
# The checkpoint: random weights at Qwen3-ASR-0.6B's widths -- text 1024
# wide, 16 heads (8 KV) of 128, FFN 3072, the real 151936-id vocabulary
# slots with the ASR tokens, cut to 2 layers, its own output matrix
# (--untied: tied random embeddings repeat the input token by a wide
# margin whatever the audio); the audio tower (synth --mmproj) at its real
# widths (896, 14 heads, FFN 3584, 128 mel bins, 480 conv channels) but cut
# to 4 of its 18 blocks to keep the three llama.cpp runs per case fast
# (test_audio_tower.sh covers the whole tower against libmtmd).
#
# Clips: espeak-ng speech at 16 kHz mono 16-bit WAV (sox), so both sides
# decode the same samples (miniaudio and libsndfile read PCM WAV exactly).
. "$(dirname "$0")/mtmd_lib.sh"
. "$(dirname "$0")/forward_lib.sh"
. "$(dirname "$0")/vision_lib.sh"
command -v espeak-ng >/dev/null || { echo "FAIL: espeak-ng is not installed (scripts/install-deps.sh)" >&2; exit 1; }
command -v sox >/dev/null || { echo "FAIL: sox is not installed (scripts/install-deps.sh)" >&2; exit 1; }
N=8

expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --n-layer 2 --untied --type f16 --seed 11 --quiet "$PL_TMP/text-f16.gguf" ||
    { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/mmproj.gguf" --audio-layers 4 --type f16 --seed 7 --quiet ||
    { done_testing; exit 1; }
expect_rc 0 "$BIN" quantize "$PL_TMP/text-f16.gguf" "$PL_TMP/text-q8.gguf" Q8_0 --quiet
MMPROJ=$PL_TMP/mmproj.gguf

# the clips: 4 s and 31 s of speech
espeak-ng -w "$PL_TMP/s1.wav" "The quick brown fox jumps over the lazy dog near the river bank." 2>"$PL_TMP/err" &&
    espeak-ng -w "$PL_TMP/s2.wav" "Seven silver swans swam silently down the stream at dawn, and nobody saw them." \
        2>>"$PL_TMP/err" &&
    sox "$PL_TMP/s1.wav" -r 16000 -c 1 -b 16 "$PL_TMP/a4.wav" pad 0 4 trim 0 4 2>>"$PL_TMP/err" &&
    sox "$PL_TMP/s1.wav" "$PL_TMP/s2.wav" "$PL_TMP/s1.wav" "$PL_TMP/s2.wav" "$PL_TMP/s1.wav" "$PL_TMP/s2.wav" \
        -r 16000 -c 1 -b 16 "$PL_TMP/a31.wav" pad 0 31 trim 0 31 2>>"$PL_TMP/err"
ok
[ -s "$PL_TMP/a4.wav" ] && [ -s "$PL_TMP/a31.wav" ] || { fail "could not make the clips: $(head -c 300 "$PL_TMP/err")"; done_testing; exit 1; }

# asr_ids_check NAME MODEL MARGIN MAX_REL PROMPT AUDIO... : vision_lib.sh's
# vlm_ids_check with audio clips, then the teacher-forced logits
asr_ids_check() {
    local name=$1 model=$2 margin=$3 max_rel=$4 prompt=$5
    shift 5
    local t=$PL_TMP/asr aud=() f
    for f in "$@"; do aud+=(--audio "$f"); done
    expect_rc 0 "$PL_MTMD" generate "$model" "$MMPROJ" --prompt "$prompt" "${aud[@]}" -n $N --fa "$FA" -t 2 \
        --out-logits "$t.ref.f32" || return 1
    cp "$PL_TMP/out" "$t.ref"
    expect_rc 0 "$PL_MTMD" generate "$model" "$MMPROJ" --prompt "$prompt" "${aud[@]}" -n $N --fa "$FA_OTHER" -t 2 ||
        return 1
    cp "$PL_TMP/out" "$t.other"
    expect_rc 0 "$RUN_BIN" run --model "$model" --mmproj "$MMPROJ" "${aud[@]}" --prompt "$prompt" -n $N \
        --flash-attn "$FA" --print-ids -t 2 "${DEV_ARGS[@]}" || return 1
    cp "$PL_TMP/out" "$t.ours"
    ids_compare "$name" "$t" "$margin" audio || return 1
    local rc
    expect_rc 0 "$PL_TOOLS/pl_asr_logits" "$model" "$MMPROJ" --prompt "$prompt" "${aud[@]}" --ids "$(cat "$t.ref.ids")" \
        --out "$t.ours.f32" --flash-attn "$FA" -t 2 || return 0
    local vocab
    vocab=$(awk '{print $4}' "$PL_TMP/out")
    "$COMPARE" logits "$t.ours.f32" "$t.ref.f32" "$vocab" --margin "$margin" --max-rel-diff "$max_rel" >"$t.cmp"
    rc=$?
    ok
    echo "$name: $(head -1 "$t.cmp")" >&2
    [ $rc = 0 ] || fail "$name: teacher-forced logits disagree: $(cat "$t.cmp")"
    return 0
}

# Qwen3-ASR's request (pl_asr_prompt: the converter's chatml, an empty
# system turn, the audio as the user turn, the generation prompt)
PROMPT=$'<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<__media__><|im_end|>\n<|im_start|>assistant\n'
FORCED="${PROMPT}language English<asr_text>"
# (three cases, for the time: each is three llama.cpp loads of the pair)
asr_ids_check "4 s clip, f16" "$PL_TMP/text-f16.gguf" 0.02 1e-3 "$PROMPT" "$PL_TMP/a4.wav"
asr_ids_check "31 s clip (2 windows), f16" "$PL_TMP/text-f16.gguf" 0.02 1e-3 "$PROMPT" "$PL_TMP/a31.wav"
[ -f "$PL_TMP/text-q8.gguf" ] &&
    asr_ids_check "31 s clip, language forced, q8_0" "$PL_TMP/text-q8.gguf" 0.1 2e-2 "$FORCED" "$PL_TMP/a31.wav"

# what is refused: audio without a marker for it, audio with a vision-only
# mmproj (no audio tower)
expect_rc 1 "$BIN" run --model "$PL_TMP/text-f16.gguf" --mmproj "$MMPROJ" --audio "$PL_TMP/a4.wav" \
    --prompt "a <__media__> b <__media__>" -n 1 && expect_grep "2 audio markers" "$PL_TMP/err"
expect_rc 2 "$BIN" run --model "$PL_TMP/text-f16.gguf" --audio "$PL_TMP/a4.wav" --prompt x -n 1 &&
    expect_grep "--mmproj" "$PL_TMP/err"
done_testing
