# test_audio_tower.sh -- PocketLLM's Qwen3-ASR audio tower
# (src/audio/audio_tower_*.c) against libmtmd's, embedding for embedding,
# for random-weight pairs of `pocketllm synth --shape qwen3asr-* --mmproj`
# (the real Qwen3-ASR shapes; the audio conv kernels and conv_out f16 as the
# converter writes them, the other matrices f32 or f16).
#
# Both towers get the same mel: `pl_mtmd audio-encode --out-mel` writes the
# windows libmtmd's preprocessor made of the clip (800 frames each, the last
# padded to a multiple of 100), `pl_audio_tower` encodes exactly those, so
# what differs is the tower alone (our front end against libmtmd's is
# test_audio_mel.sh).  `pl_mtmd audio-encode --out` gives libmtmd's
# embeddings of every audio chunk.  The bounds, per token: cosine similarity
# >= 0.9999, and the largest absolute difference at most MAX_ABS_F32 (1e-4)
# with f32 tower matrices and MAX_ABS_F16 (5e-3) with f16 ones.  Measured on
# the CPU (AVX-512, two threads), outputs up to 2.6 in magnitude: the
# smallest cosine 1.0000000 (f32) and 0.9999998 (f16), the largest
# difference 1.5e-5 (f32) and 1.6e-3 (f16).  The f16 side is further off
# because both sides round the activations to f16 for every f16 matmul and
# a last-bit difference before the rounding becomes an f16 step.
#
# Clips, made here: 4 s and 31 s of espeak-ng speech at 16 kHz mono (401
# frames: one window padded to 500; four windows, the last one padded) and the bundle's
# tools/mtmd/test-2.mp3 (17.4 s: windows of 800, 800 and 200 frames).
# Shapes: the 0.6B pair (its text model cut to one layer) with all 18
# encoder blocks, f32 and f16, on the 4 s clip and (f16) on the MP3; the
# 31 s clip on the tower cut to 4 blocks (f32 and f16), which keeps the test
# near a minute on two cores; the 1.7B widths once, the tower cut to 2
# blocks (its text model: the 1.7B width, a small vocabulary).  Each
# comparison prints its numbers and both sides' times (informational:
# process times, loading included).
#
# PL_DEVICE (default cpu) is the device our side runs on; libmtmd always
# runs on the CPU.
. "$(dirname "$0")/mtmd_lib.sh"
TOWER=$PL_TOOLS/pl_audio_tower
CMP=$PL_TOOLS/pl_vision_encode
for t in "$TOWER" "$CMP"; do
    [ -x "$t" ] || { echo "FAIL: no $t (a helper program of the build)" >&2; exit 1; }
done
MP3=$LLAMA_SRC/tools/mtmd/test-2.mp3
[ -f "$MP3" ] || { echo "FAIL: no $MP3 in the llama.cpp bundle" >&2; exit 1; }
for t in espeak-ng sox; do
    command -v $t >/dev/null || { echo "FAIL: $t is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
DEVICE=${PL_DEVICE:-cpu}
THREADS=2
MAX_ABS_F32=${MAX_ABS_F32:-1e-4}
MAX_ABS_F16=${MAX_ABS_F16:-5e-3}

# clips: espeak-ng's 22 kHz speech resampled to 16 kHz mono, padded with
# silence to the length
speech() {
    local out=$1 secs=$2 text=$3
    espeak-ng -w "$PL_TMP/raw.wav" "$text" 2>"$PL_TMP/err" &&
        sox "$PL_TMP/raw.wav" -r 16000 -c 1 -b 16 "$out" pad 0 "$secs" trim 0 "$secs" 2>>"$PL_TMP/err"
}
ok
speech "$PL_TMP/a4.wav" 4 "The quick brown fox jumps over the lazy dog near the river bank." ||
    fail "could not make the 4 s clip: $(head -c 400 "$PL_TMP/err")"
ok
speech "$PL_TMP/a31.wav" 31 "Once upon a time, in a small village by the sea, there lived an old fisherman who went \
out every morning before dawn. He would row his little boat past the rocks and cast his nets into the cold grey \
water. Most days he caught only a few fish, but he never complained. One morning, as the sun rose over the hills, \
he felt a heavy pull on his net." || fail "could not make the 31 s clip: $(head -c 400 "$PL_TMP/err")"

# the pairs
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --n-layer 1 --type f16 --seed 3 --quiet "$PL_TMP/text06.gguf"
for type in f32 f16; do
    expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/tower18-$type.gguf" --type $type --seed 11 --quiet
    expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/tower4-$type.gguf" --audio-layers 4 \
        --type $type --seed 12 --quiet
done
expect_rc 0 "$PL_BIN" synth --arch qwen3vl --n-embd 2048 --n-layer 1 --n-head 16 --n-head-kv 8 --head-dim 128 \
    --n-ff 512 --quiet "$PL_TMP/text17.gguf"
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-1.7b --mmproj "$PL_TMP/tower17-2-f16.gguf" --audio-layers 2 --type f16 \
    --seed 13 --quiet

# audio_compare TEXT TOWER CLIP MAX_ABS : the tower's embeddings, ours ($TOWER
# on $DEVICE) against libmtmd's (CPU), on libmtmd's mel of CLIP
audio_compare() {
    local text=$1 tower=$2 clip=$3 max_abs=$4
    local what t0 t1 t2 lens n_embd
    what="$(basename "$clip") on $(basename "$tower" .gguf)"
    [ "$DEVICE" = cpu ] || what="$DEVICE: $what"
    ok
    t0=$(date +%s%N)
    if ! "$PL_MTMD" audio-encode "$text" "$tower" "$clip" --out "$PL_TMP/ref.f32" --out-mel "$PL_TMP/mel.f32" \
            -t $THREADS >"$PL_TMP/ref" 2>"$PL_TMP/err"; then
        fail "pl_mtmd audio-encode $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    t1=$(date +%s%N)
    lens=$(awk '$1 == "mel" {printf "%s%s", s, $2; s = ","}' "$PL_TMP/ref")
    ok
    if ! "$TOWER" "$text" "$tower" "$PL_TMP/mel.f32" --lens "$lens" --out "$PL_TMP/ours.f32" --threads $THREADS \
            --device "$DEVICE" >"$PL_TMP/ours" 2>"$PL_TMP/err"; then
        fail "pl_audio_tower $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    t2=$(date +%s%N)
    ok
    [ "$(grep -E '^(tokens|n_embd) ' "$PL_TMP/ours")" = "$(grep -E '^(tokens|n_embd) ' "$PL_TMP/ref")" ] ||
        fail "$what: windows/tokens/width differ: ours $(tr '\n' ' ' <"$PL_TMP/ours"), libmtmd $(tr '\n' ' ' <"$PL_TMP/ref")"
    n_embd=$(awk '$1 == "n_embd" {print $2}' "$PL_TMP/ref")
    ok
    if "$CMP" compare "$PL_TMP/ours.f32" "$PL_TMP/ref.f32" "$n_embd" 1 --max-abs "$max_abs" >"$PL_TMP/cmp" 2>&1; then
        echo "$what (windows $lens, $(awk '$1 == "tokens" {n += $2} END {print n}' "$PL_TMP/ref") tokens;" \
             "ours $(( (t2 - t1) / 1000000 )) ms, libmtmd $(( (t1 - t0) / 1000000 )) ms, each with its loading):" >&2
        sed 's/^/    /' "$PL_TMP/cmp" >&2
    else
        fail "$what: $(cat "$PL_TMP/cmp")"
    fi
}

audio_compare "$PL_TMP/text06.gguf" "$PL_TMP/tower18-f32.gguf" "$PL_TMP/a4.wav" "$MAX_ABS_F32"
audio_compare "$PL_TMP/text06.gguf" "$PL_TMP/tower18-f16.gguf" "$PL_TMP/a4.wav" "$MAX_ABS_F16"
audio_compare "$PL_TMP/text06.gguf" "$PL_TMP/tower18-f16.gguf" "$MP3" "$MAX_ABS_F16"
audio_compare "$PL_TMP/text06.gguf" "$PL_TMP/tower4-f32.gguf" "$PL_TMP/a31.wav" "$MAX_ABS_F32"
audio_compare "$PL_TMP/text06.gguf" "$PL_TMP/tower4-f16.gguf" "$PL_TMP/a31.wav" "$MAX_ABS_F16"
audio_compare "$PL_TMP/text17.gguf" "$PL_TMP/tower17-2-f16.gguf" "$PL_TMP/a4.wav" "$MAX_ABS_F16"

# a bad pair is an error, not a crash: the 1.7B tower with the 0.6B text
# model (the widths differ), and a text model given as the mmproj
printf '\0\0\200\77%.0s' $(seq 1 12800) >"$PL_TMP/mel1.f32" # 128 x 100 floats of 1.0
expect_rc 2 "$TOWER" "$PL_TMP/text06.gguf" "$PL_TMP/tower17-2-f16.gguf" "$PL_TMP/mel1.f32" --lens 100 \
    --out "$PL_TMP/x.f32" --device "$DEVICE" && expect_grep "not a pair" "$PL_TMP/err"
expect_rc 2 "$TOWER" "$PL_TMP/text06.gguf" "$PL_TMP/text06.gguf" "$PL_TMP/mel1.f32" --lens 100 \
    --out "$PL_TMP/x.f32" --device "$DEVICE" && expect_grep "no audio encoder" "$PL_TMP/err"
done_testing
