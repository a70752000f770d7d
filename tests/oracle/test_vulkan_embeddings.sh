# test_vulkan_embeddings.sh -- test_embeddings.sh with our side on the
# Vulkan backend (Mesa's lavapipe here): the same tiny checkpoints,
# poolings, chunked passes and refusals against llama.cpp (CPU), the same bound
# (cosine >= 0.9999 per vector).  The hidden states come off the device
# after the final norm, as the logits otherwise would; the pooling runs on
# the host.
. "$(dirname "$0")/vulkan_lib.sh"
. "$(dirname "$0")/test_embeddings.sh"
