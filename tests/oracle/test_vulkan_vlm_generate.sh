# test_vulkan_vlm_generate.sh -- prompts with images on the Vulkan backend
# (tower and text model) against llama.cpp's libmtmd + libllama on the CPU
# (pl_mtmd generate), by test_vlm_generate.sh's rules: the prompt's layout
# (text ids, each image token as -1) identical, the greedy ids identical up
# to llama.cpp's first undecidable step (a near-tie by its own margins, or
# a step where its plain and flash-attention runs part); with one image,
# with two, and a text-only prompt on the same checkpoint.
#
# Smaller than the CPU test, for lavapipe (CI's Vulkan device runs the
# shaders on the CPU): random weights at Qwen3-VL-2B's widths -- text 2048
# wide, 16 heads (8 KV) of 128 -- cut to 2 layers with a narrower FFN
# (1024), which take the one DeepStack input of the tower cut to 6 of its
# 24 blocks (the tap at block 5); f16 text and tower weights; generated
# PNGs of 8 to 12 tokens (a small image is upscaled to the 8-token minimum).
. "$(dirname "$0")/vulkan_lib.sh"
. "$(dirname "$0")/mtmd_lib.sh"
. "$(dirname "$0")/forward_lib.sh"
. "$(dirname "$0")/vision_lib.sh"
N=12
MAX_TOKENS=12

small_vl_pair || { done_testing; exit 1; }
expect_rc 0 "$PL_MTMD" info "$MODEL" "$MMPROJ" && expect_grep "n_deepstack 1" "$PL_TMP/out"

# the margin: this small model's logits are close (llama.cpp's top-2
# margins mostly 0.03 to 0.3), and the device's embeddings are within
# 2e-3 of libmtmd's (test_vulkan_vision_tower.sh): 0.03 leaves most steps
# comparable (CPU test: 0.1 on its larger model)
MARGIN=0.03
vlm_ids_check "vulkan one image, f16" "$MODEL" $MARGIN "What is in this picture?" "$PL_TMP/a.png"
vlm_ids_check "vulkan two images, f16" "$MODEL" $MARGIN "First <__media__> then <__media__>: what differs?" "$PL_TMP/a.png" "$PL_TMP/b.png"
greedy_check "vulkan text only, f16" "$MODEL" f16 $MARGIN $N --prompt "What is in this picture?"
done_testing
