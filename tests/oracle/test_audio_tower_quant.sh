# test_audio_tower_quant.sh -- `pocketllm quantize` on a Qwen3-ASR audio
# mmproj, and our tower on the quantized file against libmtmd on the same
# file:
#   1. our file equals llama.cpp's (llama-quantize's clip rule, through
#      `pl_oracle quantize-batch`), tensor by tensor and in metadata
#      (pl_quant_diff), for q8_0 (every quantizable matrix) and the Q4_K_M
#      recipe (q4_K / q6_K, and llama-quantize's fallback for the 896-wide
#      rows, which are no multiple of 256);
#   2. `pocketllm inspect` shows which audio tensors the rule quantized: the
#      blocks, conv_out and the projector; the three conv kernels stay f16
#      and the position table f32;
#   3. both towers read the same quantized weights and get the same mel
#      (`pl_mtmd audio-encode --out-mel`): per token cosine >= MIN_COS and
#      every difference <= MAX_ABS_Q.  0.9999 is not reached here: measured
#      (AVX-512, two threads, outputs up to 2.4) the smallest cosine is
#      0.99988 (q8_0) and 0.99987 (Q4_K_M), the largest difference 0.041 and
#      0.038 -- against 0.9999998 and 1.6e-3 with f16 matrices
#      (test_audio_tower.sh).  Both sides quantize the activations for the
#      quantized dot products; a last-bit difference before that rounding is
#      a whole q8 step after it, and the blocks compound it.  So the bounds
#      here are MIN_COS 0.9998 and MAX_ABS_Q 8e-2.
# The 0.6B shape, the tower cut to 4 of its 18 blocks (they are alike), a 4 s
# clip (one window of 500 frames, 65 tokens).
. "$(dirname "$0")/mtmd_lib.sh"
TOWER=$PL_TOOLS/pl_audio_tower
for t in "$TOWER" "$PL_TOOLS/pl_quant_diff"; do
    [ -x "$t" ] || { echo "FAIL: no $t (a helper program of the build)" >&2; exit 1; }
done
. "$(dirname "$0")/audio_lib.sh"
DEVICE=${PL_DEVICE:-cpu}
THREADS=2
MIN_COS=${MIN_COS:-0.9998}
MAX_ABS_Q=${MAX_ABS_Q:-8e-2}

ok
speech "$PL_TMP/a4.wav" 4 "The quick brown fox jumps over the lazy dog near the river bank." ||
    fail "could not make the 4 s clip: $(head -c 400 "$PL_TMP/err")"
T=$PL_TMP/text06.gguf M=$PL_TMP/tower4-f16.gguf
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --n-layer 1 --type f16 --seed 3 --quiet "$T"
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --mmproj "$M" --audio-layers 4 --type f16 --seed 31 --quiet

# ours, llama-quantize's recipe and options
RUNGS=("q8_0 Q8_0 --pure" "Q4_K_M Q4_K_M")
: >"$PL_TMP/jobs"
for i in "${!RUNGS[@]}"; do
    read -r ours recipe opts <<<"${RUNGS[$i]}"
    echo "$M $PL_TMP/ref$i.gguf $recipe -t 2 ${opts:-}" >>"$PL_TMP/jobs"
done
"$ORACLE" quantize-batch "$PL_TMP/jobs" >"$PL_TMP/oracle.status" 2>"$PL_TMP/oracle.err"
mapfile -t status <"$PL_TMP/oracle.status"

for i in "${!RUNGS[@]}"; do
    read -r ours recipe opts <<<"${RUNGS[$i]}"
    R=$PL_TMP/tower4-$ours.gguf
    ok
    [ "${status[$i]:-}" = ok ] ||
        fail "$ours: llama.cpp did not quantize the mmproj (${status[$i]:-no status}): $(tail -c 300 "$PL_TMP/oracle.err")"
    expect_rc 0 "$PL_BIN" quantize --quiet -t 2 "$M" "$R" "$ours" || continue
    if [ -s "$PL_TMP/ref$i.gguf" ]; then
        ok
        if "$PL_TOOLS/pl_quant_diff" "$R" "$PL_TMP/ref$i.gguf" >"$PL_TMP/bdiff" 2>&1; then
            echo "$ours: equal to llama.cpp's file ($(grep '^equal:' "$PL_TMP/bdiff"))" >&2
        else
            fail "$ours: our mmproj differs from llama.cpp's: $(head -c 400 "$PL_TMP/bdiff" | tr '\n' ' ')"
        fi
        rm -f "$PL_TMP/ref$i.gguf"
    fi
    expect_rc 0 "$PL_BIN" inspect "$R"
    awk '/^audio tower:/ { on = 1; next } on && /^[^ ]/ { on = 0 } on { $1 = $1; print }' "$PL_TMP/out" \
        >"$PL_TMP/section"
    echo "$ours: $(grep '^types\.' "$PL_TMP/section" | tr '\n' ';')" >&2
    for kv in "types.conv2d f16 x3" "types.position_embd f32 x1"; do
        ok
        grep -qx -- "$kv" "$PL_TMP/section" || fail "$ours: inspect's audio tower section lacks '$kv'"
    done
    for grp in blocks conv_out projector; do
        ok
        grep -E "^types\.$grp " "$PL_TMP/section" | grep -qv "f16\|f32" ||
            fail "$ours: the $grp were not quantized: $(grep "^types\.$grp " "$PL_TMP/section")"
    done
    audio_compare "$T" "$R" "$PL_TMP/a4.wav" "$MAX_ABS_Q" "$MIN_COS"
done
done_testing
