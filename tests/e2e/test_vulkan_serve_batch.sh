# test_vulkan_serve_batch.sh -- test_serve_batch.sh with the model on the
# Vulkan device: continuous batching on the device gives every greedy and
# seeded answer the same alone and beside three others in one pass, and
# the passes really hold four sequences.  POCKETLLM_NO_VULKAN=1 skips it;
# without a usable device it fails.
if [ "${POCKETLLM_NO_VULKAN:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_VULKAN=1 -- the Vulkan server test did not run" >&2
    exit 77
fi
# 8 of the 16 greedy requests (and the 4 seeded ones): lavapipe runs the
# device on this machine's CPU, at a few passes a second
PL_SERVE_DEVICE=vulkan PL_SERVE_TOPICS=8 exec bash "$(dirname "$0")/test_serve_batch.sh"
