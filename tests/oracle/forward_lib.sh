# forward_lib.sh -- shared by the forward-pass oracle tests: PocketLLM's
# greedy ids and logits against llama.cpp's on one model, by the rules of
# tests/common/compare.h.  Every llama.cpp call pins flash attention (off,
# or $FA when set: on or off) and the KV cache type, and our side uses the
# same KV type and the same attention arithmetic (--flash-attn $FA).  llama.cpp runs on
# one thread: its spinning thread pool slows by 100x on a loaded 2-core
# machine (the thread count does not change what it computes).
#
# greedy_check NAME MODEL KV MARGIN N PROMPT_ARGS...
#   PROMPT_ARGS is --prompt TEXT or --ids "1 2 3".  Both engines decode N
#   tokens greedily; the prompt ids must be identical; the generated ids must
#   be identical up to llama.cpp's first undecidable step: a near-tie (its
#   own top-1/top-2 margin <= MARGIN, measured on llama.cpp's teacher-forced
#   logits of the sequence it generated) or a step where its run with the
#   other attention path (flash on instead of off, or off instead of on)
#   chose differently.  Sets GREEDY_IDS to "prompt ids + llama.cpp's
#   ids" for a later logits_check.
# forward_check NAME MODEL KV MARGIN MAX_REL N
#   greedy_check of N ids from "Once upon a time", then logits_check of them.
# logits_check NAME MODEL KV MARGIN MAX_REL IDS
#   Teacher-forced logits of every position: argmax agreement at every
#   position where llama.cpp's margin exceeds MARGIN, and max |diff| within
#   MAX_REL of llama.cpp's logit range (reported either way).
# ROUTER_MARGIN (mixtures of experts): both engines' routers are traced
#   (pl_oracle logits --router, pocketllm logits --routing); where they
#   chose different experts, llama.cpp's own margin there (log-probability
#   of its k-th expert over the next, i.e. the gap of its router logits)
#   must be at most ROUTER_MARGIN times the range of its router logits
#   there -- a router near-tie, undecidable like a near-tie of the logits:
#   the relative perturbation the logits are allowed (MAX_REL) may move the
#   router's input as much -- so that position is not judged and greedy ids
#   are compared up to it (tests/common/compare.h); else the test fails.
#   Unset: not traced.
BIN=$PL_BIN
# the pocketllm that runs the models under comparison (the ARM64 tests point
# it at the cross-built CLI under qemu); BIN still makes the test models
RUN_BIN=${PL_RUN_BIN:-$PL_BIN}
RUN_TAG=${PL_RUN_TAG:+, $PL_RUN_TAG}
FA=${FA:-off}
# llama.cpp's other attention path: where its two runs part, it was undecided
FA_OTHER=$([ "$FA" = on ] && echo off || echo on)
# PL_DEVICE=vulkan runs our side on that device (tests/oracle/test_vulkan_*.sh)
DEV_ARGS=()
[ -n "${PL_DEVICE:-}" ] && DEV_ARGS=(--device "$PL_DEVICE")
GREEDY_IDS=
COMPARE=$PL_TOOLS/pl_compare
# KV is one cache type for K and V (f16, q8_0, ...) or K/V (q8_0/f16)
kv_ours() { case $1 in */*) echo "-ctk ${1%/*} -ctv ${1#*/}" ;; *) echo "--kv $1" ;; esac; }
kv_oracle() { case $1 in */*) echo "--ctk ${1%/*} --ctv ${1#*/}" ;; *) echo "--kv $1" ;; esac; }
# llama.cpp runs a quantized V with flash attention only: no other path
v_quantized() { case ${1#*/} in q* | iq*) return 0 ;; esac; return 1; }
# router_args OURS REF: pl_compare's routing options when ROUTER_MARGIN is set
router_args() { [ -n "${ROUTER_MARGIN:-}" ] && echo "--routing $1 --router $2 --router-margin $ROUTER_MARGIN"; }
# our_routing MODEL KV IDS OUT: our router's choices for IDS (when ROUTER_MARGIN is set)
our_routing() {
    [ -n "${ROUTER_MARGIN:-}" ] || return 0
    expect_rc 0 "$RUN_BIN" logits --model "$1" --ids "$3" --out "$PL_TMP/routing.f32" --routing "$4" $(kv_ours "$2") \
        --flash-attn "$FA" "${DEV_ARGS[@]}"
}

greedy_check() {
    local name=$1 model=$2 kv=$3 margin=$4 n=$5
    shift 5
    local t=$PL_TMP/greedy
    expect_rc 0 "$ORACLE" greedy "$model" "$@" -n "$n" --fa "$FA" $(kv_oracle "$kv") -t 1 || return 1
    cp "$PL_TMP/out" "$t.ref"
    if [ "$FA_OTHER" = off ] && v_quantized "$kv"; then
        cp "$t.ref" "$t.other"
    else
        expect_rc 0 "$ORACLE" greedy "$model" "$@" -n "$n" --fa "$FA_OTHER" $(kv_oracle "$kv") -t 1 || return 1
        cp "$PL_TMP/out" "$t.other"
    fi
    expect_rc 0 "$RUN_BIN" run --model "$model" "$@" -n "$n" $(kv_ours "$kv") --flash-attn "$FA" --print-ids "${DEV_ARGS[@]}" || return 1
    sed -n 1p "$PL_TMP/out" >"$t.prompt"
    sed -n 2p "$PL_TMP/out" >"$t.ours"
    if [ "$1" = --prompt ]; then
        expect_rc 0 "$ORACLE" tokenize "$model" --text "$2" || return 1
        ok
        cmp -s "$PL_TMP/out" "$t.prompt" ||
            { fail "$name: prompt ids differ: ours '$(cat "$t.prompt")', llama.cpp '$(cat "$PL_TMP/out")'"; return 1; }
    fi
    local np
    np=$(wc -w <"$t.prompt")
    # llama.cpp's margin at each step, from its logits of the sequence it chose
    GREEDY_IDS="$(cat "$t.prompt") $(cat "$t.ref")"
    expect_rc 0 "$ORACLE" logits "$model" --ids "$GREEDY_IDS" --out "$t.f32" --fa "$FA" $(kv_oracle "$kv") -t 1 \
        --router "$t.router" || return 1
    local vocab
    vocab=$(awk '{print $2}' "$PL_TMP/out")
    "$COMPARE" margins "$t.f32" "$vocab" $((np - 1)) >"$t.margins" || { fail "$name: pl_compare margins failed"; return 1; }
    our_routing "$model" "$kv" "$GREEDY_IDS" "$t.routing" || return 1
    # shellcheck disable=SC2046
    "$COMPARE" tokens "$t.ours" "$t.ref" --margins "$t.margins" --margin "$margin" --other "$t.other" \
        $(router_args "$t.routing" "$t.router") --router-first $((np - 1)) >"$t.cmp"
    local rc=$?
    ok
    echo "$name (kv $kv, fa $FA${PL_DEVICE:+, $PL_DEVICE}$RUN_TAG, margin $margin): $(cat "$t.cmp")" >&2
    [ $rc = 0 ] || fail "$name: greedy ids differ from llama.cpp: $(cat "$t.cmp")"
}

logits_check() {
    local name=$1 model=$2 kv=$3 margin=$4 max_rel=$5 ids=$6
    local t=$PL_TMP/logits
    expect_rc 0 "$ORACLE" logits "$model" --ids "$ids" --out "$t.ref" --fa "$FA" $(kv_oracle "$kv") -t 1 --router "$t.router" ||
        return 1
    local vocab
    vocab=$(awk '{print $2}' "$PL_TMP/out")
    local routing=()
    if [ -n "${ROUTER_MARGIN:-}" ]; then routing=(--routing "$t.routing"); fi
    expect_rc 0 "$RUN_BIN" logits --model "$model" --ids "$ids" --out "$t.ours" $(kv_ours "$kv") --flash-attn "$FA" \
        "${DEV_ARGS[@]}" "${routing[@]}" || return 1
    # shellcheck disable=SC2046
    "$COMPARE" logits "$t.ours" "$t.ref" "$vocab" --margin "$margin" --max-rel-diff "$max_rel" \
        $(router_args "$t.routing" "$t.router") >"$t.cmp"
    local rc=$?
    ok
    echo "$name (kv $kv, fa $FA${PL_DEVICE:+, $PL_DEVICE}$RUN_TAG): $(head -1 "$t.cmp")" >&2
    [ $rc = 0 ] || fail "$name: teacher-forced logits disagree: $(cat "$t.cmp")"
}

forward_check() {
    greedy_check "$1" "$2" "$3" "$4" "$6" --prompt "Once upon a time"
    logits_check "$1" "$2" "$3" "$4" "$5" "$GREEDY_IDS"
}

# ---- KV cache types (test_forward_kv.sh, test_vulkan_kv.sh) ----------------
set_fa() { FA=$1 FA_OTHER=$([ "$1" = on ] && echo off || echo on); }
# The logits' tolerance grows with the cache's step: both engines quantize
# K and V rows that differ in their last bits (another summation order in
# the projections), and a value next to a rounding boundary of the cache
# type lands one step apart -- 2^-8 of its value for bf16 (f16: 2^-11,
# whose tolerance is 1e-3), 1/16 of a block's range for 4-bit types
# (KV_REL_4BIT, default 5e-3).  The argmax must still agree at every
# decidable position, and the greedy ids up to llama.cpp's first
# undecidable step.
rel_for() {
    case $1 in
    *q4* | *q5* | *iq4*) echo "${KV_REL_4BIT:-5e-3}" ;;
    *bf16*) echo 8e-3 ;;
    *) echo 2e-3 ;;
    esac
}
