# test_vision_tower.sh -- PocketLLM's Qwen3-VL vision tower
# (src/vision/vision_*.c) against libmtmd's, embedding for embedding: the
# projection and every DeepStack set of each merged token, for random-weight
# towers of `pocketllm synth --mmproj` (the real Qwen3-VL-2B vision shape).
#
# Both sides get the same RGB bytes: `pl_mtmd preprocess --out-rgb` writes
# the image as libmtmd decoded it, and `pl_vision_encode --rgb` preprocesses
# those bytes with our preprocessing (equal to libmtmd's value for value,
# test_image_prep.sh), so what differs is the tower alone.  `pl_mtmd encode`
# gives libmtmd's embeddings for the image file.  The bounds, per token:
# cosine similarity >= 0.9999 in every set, and the largest absolute
# difference at most MAX_ABS_F16 (5e-3) with f16 tower weights and
# MAX_ABS_F32 (2.5e-3) with f32 ones.  Measured on the CPU (AVX-512, two
# threads): the smallest cosine 0.9999998 (f16) and 0.9999999 (f32), the
# largest difference 2.1e-3 (f16) and 9.5e-4 (f32), on outputs up to 3.9
# in magnitude -- the bounds leave about 2.5x.  The two sides differ in the
# order of their sums (matmul blocking, the softmax, the norms'
# reductions), and the GELU's f16 table (both sides look x up rounded to
# f16) turns a last-bit difference of x into an f16 step now and then;
# even the f32 tower's bound is set by that, not by the weights.
#
# Images: the bundle's tools/mtmd/test-1.jpeg (640x488: 300 tokens) and
# PNGs generated here (noise, gradients, stripes): 512x512 (aligned: no
# resize; a 32x32 patch grid from the 48x48 position table), 333x777,
# 3000x200 (564 tokens), 17x17 (upscaled to the 8-token minimum: 9) and
# 128x96 (12).  Shapes: the full 24 blocks (DeepStack at 5, 11 and 17:
# three sets) on the two small images; the others on the shape cut to 6
# blocks, which keeps the tap at block 5 (one set), so that the test stays
# around a minute and a half on two cores.  f16 weights on every image, f32
# on two.  Each comparison prints its numbers and both sides' times
# (informational: process times, loading included).
#
# PL_DEVICE (default cpu) is the device our side runs on, as in the Vulkan
# tests (vulkan_lib.sh sets it): libmtmd always runs on the CPU.
. "$(dirname "$0")/mtmd_lib.sh"
. "$(dirname "$0")/vision_lib.sh"
ENC=$PL_TOOLS/pl_vision_encode
[ -x "$ENC" ] || { echo "FAIL: no $ENC (a helper program of the build)" >&2; exit 1; }
JPEG=$LLAMA_SRC/tools/mtmd/test-1.jpeg
[ -f "$JPEG" ] || { echo "FAIL: no $JPEG in the llama.cpp bundle" >&2; exit 1; }
DEVICE=${PL_DEVICE:-cpu}
THREADS=2
MAX_ABS_F32=${MAX_ABS_F32:-2.5e-3}
MAX_ABS_F16=${MAX_ABS_F16:-5e-3}

# the text models only fix the pair's widths: 2048 wide, with as many
# DeepStack inputs as the tower has taps (synth gives n_layer - 1 up to 3)
TEXT_DIMS=(--arch qwen3vl --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 512 --quiet)
expect_rc 0 "$PL_BIN" synth "${TEXT_DIMS[@]}" --n-layer 2 "$PL_TMP/text1.gguf"  # 1 DeepStack input
expect_rc 0 "$PL_BIN" synth "${TEXT_DIMS[@]}" --n-layer 4 "$PL_TMP/text3.gguf"  # 3
for type in f16 f32; do
    expect_rc 0 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/tower6-$type.gguf" --vision-layers 6 \
        --type $type --seed 11 --quiet
done
expect_rc 0 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/tower24-f16.gguf" --type f16 --seed 12 --quiet

PYTHONPATH=$PNG_PATH python3 - "$PL_TMP" >"$PL_TMP/gen" 2>&1 <<'EOF'
import sys
from pngfile import banded, write_png
out = sys.argv[1]
# noise, gradient and stripe bands
for i, (w, h) in enumerate([(512, 512), (333, 777), (17, 17), (3000, 200), (128, 96)]):
    write_png(f"{out}/img_{w}x{h}.png", w, h, banded(w, h, 100 + i, 3), 1)
EOF
script_verdict $? "$PL_TMP/gen" "could not generate the test images"

# the full depth: three DeepStack sets
tower_compare "$PL_TMP/text3.gguf" "$PL_TMP/tower24-f16.gguf" "$PL_TMP/img_17x17.png" "$MAX_ABS_F16"
tower_compare "$PL_TMP/text3.gguf" "$PL_TMP/tower24-f16.gguf" "$PL_TMP/img_128x96.png" "$MAX_ABS_F16"
# six blocks, one DeepStack set
for img in "$JPEG" "$PL_TMP/img_512x512.png" "$PL_TMP/img_333x777.png" "$PL_TMP/img_3000x200.png"; do
    tower_compare "$PL_TMP/text1.gguf" "$PL_TMP/tower6-f16.gguf" "$img" "$MAX_ABS_F16"
done
for img in "$PL_TMP/img_17x17.png" "$PL_TMP/img_333x777.png"; do
    tower_compare "$PL_TMP/text1.gguf" "$PL_TMP/tower6-f32.gguf" "$img" "$MAX_ABS_F32"
done

# a bad tower is an error, not a crash: the 6-block tower with a 3-input
# text model (the widths differ), and a file that is no tower
expect_rc 2 "$ENC" "$PL_TMP/text3.gguf" "$PL_TMP/tower6-f16.gguf" --image "$JPEG" --out "$PL_TMP/x.f32" \
    --device "$DEVICE" && expect_grep "not a pair" "$PL_TMP/err"
expect_rc 2 "$ENC" "$PL_TMP/text1.gguf" "$PL_TMP/text1.gguf" --image "$JPEG" --out "$PL_TMP/x.f32" \
    --device "$DEVICE" &&
    expect_grep "projector_type" "$PL_TMP/err"
done_testing
