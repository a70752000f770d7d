# test_vlm_generate.sh -- prompts with images, end to end, against
# llama.cpp's libmtmd + libllama (pl_mtmd generate): the greedy ids of
# `pocketllm run --mmproj --image` identical to llama.cpp's up to its first
# undecidable step (a near-tie by its own margins, or a step where its
# plain and flash-attention runs part), with one image and with two, f16
# and Q4_K_M text weights, and a text-only prompt on the same checkpoint.
# The prompt's layout (text ids, each image token as -1) must be
# identical too, and the teacher-forced logits of llama.cpp's sequence
# (through the C API: tests/tools/pl_vlm_logits.c) must agree on the
# argmax at every step llama.cpp decides by more than the margin, with the
# largest difference within a bound of llama.cpp's logit range (f16: 1e-3,
# measured 4e-4; Q4_K_M: 2e-2, as the text tests allow).
#
# The checkpoint: random weights at Qwen3-VL-2B's widths -- text 2048 wide,
# 16 heads (8 KV) of 128, FFN 6144, cut to 3 layers, which take 2 DeepStack
# inputs; the tower (synth --mmproj) cut to 12 of its 24 blocks, which
# keeps the 2 DeepStack taps at blocks 5 and 11.  The text model has its
# own output matrix (--untied; tied random embeddings make every step
# repeat the input token by a margin of hundreds, whatever the image) and
# synth's byte-level vocabulary rather than the real 151936 ids (the text
# tests cover that width), so that the test takes seconds per run.
#
# The images decode to the same pixels on both sides: PNGs (stb and
# libpng decode them exactly) -- the bundle's test-1.jpeg as libmtmd's stb
# decodes it (pl_mtmd preprocess --out-rgb) written out as a PNG, and a
# generated one.  Images are kept small (--image-max-tokens 16) for time.
#
# Runs our side on $PL_DEVICE when set; the ids check is vision_lib.sh's,
# shared with test_vulkan_vlm_generate.sh.
. "$(dirname "$0")/mtmd_lib.sh"
. "$(dirname "$0")/forward_lib.sh"
. "$(dirname "$0")/vision_lib.sh"
JPEG=$LLAMA_SRC/tools/mtmd/test-1.jpeg
[ -f "$JPEG" ] || { echo "FAIL: no $JPEG in the llama.cpp bundle" >&2; exit 1; }
N=16
MAX_TOKENS=16

TEXT=(--arch qwen3vl --n-layer 3 --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 6144 --untied --quiet)
expect_rc 0 "$BIN" synth "${TEXT[@]}" --type f16 --seed 11 "$PL_TMP/text-f16.gguf" || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/mmproj.gguf" --vision-layers 12 --type f16 --seed 7 --quiet ||
    { done_testing; exit 1; }
expect_rc 0 "$BIN" quantize "$PL_TMP/text-f16.gguf" "$PL_TMP/text-q4km.gguf" Q4_K_M --quiet
MMPROJ=$PL_TMP/mmproj.gguf
expect_rc 0 "$BIN" inspect "$PL_TMP/text-f16.gguf" && expect_grep "n_deepstack_layers                     2" "$PL_TMP/out"
expect_rc 0 "$PL_MTMD" info "$PL_TMP/text-f16.gguf" "$MMPROJ" && expect_grep "n_deepstack 2" "$PL_TMP/out"

# the images: test-1.jpeg's stb pixels as a PNG, and a generated 200x120
expect_rc 0 "$PL_MTMD" preprocess "$PL_TMP/text-f16.gguf" "$MMPROJ" "$JPEG" --out-rgb "$PL_TMP/photo.rgb" \
    --out "$PL_TMP/photo.f32" --max-tokens $MAX_TOKENS
W=$(awk '$1 == "width" {print $2}' "$PL_TMP/out")
H=$(awk '$1 == "height" {print $2}' "$PL_TMP/out")
PYTHONPATH=$PNG_PATH python3 - "$PL_TMP" "$W" "$H" >"$PL_TMP/gen" 2>&1 <<'EOF'
import random, sys
from pngfile import write_png
out, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rgb = open(f"{out}/photo.rgb", 'rb').read()
write_png(f"{out}/photo.png", w, h, rgb)
rnd = random.Random(5)
gw, gh = 200, 120
gen = bytes(v for y in range(gh) for x in range(gw)
            for v in (((x * 4) ^ y) & 255, (y * 2 + rnd.randrange(64)) & 255, (x * y // 50) & 255))
write_png(f"{out}/gen.png", gw, gh, gen)
print(f"photo.png {w}x{h} (test-1.jpeg as stb decodes it), gen.png {gw}x{gh}")
EOF
script_verdict $? "$PL_TMP/gen" "could not write the test images"

# vlm_check NAME MODEL MARGIN MAX_REL PROMPT IMAGE... : vlm_ids_check, then
# the teacher-forced logits along llama.cpp's sequence
VLM_REF_ARGS=(--out-logits "$PL_TMP/vlm.ref.f32")
vlm_check() {
    local name=$1 model=$2 margin=$3 max_rel=$4 prompt=$5
    shift 5
    local t=$PL_TMP/vlm f
    vlm_ids_check "$name" "$model" "$margin" "$prompt" "$@" || return 1
    # the logits along llama.cpp's sequence, through the C API: the photo
    # as its raw pixels (pocketllm_image_from_rgb), the others from files
    local tool_imgs=()
    for f in "$@"; do
        if [ "$f" = "$PL_TMP/photo.png" ]; then tool_imgs+=(--rgb "$PL_TMP/photo.rgb" "$W" "$H")
        else tool_imgs+=(--image "$f"); fi
    done
    expect_rc 0 "$PL_TOOLS/pl_vlm_logits" "$model" "$MMPROJ" --prompt "$prompt" "${tool_imgs[@]}" --ids "$(cat "$t.ref.ids")" \
        --out "$t.ours.f32" --flash-attn "$FA" --image-max-tokens $MAX_TOKENS ${PL_DEVICE:+--device "$PL_DEVICE"} ||
        return 1
    local vocab
    vocab=$(awk '{print $4}' "$PL_TMP/out")
    "$COMPARE" logits "$t.ours.f32" "$t.ref.f32" "$vocab" --margin "$margin" --max-rel-diff "$max_rel" >"$t.cmp"
    local rc=$?
    ok
    echo "$name: $(head -1 "$t.cmp")" >&2
    [ $rc = 0 ] || fail "$name: teacher-forced logits disagree: $(cat "$t.cmp")"
}

for w in f16 q4km; do
    margin=$([ $w = f16 ] && echo 0.02 || echo 0.2)
    max_rel=$([ $w = f16 ] && echo 1e-3 || echo 2e-2)
    m=$PL_TMP/text-$w.gguf
    [ -f "$m" ] || continue
    vlm_check "one image, $w" "$m" "$margin" "$max_rel" "What is in this picture?" "$PL_TMP/photo.png"
    vlm_check "two images, $w" "$m" "$margin" "$max_rel" "Compare <__media__> with <__media__>, please." \
        "$PL_TMP/photo.png" "$PL_TMP/gen.png"
    greedy_check "text only, $w" "$m" f16 "$margin" $N --prompt "What is in this picture?"
done

# what is refused, with the reason: markers that do not match the images
# (with the tower, a marker always means an image), an image without the
# tower, an image in a context too small for it
expect_rc 1 "$BIN" run --model "$PL_TMP/text-f16.gguf" --mmproj "$MMPROJ" --image "$PL_TMP/gen.png" \
    --prompt "a <__media__> b <__media__>" -n 1 && expect_grep "2 image markers" "$PL_TMP/err"
expect_rc 1 "$BIN" run --model "$PL_TMP/text-f16.gguf" --mmproj "$MMPROJ" --prompt "a <__media__>" -n 1 &&
    expect_grep "1 image marker" "$PL_TMP/err"
expect_rc 2 "$BIN" run --model "$PL_TMP/text-f16.gguf" --image "$PL_TMP/gen.png" --prompt x -n 1 &&
    expect_grep "--mmproj" "$PL_TMP/err"
expect_rc 1 "$BIN" run --model "$PL_TMP/text-f16.gguf" --mmproj "$MMPROJ" --image "$PL_TMP/photo.png" --ctx 16 \
    --prompt x -n 1 && expect_grep "context" "$PL_TMP/err"
done_testing
