# vision_lib.sh -- shared by the vision oracle tests (test_vision_tower.sh,
# test_vlm_generate.sh and their Vulkan variants): the comparisons with
# libmtmd, so that the CPU and Vulkan tests check by the same rules.
# Source it after mtmd_lib.sh (and forward_lib.sh for vlm_ids_check).
# Python heredocs of these tests import pngfile.py through $PNG_PATH.
PNG_PATH=$(dirname "$0")

# tower_compare TEXT TOWER IMAGE MAX_ABS : the tower's embeddings, every
# DeepStack set, ours ($ENC on $DEVICE, $THREADS threads) against libmtmd's
# (CPU) on IMAGE.  Both sides get libmtmd's decoded RGB bytes, so what
# differs is the tower alone.  Prints the numbers and both sides' times
# (informational: process times, loading included).
tower_compare() {
    local text=$1 tower=$2 image=$3 max_abs=$4
    local what
    what="$(basename "$image") on $(basename "$tower" .gguf)"
    [ "$DEVICE" = cpu ] || what="$DEVICE: $what"
    ok
    if ! "$PL_MTMD" preprocess "$text" "$tower" "$image" --out-rgb "$PL_TMP/rgb" --out "$PL_TMP/prep.f32" \
            >"$PL_TMP/prep" 2>"$PL_TMP/err"; then
        fail "pl_mtmd preprocess $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    local w h t0 t1 t2
    w=$(awk '$1 == "width" {print $2}' "$PL_TMP/prep"); h=$(awk '$1 == "height" {print $2}' "$PL_TMP/prep")
    ok
    t0=$(date +%s%N)
    if ! "$PL_MTMD" encode "$text" "$tower" "$image" --out "$PL_TMP/ref.f32" -t $THREADS >"$PL_TMP/ref" 2>"$PL_TMP/err"; then
        fail "pl_mtmd encode $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    t1=$(date +%s%N)
    ok
    if ! "$ENC" "$text" "$tower" --rgb "$PL_TMP/rgb" "$w" "$h" --out "$PL_TMP/ours.f32" --threads $THREADS \
            --device "$DEVICE" >"$PL_TMP/ours" 2>"$PL_TMP/err"; then
        fail "pl_vision_encode $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    t2=$(date +%s%N)
    local key a b
    for key in n_tokens nx ny n_embd; do
        ok
        a=$(awk -v k=$key '$1 == k {print $2}' "$PL_TMP/ours"); b=$(awk -v k=$key '$1 == k {print $2}' "$PL_TMP/ref")
        [ -n "$a" ] && [ "$a" = "$b" ] || fail "$what: $key is '$a' here, '$b' in libmtmd"
    done
    local sets
    sets=$(( $(awk '$1 == "n_deepstack" {print $2}' "$PL_TMP/ours") + 1 ))
    ok
    if "$ENC" compare "$PL_TMP/ours.f32" "$PL_TMP/ref.f32" 2048 "$sets" --max-abs "$max_abs" >"$PL_TMP/cmp" 2>&1; then
        echo "$what ($(awk '$1 == "n_tokens" {print $2}' "$PL_TMP/ref") tokens; ours $(( (t2 - t1) / 1000000 )) ms," \
             "libmtmd $(( (t1 - t0) / 1000000 )) ms, each with its loading):" >&2
        sed 's/^/    /' "$PL_TMP/cmp" >&2
    else
        fail "$what: $(tr '\n' ' ' <"$PL_TMP/cmp")"
    fi
}

# ids_compare NAME T MARGIN MEDIA : the comparison half of vlm_ids_check
# (and of test_asr_generate.sh's asr_ids_check) on the three runs' outputs
# $T.ref (llama.cpp), $T.other (llama.cpp, the other attention path) and
# $T.ours; MEDIA names the -1 tokens in the summary line.  Leaves
# llama.cpp's ids in $T.ref.ids.  Returns 1 where the prompt layouts
# differ, 0 otherwise (a mismatch of the ids fails the test but returns 0).
ids_compare() {
    local name=$1 t=$2 margin=$3 media=$4
    local kind
    for kind in prompt ids margins; do
        awk -v k=$kind '$1 == k {$1 = ""; print substr($0, 2)}' "$t.ref" >"$t.ref.$kind"
    done
    awk '$1 == "ids" {$1 = ""; print substr($0, 2)}' "$t.other" >"$t.other.ids"
    tr ' ' '\n' <"$t.ref.margins" >"$t.ref.margins1"
    ok
    [ "$(sed -n 1p "$t.ours")" = "$(cat "$t.ref.prompt")" ] ||
        { fail "$name: the prompt layouts differ: ours '$(sed -n 1p "$t.ours" | cut -c1-300)', llama.cpp" \
               "'$(cut -c1-300 "$t.ref.prompt")'"; return 1; }
    sed -n 2p "$t.ours" >"$t.ours.ids"
    "$COMPARE" tokens "$t.ours.ids" "$t.ref.ids" --margins "$t.ref.margins1" --margin "$margin" \
        --other "$t.other.ids" >"$t.cmp"
    local rc=$?
    ok
    echo "$name (fa $FA${PL_DEVICE:+, $PL_DEVICE}, margin $margin, $(wc -w <"$t.ref.prompt") prompt tokens of which" \
         "$(grep -o -- '-1' "$t.ref.prompt" | wc -l) $media tokens): $(cat "$t.cmp")" >&2
    [ $rc = 0 ] || fail "$name: greedy ids differ from llama.cpp's: $(cat "$t.cmp")"
    return 0
}

# vlm_ids_check NAME MODEL MARGIN PROMPT IMAGE... : `pocketllm run --mmproj
# --image` (on $PL_DEVICE when set) against pl_mtmd generate with $MMPROJ,
# $N tokens, images of at most $MAX_TOKENS tokens: the prompt's layout
# (text ids, each image token as -1) identical, the greedy ids identical up
# to llama.cpp's first undecidable step (its margin <= MARGIN, or a step
# where its run with the other attention path chose differently).
# VLM_REF_ARGS (an array, may be empty) goes to llama.cpp's first run, e.g.
# --out-logits FILE.  Leaves llama.cpp's ids in $PL_TMP/vlm.ref.ids.
# Returns 1 where it could not compare the ids, 0 otherwise (a mismatch
# fails the test but returns 0, so that later checks still run).
VLM_REF_ARGS=()
vlm_ids_check() {
    local name=$1 model=$2 margin=$3 prompt=$4
    shift 4
    local t=$PL_TMP/vlm imgs=() f
    for f in "$@"; do imgs+=(--image "$f"); done
    expect_rc 0 "$PL_MTMD" generate "$model" "$MMPROJ" --prompt "$prompt" "${imgs[@]}" -n $N --fa "$FA" -t 1 \
        --max-tokens $MAX_TOKENS "${VLM_REF_ARGS[@]}" || return 1
    cp "$PL_TMP/out" "$t.ref"
    expect_rc 0 "$PL_MTMD" generate "$model" "$MMPROJ" --prompt "$prompt" "${imgs[@]}" -n $N --fa "$FA_OTHER" -t 1 \
        --max-tokens $MAX_TOKENS || return 1
    cp "$PL_TMP/out" "$t.other"
    expect_rc 0 "$RUN_BIN" run --model "$model" --mmproj "$MMPROJ" "${imgs[@]}" --prompt "$prompt" -n $N \
        --flash-attn "$FA" --image-max-tokens $MAX_TOKENS --print-ids "${DEV_ARGS[@]}" || return 1
    cp "$PL_TMP/out" "$t.ours"
    ids_compare "$name" "$t" "$margin" image || return 1
    return 0
}

# small_vl_pair : the small pair of the emulated and lavapipe tests
# (test_vulkan_vlm_generate.sh, test_arm64_vision.sh), made by the x86 CLI:
# $MODEL, random weights at Qwen3-VL-2B's text widths (2048, 16 heads, 8 KV,
# of 128) cut to 2 layers with an FFN of 1024, untied, f16 -- one DeepStack
# input; $MMPROJ, the 2B tower cut to 6 of its 24 blocks (the tap at block
# 5), f16; and two generated PNGs, $PL_TMP/a.png (120x72) and b.png
# (40x64), of 8 to 12 tokens.  Returns 1 when something could not be made.
small_vl_pair() {
    MODEL=$PL_TMP/text-f16.gguf
    MMPROJ=$PL_TMP/mmproj.gguf
    expect_rc 0 "$BIN" synth --arch qwen3vl --n-layer 2 --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 \
        --n-ff 1024 --untied --quiet --type f16 --seed 11 "$MODEL" || return 1
    expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$MMPROJ" --vision-layers 6 --type f16 --seed 7 --quiet ||
        return 1
    PYTHONPATH=$PNG_PATH python3 - "$PL_TMP" >"$PL_TMP/gen" 2>&1 <<'EOF_PY'
import random, sys
from pngfile import write_png
out = sys.argv[1]
rnd = random.Random(5)
for name, (w, h) in (("a", (120, 72)), ("b", (40, 64))):
    write_png(f"{out}/{name}.png", w, h, bytes(v for y in range(h) for x in range(w)
        for v in (((x * 4) ^ y) & 255, (y * 2 + rnd.randrange(64)) & 255, (x * y // 50) & 255)))
print("a.png 120x72, b.png 40x64")
EOF_PY
    script_verdict $? "$PL_TMP/gen" "could not write the test images"
}
