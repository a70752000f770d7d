# ladder_lib.sh -- shared by tests/oracle/test_ladder_*.sh: one random-weight
# qwen3 whose rows are whole 256-blocks (so every K and IQ type applies
# without llama.cpp's fallbacks), quantized BY LLAMA.CPP to each recipe of
# a list -- with an importance matrix from `pocketllm imatrix`, as the IQ
# types require -- and then our forward pass against llama.cpp's on each
# file (forward_lib.sh): greedy ids identical up to llama.cpp's first
# near-tie, teacher-forced argmax agreement at every decidable position,
# the largest logit difference within a stated fraction of the range.
#
# The model: 2 layers of 256, 4 heads (2 KV) of 64, FFN 512, untied output,
# f16, the built-in byte vocabulary.  Untied keeps logit ranges near 8 (a
# tied model's are 40-95: ten times the margins, far fewer decidable steps).
#
# ladder_run "RECIPE MARGIN MAX_REL [ROUTER_MARGIN]" lines on stdin: each
# recipe of the current model (ladder_model) quantized by llama.cpp and
# compared (ROUTER_MARGIN, for a mixture of experts: forward_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"

# ladder_model NAME SYNTH_ARGS... makes the model the next ladder_run uses
# (f16, written by `pocketllm synth SYNTH_ARGS`) and its importance matrix;
# unless LADDER_MODEL_LATER=1, sourcing makes the qwen3 above.
ladder_model() {
    LADDER_NAME=$1
    shift
    LADDER_M=$PL_TMP/ladder.gguf
    LADDER_IM=$PL_TMP/ladder.imatrix
    expect_rc 0 "$BIN" synth --quiet "$@" --type f16 "$LADDER_M"
    expect_rc 0 "$BIN" imatrix --quiet --model "$LADDER_M" --file "$PL_SRC/tests/oracle/data/eval_story.txt" \
        --ctx 128 --chunks 4 --out "$LADDER_IM"
}
[ "${LADDER_MODEL_LATER:-0}" = 1 ] ||
    ladder_model qwen3 --arch qwen3 --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 --head-dim 64 --n-ff 512 \
        --untied --seed 11

ladder_run() {
    local recipes=() margins=() rels=() routers=() r m x rm i
    : >"$PL_TMP/jobs"
    while read -r r m x rm; do
        [ -n "$r" ] || continue
        recipes+=("$r") margins+=("$m") rels+=("$x") routers+=("$rm")
        echo "$LADDER_M $PL_TMP/$r.gguf $r -t 1 --imatrix $LADDER_IM" >>"$PL_TMP/jobs"
    done
    # one oracle process for every job: ggml builds its IQ grids once
    "$ORACLE" quantize-batch "$PL_TMP/jobs" >"$PL_TMP/qstatus" 2>"$PL_TMP/qerr"
    mapfile -t status <"$PL_TMP/qstatus"
    for i in "${!recipes[@]}"; do
        r=${recipes[$i]}
        ok
        if [ "${status[$i]:-}" != ok ]; then
            fail "$r: llama.cpp did not quantize (${status[$i]:-no status}): $(tail -c 300 "$PL_TMP/qerr")"
            continue
        fi
        ROUTER_MARGIN=${routers[$i]:-${ROUTER_MARGIN:-}} greedy_check "$LADDER_NAME $r" "$PL_TMP/$r.gguf" f16 \
            "${margins[$i]}" 32 --prompt "Once upon a time"
        ROUTER_MARGIN=${routers[$i]:-${ROUTER_MARGIN:-}} logits_check "$LADDER_NAME $r" "$PL_TMP/$r.gguf" f16 \
            "${margins[$i]}" "${rels[$i]}" "$GREEDY_IDS"
        rm -f "$PL_TMP/$r.gguf"
    done
}
