# test_arm64_vision.sh -- the image path on the ARM64 build under qemu
# ("max": the i8mm tier, with the NEON attention kernels the tower's
# non-causal attention runs on) against llama.cpp's libmtmd run natively on
# x86, by the rules of test_vision_tower.sh and test_vlm_generate.sh: the
# tower's embeddings (projection and DeepStack set) with cosine >= 0.9999
# per token and the largest difference within 5e-3 (f16 weights), and the
# greedy ids of `pocketllm run --mmproj --image` identical to llama.cpp's up
# to its first undecidable step, with one image (two images, the same code
# on another grid, are test_vlm_generate.sh's on x86).  Small, for the
# emulator (about 4 minutes under qemu, most of it the tower): the test_vulkan_vlm_generate.sh pair (text 2048 wide, 2
# layers; the tower cut to 6 of its 24 blocks, keeping the tap at block 5;
# f16), generated PNGs of 8 to 12 tokens.  The models are made by the x86
# CLI; only the runs under comparison are emulated.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/arm64_lib.sh"
. "$(dirname "$0")/mtmd_lib.sh"
export PL_RUN_BIN
PL_RUN_BIN=$(arm_wrap "$ARM_CPU_I8MM" pocketllm)
. "$(dirname "$0")/forward_lib.sh"
. "$(dirname "$0")/vision_lib.sh"
[ -x "$ARM_BUILD/pl_vision_encode" ] ||
    { echo "FAIL: no $ARM_BUILD/pl_vision_encode (scripts/test.sh builds it in the ARM64 tree)" >&2; exit 1; }
ENC=$(arm_wrap "$ARM_CPU_I8MM" pl_vision_encode)
DEVICE=cpu
THREADS=2
N=8
MAX_TOKENS=12

TEXT=(--arch qwen3vl --n-layer 2 --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 1024 --untied --quiet)
expect_rc 0 "$BIN" synth "${TEXT[@]}" --type f16 --seed 11 "$PL_TMP/text-f16.gguf" || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/mmproj.gguf" --vision-layers 6 --type f16 --seed 7 --quiet ||
    { done_testing; exit 1; }
MMPROJ=$PL_TMP/mmproj.gguf
MODEL=$PL_TMP/text-f16.gguf

PYTHONPATH=$PNG_PATH python3 - "$PL_TMP" >"$PL_TMP/gen" 2>&1 <<'EOF_PY'
import random, sys
from pngfile import write_png
out = sys.argv[1]
rnd = random.Random(5)
for name, (w, h) in (("a", (120, 72)),):
    write_png(f"{out}/{name}.png", w, h, bytes(v for y in range(h) for x in range(w)
        for v in (((x * 4) ^ y) & 255, (y * 2 + rnd.randrange(64)) & 255, (x * y // 50) & 255)))
print("a.png 120x72")
EOF_PY
script_verdict $? "$PL_TMP/gen" "could not write the test images"

tower_compare "$MODEL" "$MMPROJ" "$PL_TMP/a.png" 5e-3
# the margin of test_vulkan_vlm_generate.sh's model (llama.cpp's top-2
# margins mostly 0.03 to 0.3 on it)
vlm_ids_check "arm64 one image, f16" "$MODEL" 0.03 "What is in this picture?" "$PL_TMP/a.png"
done_testing
