# test_arm64_vision.sh -- the image path on the ARM64 build under qemu
# ("max": the i8mm tier, with the NEON attention kernels the tower's
# non-causal attention runs on) against llama.cpp's libmtmd run natively on
# x86, by the rules of test_vision_tower.sh and test_vlm_generate.sh: the
# tower's embeddings (projection and DeepStack set) with cosine >= 0.9999
# per token and the largest difference within 5e-3 (f16 weights), and the
# greedy ids of `pocketllm run --mmproj --image` identical to llama.cpp's up
# to its first undecidable step, with one image (two images, the same code
# on another grid, are test_vlm_generate.sh's on x86).  Small, for the
# emulator (about 4 minutes under qemu, most of it the tower): the pair of
# test_vulkan_vlm_generate.sh (vision_lib.sh's small_vl_pair: text 2048
# wide, 2 layers; the tower cut to 6 of its 24 blocks, keeping the tap at
# block 5; f16; PNGs of 8 to 12 tokens).  The models are made by the x86
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

small_vl_pair || { done_testing; exit 1; }

tower_compare "$MODEL" "$MMPROJ" "$PL_TMP/a.png" 5e-3
# the margin of test_vulkan_vlm_generate.sh's model (llama.cpp's top-2
# margins mostly 0.03 to 0.3 on it)
vlm_ids_check "arm64 one image, f16" "$MODEL" 0.03 "What is in this picture?" "$PL_TMP/a.png"
done_testing
