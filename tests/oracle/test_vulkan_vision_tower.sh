# test_vulkan_vision_tower.sh -- the Qwen3-VL vision tower on the Vulkan
# backend against libmtmd (CPU), embedding for embedding, with the bounds
# of test_vision_tower.sh: cosine similarity >= 0.9999 per token in the
# projection and every DeepStack set, the largest absolute difference
# within MAX_ABS_F16 / MAX_ABS_F32.  Both sides get the same RGB bytes
# (`pl_mtmd preprocess --out-rgb`), so what differs is the tower alone: its
# matmuls, layer norms, GELU, 2-D rotary positions and non-causal attention
# as the shaders compute them.
#
# Smaller than the CPU test: CI's Vulkan device is Mesa's lavapipe, which
# runs the shaders on the CPU, and the real Qwen3-VL-2B tower width (1024,
# FFN 4096) makes a patch cost 25 MFLOP a block.  So: the tower cut to 6
# blocks (DeepStack tap at block 5 kept), f16 weights on a 128x96 image
# (12 tokens, a non-square grid), f32 weights on a 17x17 one (upscaled to
# the 8-token minimum: 9 tokens, 36 patches).  Measured on lavapipe:
# min cos 0.9999998 (f16) and 1.0000000 (f32), max abs 2.0e-3 (f16) and
# 8.0e-4 (f32), as close as the CPU backend (2.1e-3 with f16 weights).
. "$(dirname "$0")/vulkan_lib.sh"
. "$(dirname "$0")/mtmd_lib.sh"
. "$(dirname "$0")/vision_lib.sh"
ENC=$PL_TOOLS/pl_vision_encode
[ -x "$ENC" ] || { echo "FAIL: no $ENC (a helper program of the build)" >&2; exit 1; }
DEVICE=vulkan
THREADS=2
MAX_ABS_F32=${MAX_ABS_F32:-2e-3}
MAX_ABS_F16=${MAX_ABS_F16:-2e-2}

# a text model only fixes the pair's widths: 2048, one DeepStack input
expect_rc 0 "$PL_BIN" synth --arch qwen3vl --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 512 \
    --n-layer 2 --quiet "$PL_TMP/text1.gguf"
for type in f16 f32; do
    expect_rc 0 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/tower6-$type.gguf" --vision-layers 6 \
        --type $type --seed 11 --quiet
done

PYTHONPATH=$PNG_PATH python3 - "$PL_TMP" >"$PL_TMP/gen" 2>&1 <<'EOF'
import sys
from pngfile import banded, write_png
out = sys.argv[1]
# noise and gradient bands
for i, (w, h) in enumerate([(17, 17), (128, 96)]):
    write_png(f"{out}/img_{w}x{h}.png", w, h, banded(w, h, 200 + i, 2), 1)
EOF
script_verdict $? "$PL_TMP/gen" "could not generate the test images"

tower_compare "$PL_TMP/text1.gguf" "$PL_TMP/tower6-f16.gguf" "$PL_TMP/img_128x96.png" "$MAX_ABS_F16"
tower_compare "$PL_TMP/text1.gguf" "$PL_TMP/tower6-f32.gguf" "$PL_TMP/img_17x17.png" "$MAX_ABS_F32"
done_testing
