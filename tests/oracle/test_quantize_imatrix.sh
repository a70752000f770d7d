# test_quantize_imatrix.sh -- `pocketllm quantize --imatrix` against
# llama-quantize with the same importance matrix (quantize_lib.sh: same
# types, same bytes, same metadata but the quantize.imatrix.* keys that
# only the llama-quantize tool adds; llama.cpp runs ours), and the
# refusals: the recipes that need an imatrix without one, an imatrix that
# lacks a tensor such a recipe needs, an imatrix of another model.
#
# The imatrix comes from tests/tools/pl_imatrix_gen (random positive
# statistics for every matrix, llama.cpp's GGUF format, or the legacy .dat
# format) until `pocketllm imatrix` exists.  Models are narrow (ffn of 32)
# but 8 layers deep, so the first-eighth rules of the IQ recipes apply:
#  I   qwen3, gqa 1 (head count 1), tied
#  IB  llama, gqa 4, separate output.weight
#  I1  I cut to one layer, for the pure types (no layer rules there)
# ggml builds each IQ grid once per process (seconds for IQ1), so all
# llama.cpp runs share one oracle process.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/quantize_lib.sh"
BIN=$PL_BIN
QIGNORE="quantize.imatrix.file quantize.imatrix.dataset quantize.imatrix.entries_count quantize.imatrix.chunks_count"

I=$PL_TMP/i.gguf IB=$PL_TMP/ib.gguf I1=$PL_TMP/i1.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 256 --n-layer 8 --n-head 1 --n-head-kv 1 --head-dim 32 \
    --n-ff 32 --type f16 --seed 31 "$I"
expect_rc 0 "$BIN" synth --quiet --arch llama --n-embd 256 --n-layer 8 --n-head 4 --n-head-kv 1 --head-dim 32 \
    --n-ff 32 --untied --type f16 --seed 32 "$IB"
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 256 --n-layer 1 --n-head 1 --n-head-kv 1 --head-dim 32 \
    --n-ff 32 --type f16 --seed 33 "$I1"
GEN=$PL_TOOLS/pl_imatrix_gen
IM=$PL_TMP/i.imatrix IMB=$PL_TMP/ib.imatrix
expect_rc 0 "$GEN" "$I" "$IM"
expect_rc 0 "$GEN" "$I" "$PL_TMP/i.dat" --legacy
expect_rc 0 "$GEN" "$I1" "$PL_TMP/embd.imatrix" --with-embd
expect_rc 0 "$GEN" "$IB" "$IMB"
expect_rc 0 "$GEN" "$I" "$PL_TMP/zero.imatrix" --zero-count blk.3.ffn_up.weight
expect_rc 0 "$GEN" "$I" "$PL_TMP/skip.imatrix" --skip blk.2.attn_q.weight
need "$I" "$IB" "$I1" "$IM" "$PL_TMP/i.dat" "$PL_TMP/embd.imatrix" "$IMB" "$PL_TMP/zero.imatrix" "$PL_TMP/skip.imatrix"

for r in IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_XS IQ1_S IQ1_M Q2_K_S Q4_0 Q5_0 Q4_K_M IQ4_XS IQ4_NL; do
    qjob "I $r" "$I" "$r" "$r" "--imatrix $IM" "--imatrix $IM"
done
# pure IQ types: token_embd gets the IQ type too, and llama-imatrix never
# has weights for it -- llama.cpp aborts (iq2_xxs, iq2_xs, iq1_s need
# them) or quantizes it without; here the imatrix has an entry for it
while read -r type recipe; do
    qjob "I1 $type (pure)" "$I1" "$type" "$recipe" "--pure --imatrix $PL_TMP/embd.imatrix" \
        "--imatrix $PL_TMP/embd.imatrix"
done <<'EOF'
iq2_xxs IQ2_XXS
iq2_xs IQ2_XS
iq2_s IQ2_M
iq3_xxs IQ3_XXS
iq1_s IQ1_S
iq1_m IQ1_M
EOF
# gqa 4: attn_v in q4_K
for r in IQ2_XXS IQ2_M IQ3_XXS; do qjob "IB $r" "$IB" "$r" "$r" "--imatrix $IMB" "--imatrix $IMB"; done
# the legacy format gives the same weights, so the same bytes
qjob "I IQ2_XS (legacy .dat imatrix)" "$I" IQ2_XS IQ2_XS "--imatrix $IM" "--imatrix $PL_TMP/i.dat"
# a zero count reads as weights of 1; a missing entry leaves a k-quant
# tensor without weights
qjob "I Q4_K_M (a zero count)" "$I" Q4_K_M Q4_K_M "--imatrix $PL_TMP/zero.imatrix" "--imatrix $PL_TMP/zero.imatrix"
qjob "I Q4_K_M (an entry missing)" "$I" Q4_K_M Q4_K_M "--imatrix $PL_TMP/skip.imatrix" "--imatrix $PL_TMP/skip.imatrix"
qrun

# what llama-quantize records about the imatrix, in our file
expect_rc 0 "$BIN" quantize --quiet "$I" "$PL_TMP/meta.gguf" Q4_K_M --imatrix "$IM"
expect_rc 0 "$BIN" inspect --json "$PL_TMP/meta.gguf"
/usr/bin/python3 - "$PL_TMP/out" "$IM" <<'PY' || fail "quantize.imatrix.* metadata is not what llama-quantize writes"
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
assert m["quantize.imatrix.file"] == sys.argv[2], m.get("quantize.imatrix.file")
assert m["quantize.imatrix.dataset"] == "pl_imatrix_gen random statistics"
assert m["quantize.imatrix.entries_count"] == 56 and m["quantize.imatrix.chunks_count"] == 4
assert m["general.file_type"] == 15 and m["general.quantization_version"] == 2
PY
ok

# refused: one line, exit 1, no file left -- and llama.cpp refuses too
refused() { # refused LABEL WANT-IN-MESSAGE OUR-ARGS... -- ORACLE-ARGS...
    local label=$1 want=$2 ours=() theirs=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do ours+=("$1"); shift; done
    shift
    theirs=("$@")
    rm -f "$PL_TMP/no.gguf" "$PL_TMP/no.gguf.partial"
    expect_rc 1 "$BIN" quantize "$I" "$PL_TMP/no.gguf" "${ours[@]}" || return
    expect_grep "$want" "$PL_TMP/err"
    ok
    [ "$(wc -l <"$PL_TMP/err")" = 1 ] || fail "$label: the error is not one line: $(cat "$PL_TMP/err")"
    ok
    { [ -e "$PL_TMP/no.gguf" ] || [ -e "$PL_TMP/no.gguf.partial" ]; } && fail "$label: a refused run left a file"
    [ ${#theirs[@]} = 0 ] && return
    ok
    "$ORACLE" quantize "$I" "$PL_TMP/no.gguf" "${theirs[@]}" -t 1 >/dev/null 2>&1 &&
        fail "$label: llama.cpp did not refuse it (so neither should we)"
}
for r in IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_XS IQ1_S IQ1_M Q2_K_S; do
    refused "$r without an imatrix" "needs an importance matrix" "$r" -- "$r"
done
refused "IQ2_XS, imatrix lacks blk.2.attn_q" "no importance data for blk.2.attn_q.weight" \
    IQ2_XS --imatrix "$PL_TMP/skip.imatrix" -- IQ2_XS --imatrix "$PL_TMP/skip.imatrix"
expect_rc 0 "$GEN" "$I" "$PL_TMP/short.imatrix" --resize blk.5.ffn_gate.weight
refused "an entry one column short" "is different from tensor size" \
    Q4_K_M --imatrix "$PL_TMP/short.imatrix" -- Q4_K_M --imatrix "$PL_TMP/short.imatrix"
expect_rc 0 "$GEN" "$IB" "$PL_TMP/other.imatrix"
refused "another model's imatrix" "is different from tensor size" \
    Q4_K_M --imatrix "$PL_TMP/other.imatrix" -- Q4_K_M --imatrix "$PL_TMP/other.imatrix"
# ours only: llama.cpp quietly quantizes without weights when no name matches
expect_rc 0 "$GEN" "$I" "$PL_TMP/renamed.imatrix" --rename x.
refused "an imatrix matching no tensor" "no entry for any tensor" Q4_K_M --imatrix "$PL_TMP/renamed.imatrix" --
# pure iq2_xxs with an imatrix that has no token_embd entry: iq2_xxs cannot
# do without weights (llama.cpp aborts in ggml here; we refuse)
refused "pure iq2_xxs" "token_embd.weight would be iq2_xxs" iq2_xxs --imatrix "$IM" --
printf 'not an imatrix at all' >"$PL_TMP/junk.imatrix"
refused "a junk imatrix file" "junk.imatrix" Q4_K_M --imatrix "$PL_TMP/junk.imatrix" --
refused "a missing imatrix file" "cannot open" Q4_K_M --imatrix "$PL_TMP/none.imatrix" --
qtable
done_testing
