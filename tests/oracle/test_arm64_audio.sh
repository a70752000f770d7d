# test_arm64_audio.sh -- the Qwen3-ASR audio tower of the ARM64 build under
# qemu ("max": the i8mm tier, with the NEON kernels of the matmuls, the
# convs' im2col, GELU (erf) and the non-causal attention) against llama.cpp's
# libmtmd run natively on x86, by the rules of test_audio_tower.sh: per
# token cosine >= 0.9999 and the largest absolute difference <= 5e-3 (f16
# matrices).  The ARM64 tree has no audio decoders (PL_AUDIO_DECODE=OFF:
# Debian ships no static libsndfile or libsoxr), and needs none: the tower
# takes the mel windows libmtmd fed its own (`pl_mtmd audio-encode
# --out-mel`, on x86).  Small, for the emulator: the 0.6B tower cut to 2 of
# its 18 blocks (the convs whole), f16, a 4 s clip (one window of 500
# frames, 65 tokens).  The models are made by the x86 CLI; only our tower
# runs emulated.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/arm64_lib.sh"
. "$(dirname "$0")/mtmd_lib.sh"
[ -x "$ARM_BUILD/pl_audio_tower" ] ||
    { echo "FAIL: no $ARM_BUILD/pl_audio_tower (scripts/test.sh builds it in the ARM64 tree)" >&2; exit 1; }
TOWER=$(arm_wrap "$ARM_CPU_I8MM" pl_audio_tower)
. "$(dirname "$0")/audio_lib.sh"
DEVICE=cpu
THREADS=2

ok
speech "$PL_TMP/a4.wav" 4 "The quick brown fox jumps over the lazy dog near the river bank." ||
    fail "could not make the 4 s clip: $(head -c 400 "$PL_TMP/err")"
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --n-layer 1 --type f16 --seed 3 --quiet "$PL_TMP/text06.gguf"
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/tower2-f16.gguf" --audio-layers 2 --type f16 \
    --seed 22 --quiet

audio_compare "$PL_TMP/text06.gguf" "$PL_TMP/tower2-f16.gguf" "$PL_TMP/a4.wav" 5e-3
done_testing
