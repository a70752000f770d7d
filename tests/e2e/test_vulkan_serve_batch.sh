# test_vulkan_serve_batch.sh -- test_serve_batch.sh with the model on the
# Vulkan device: continuous batching on the device gives every greedy and
# seeded answer the same alone and beside three others in one pass, and
# the passes really hold four sequences; then again with packed caches (a
# q4_1 K over a q8_0 V: blocks that straddle words, each sequence's rows at
# its own offset in the shared cache).  POCKETLLM_NO_VULKAN=1 skips it;
# without a usable device it fails.
if [ "${POCKETLLM_NO_VULKAN:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_VULKAN=1 -- the Vulkan server test did not run" >&2
    exit 77
fi
# 8 of the 16 greedy requests (and the 4 seeded ones): lavapipe runs the
# device on this machine's CPU, at a few passes a second
rc=0
PL_SERVE_DEVICE=vulkan PL_SERVE_TOPICS=8 bash "$(dirname "$0")/test_serve_batch.sh" || rc=1
PL_SERVE_DEVICE=vulkan PL_SERVE_TOPICS=8 PL_SERVE_ARGS="-ctk q4_1 -ctv q8_0" \
    bash "$(dirname "$0")/test_serve_batch.sh" || rc=1
exit $rc
