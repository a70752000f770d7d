# test_vulkan_eval.sh -- evaluation on the Vulkan device, held to the CPU's
# bounds against llama.cpp (test_perplexity.sh, test_imatrix.sh):
#  1. `perplexity --device vulkan` equals llama-perplexity's within 0.1%
#     on stories260K (f32 and llama.cpp's Q4_0 of it), two window sizes;
#     KL divergence of the device run against the CPU run's saved
#     log-probabilities is tiny, top-1 agreement full;
#  2. `imatrix --device vulkan` (the observer downloads every matmul's
#     input from the device) agrees with llama-imatrix's collection within
#     0.1% per column, with and without --process-output.
. "$(dirname "$0")/vulkan_lib.sh"
. "$(dirname "$0")/ppl_lib.sh"
BIN=$PL_BIN
S=$PL_SHARED/models/stories260K.gguf
T=$PL_SRC/tests/oracle/data/eval_story.txt
Q=$PL_TMP/q4_0.gguf
CMP=$PL_TOOLS/pl_imatrix_cmp
expect_rc 0 "$ORACLE" quantize "$S" "$Q" Q4_0 -t 1

for model in "$S" "$Q"; do
    for ctx in 128 256; do ppl_check "vulkan $(basename "$model")" "$model" "$T" "$ctx" -t 1; done
done

# the device against the CPU, position by position
expect_rc 0 "$BIN" perplexity --quiet --model "$S" --file "$T" --ctx 128 --save-logits "$PL_TMP/cpu.f32"
expect_rc 0 "$BIN" perplexity --quiet --model "$S" --file "$T" --ctx 128 --kl-base "$PL_TMP/cpu.f32" --json --device vulkan &&
    /usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "vulkan against the CPU: KL divergence or top-1 agreement out of bounds"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"vulkan against the CPU: KL mean {r['kl_mean']:.3g}, max {r['kl_max']:.3g}, top-1 {r['top1']:.4f}", file=sys.stderr)
assert r["kl_mean"] < 1e-5 and r["kl_max"] < 1e-3 and r["top1"] == 1, r
PY
ok

compare() { # compare LABEL MODEL CTX CHUNKS [--process-output]
    local label=$1 model=$2 ctx=$3 chunks=$4
    shift 4
    expect_rc 0 "$ORACLE" perplexity "$model" --file "$T" --ctx "$ctx" --chunks "$chunks" -t 1 \
        --imatrix-out "$PL_TMP/ref.imatrix" "$@" || return 1
    expect_rc 0 "$BIN" imatrix --quiet --model "$model" --file "$T" --ctx "$ctx" --chunks "$chunks" \
        --out "$PL_TMP/ours.imatrix" --device vulkan "$@" || return 1
    "$CMP" "$PL_TMP/ours.imatrix" "$PL_TMP/ref.imatrix" --rel 1e-3 >"$PL_TMP/cmp" 2>&1
    local rc=$?
    ok
    echo "vulkan $label: $(cat "$PL_TMP/cmp")" >&2
    [ $rc = 0 ] || fail "vulkan $label: our importance matrix differs from llama.cpp's: $(cat "$PL_TMP/cmp")"
}
compare "stories260K imatrix" "$S" 128 10
compare "stories260K imatrix --process-output" "$S" 128 10 --process-output
done_testing
