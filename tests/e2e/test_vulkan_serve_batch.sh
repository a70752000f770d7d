# test_vulkan_serve_batch.sh -- test_serve_batch.sh with the model on the
# Vulkan device: continuous batching on the device gives every greedy and
# seeded answer the same alone and beside three others in one pass, and
# the passes really hold four sequences.  POCKETLLM_NO_VULKAN=1 skips it;
# without a usable device it fails.
if [ "${POCKETLLM_NO_VULKAN:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_VULKAN=1 -- the Vulkan server test did not run" >&2
    exit 77
fi
PL_SERVE_DEVICE=vulkan exec bash "$(dirname "$0")/test_serve_batch.sh"
