# ppl_lib.sh -- shared by test_perplexity.sh, test_perplexity_moe.sh and
# test_vulkan_eval.sh:
# ppl_check NAME MODEL TEXT CTX ARGS... -- `pocketllm perplexity` over TEXT
# in windows of CTX against pl_oracle perplexity (llama-perplexity's
# algorithm on llama_decode), ARGS (-t N, --chunks N) given to both, ours
# on $PL_DEVICE when set (vulkan_lib.sh): the same positions scored, the
# perplexity within 0.1%.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN

ppl_check() {
    local name=$1 model=$2 text=$3 ctx=$4 ref
    shift 4
    expect_rc 0 "$ORACLE" perplexity "$model" --file "$text" --ctx "$ctx" "$@" || return
    ref=$(cat "$PL_TMP/out")
    expect_rc 0 "$BIN" perplexity --quiet --model "$model" --file "$text" --ctx "$ctx" "$@" --json \
        ${PL_DEVICE:+--device "$PL_DEVICE"} || return
    /usr/bin/python3 - "$PL_TMP/out" "$ref" "$name ctx $ctx" <<'PY' || fail "$name ctx $ctx: perplexity differs from llama.cpp's"
import json, sys
ours = json.load(open(sys.argv[1]))
ref, scored = sys.argv[2].split()
rel = abs(ours["ppl"] / float(ref) - 1)
print(f"{sys.argv[3]}: ours {ours['ppl']:.6f}, llama.cpp {float(ref):.6f}, relative {rel:.2e} over {ours['scored']} positions", file=sys.stderr)
assert ours["scored"] == int(scored), (ours["scored"], scored)
assert rel <= 1e-3, rel
PY
    ok
}
