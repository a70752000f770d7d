# test_run_qwen3_06b.sh -- a checkpoint at the real Qwen3-0.6B shape (synth
# qwen3-0.6b, f16: 28 layers of 1024, 16 heads / 8 KV heads of 128, FFN
# 3072, vocabulary 151936, tied; about 1.2 GB) is written into a temporary
# folder, `pocketllm run` generates 32 tokens from a prompt, and the file is
# deleted.  Prints the speed as information.
#
# In the sanitizer build (ASan+UBSan, several times slower) the depth is cut
# to 4 layers -- every width, the vocabulary and so every kernel shape stay
# the real ones -- and the test says so; the release build runs all 28.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
MODEL=$PL_TMP/qwen3-0.6b-f16.gguf
depth=()
if nm "$BIN" 2>/dev/null | grep -q __asan_init || nm -D "$PL_LIB" 2>/dev/null | grep -q __asan; then
    depth=(--n-layer 4)
    echo "note: sanitizer build: qwen3-0.6b widths at 4 of its 28 layers" >&2
fi
expect_rc 0 "$BIN" synth --quiet --shape qwen3-0.6b --type f16 --seed 3 "${depth[@]}" "$MODEL" || { done_testing; exit 1; }
expect_rc 0 "$BIN" run --model "$MODEL" --prompt "Once upon a time" -n 32 --print-ids --timings
cat "$PL_TMP/err" >&2
ok
[ "$(sed -n 1p "$PL_TMP/out" | wc -w)" = 16 ] || fail "prompt ids: $(sed -n 1p "$PL_TMP/out")"
ok
[ "$(sed -n 2p "$PL_TMP/out" | wc -w)" = 32 ] || fail "expected 32 generated ids: $(sed -n 2p "$PL_TMP/out")"
rm -f "$MODEL"
done_testing
