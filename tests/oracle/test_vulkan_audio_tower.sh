# test_vulkan_audio_tower.sh -- the Qwen3-ASR audio tower on the Vulkan
# backend against libmtmd (CPU), embedding for embedding, by the rules of
# test_audio_tower.sh: both sides get the mel libmtmd fed its own tower
# (`pl_mtmd audio-encode --out-mel`), so what differs is the tower alone --
# im2col and the three convs as matmuls, GELU (erf), the transpose before
# conv_out, layer norms, the non-causal attention over the window's tokens,
# the projector -- as the shaders compute them.  Per token: cosine
# similarity >= 0.9999, the largest absolute difference <= MAX_ABS_F16.
#
# Smaller than the CPU test: CI's Vulkan device is Mesa's lavapipe, which
# runs the shaders on the CPU.  So: the 0.6B tower (f16 matrices, the conv
# kernels and conv_out f16 as the converter writes them) cut to 2 of its 18
# blocks (the blocks are all alike; the convs, which cost as much as the
# blocks, are whole), on a 4 s clip (401 mel frames: one window padded to
# 500, five conv chunks, 65 tokens).
. "$(dirname "$0")/vulkan_lib.sh"
. "$(dirname "$0")/mtmd_lib.sh"
TOWER=$PL_TOOLS/pl_audio_tower
[ -x "$TOWER" ] || { echo "FAIL: no $TOWER (a helper program of the build)" >&2; exit 1; }
. "$(dirname "$0")/audio_lib.sh"
DEVICE=vulkan
THREADS=2
MAX_ABS_F16=${MAX_ABS_F16:-5e-3}

ok
speech "$PL_TMP/a4.wav" 4 "The quick brown fox jumps over the lazy dog near the river bank." ||
    fail "could not make the 4 s clip: $(head -c 400 "$PL_TMP/err")"
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --n-layer 1 --type f16 --seed 3 --quiet "$PL_TMP/text06.gguf"
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/tower2-f16.gguf" --audio-layers 2 --type f16 \
    --seed 21 --quiet

audio_compare "$PL_TMP/text06.gguf" "$PL_TMP/tower2-f16.gguf" "$PL_TMP/a4.wav" "$MAX_ABS_F16"
done_testing
