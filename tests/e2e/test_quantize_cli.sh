# test_quantize_cli.sh -- `pocketllm quantize` as a user types it (no
# llama.cpp needed; the comparisons with llama-quantize are the
# tests/oracle/test_quantize*.sh): usage errors exit 2, runtime errors exit
# 1 with one line and leave no file, the thread count does not change a
# byte, the dry run lists the plan, progress and the summary go to stderr.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
M=$PL_TMP/m.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 256 --n-layer 2 --n-head 2 --n-head-kv 1 --head-dim 64 \
    --n-ff 288 --type f16 --seed 5 "$M"

nofile() { # nofile LABEL PATH : a failed run left nothing behind
    ok
    { [ -e "$2" ] || [ -e "$2.partial" ]; } && fail "$1: a failed run left a file"
    return 0
}
oneline() { # oneline LABEL : the error is one line
    ok
    [ "$(wc -l <"$PL_TMP/err")" = 1 ] || fail "$1: the error is not one line: $(head -c 300 "$PL_TMP/err")"
}

expect_rc 0 "$BIN" quantize --help && expect_grep "Q4_K_M" "$PL_TMP/out" && expect_grep "--imatrix" "$PL_TMP/out"
expect_rc 0 "$BIN" help quantize
# usage errors: 2
expect_rc 2 "$BIN" quantize
expect_rc 2 "$BIN" quantize "$M" "$PL_TMP/x.gguf"
expect_rc 2 "$BIN" quantize "$M" "$PL_TMP/x.gguf" Q4_K_M extra
expect_rc 2 "$BIN" quantize "$M" "$PL_TMP/x.gguf" Q4_K_M --frobnicate
expect_rc 2 "$BIN" quantize "$M" "$PL_TMP/x.gguf" Q4_K_M -t 0
expect_rc 2 "$BIN" quantize "$M" "$PL_TMP/x.gguf" Q4_K_M -t many
expect_rc 2 "$BIN" quantize "$M" "$PL_TMP/x.gguf" Q4_K_M --imatrix
# an unknown TYPE lists the valid names
for t in Q4_K_Z q4_K_M q9_0 q8_K ""; do
    expect_rc 2 "$BIN" quantize "$M" "$PL_TMP/x.gguf" "$t" || continue
    expect_grep "unknown type" "$PL_TMP/err"
    expect_grep "Q4_K_M" "$PL_TMP/err"
    expect_grep "IQ2_XXS" "$PL_TMP/err"
    expect_grep "iq4_nl" "$PL_TMP/err"
done
nofile "unknown type" "$PL_TMP/x.gguf"

# runtime errors: 1, one line, no file
expect_rc 1 "$BIN" quantize "$PL_TMP/missing.gguf" "$PL_TMP/x.gguf" Q8_0 && expect_grep "missing.gguf" "$PL_TMP/err"
oneline "missing input"
expect_rc 1 "$BIN" quantize "$M" "$PL_TMP/no/such/dir/x.gguf" Q8_0 && expect_grep "no/such/dir" "$PL_TMP/err"
oneline "output in a missing folder"
nofile "output in a missing folder" "$PL_TMP/no/such/dir/x.gguf"
printf 'this is not a model\n' >"$PL_TMP/text.gguf"
expect_rc 1 "$BIN" quantize "$PL_TMP/text.gguf" "$PL_TMP/x.gguf" Q8_0
oneline "input that is not GGUF"
# a GGUF without a model in it: the imatrix of the model
"$PL_TOOLS/pl_imatrix_gen" "$M" "$PL_TMP/m.imatrix" 2>/dev/null || fail "pl_imatrix_gen failed"
expect_rc 1 "$BIN" quantize "$PL_TMP/m.imatrix" "$PL_TMP/x.gguf" Q8_0 && expect_grep "not a model" "$PL_TMP/err"
oneline "a GGUF that is not a model"
expect_rc 1 "$BIN" quantize "$M" "$M" Q8_0 && expect_grep "same file" "$PL_TMP/err"
expect_rc 1 "$BIN" quantize "$M" "$PL_TMP/x.gguf" IQ2_XXS && expect_grep "needs an importance matrix" "$PL_TMP/err"
oneline "IQ2_XXS without imatrix"
expect_rc 1 "$BIN" quantize "$M" "$PL_TMP/x.gguf" Q4_K_M --imatrix "$PL_TMP/text.gguf"
oneline "an imatrix that is not one"
nofile "refused runs" "$PL_TMP/x.gguf"
# a truncated input: every tensor checked against the file before reading
head -c 300000 "$M" >"$PL_TMP/cut.gguf"
expect_rc 1 "$BIN" quantize "$PL_TMP/cut.gguf" "$PL_TMP/x.gguf" Q8_0
oneline "a truncated input"
nofile "a truncated input" "$PL_TMP/x.gguf"

# the thread count does not change a byte (rows are independent)
expect_rc 0 "$BIN" quantize --quiet -t 1 "$M" "$PL_TMP/t1.gguf" Q4_K_M
expect_rc 0 "$BIN" quantize --quiet --threads 3 "$M" "$PL_TMP/t3.gguf" Q4_K_M
ok
cmp -s "$PL_TMP/t1.gguf" "$PL_TMP/t3.gguf" || fail "1 and 3 threads wrote different bytes"
# the summary line on stderr, nothing on stdout
expect_rc 0 "$BIN" quantize "$M" "$PL_TMP/s.gguf" q8_0 && expect_grep "q8_0" "$PL_TMP/err"
ok
[ -s "$PL_TMP/out" ] && fail "quantize wrote to stdout"
expect_rc 0 "$BIN" inspect --json --tensors "$PL_TMP/s.gguf"
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "a pure q8_0 file is not what it should be"
import json, sys
d = json.load(open(sys.argv[1])); t = {x["name"]: x for x in d["tensors"]}
assert t["blk.0.attn_q.weight"]["type"] == "q8_0" and t["token_embd.weight"]["type"] == "q8_0"
assert t["blk.0.attn_norm.weight"]["type"] == "f32"     # 1-D: kept
assert d["metadata"]["general.file_type"] == 7 and d["metadata"]["general.quantization_version"] == 2
PY
ok
# the dry run: one line per tensor on stdout, no file
expect_rc 0 "$BIN" quantize --dry-run "$M" Q4_K_M && expect_grep "blk.1.ffn_down.weight" "$PL_TMP/out" &&
    expect_grep "total:" "$PL_TMP/out"
ok
# 2 layers of 11 tensors, token_embd, output_norm
[ "$(awk '$3 == "->"' "$PL_TMP/out" | wc -l)" = 24 ] || fail "dry run: not one line per tensor (24)"
# the real checkpoint (f32, 64 wide: every matrix falls back to q8_0 or f16)
STORIES=$PL_SHARED/models/stories260K.gguf
expect_rc 0 "$BIN" quantize --quiet "$STORIES" "$PL_TMP/st.gguf" Q4_K_M
expect_rc 0 "$BIN" inspect "$PL_TMP/st.gguf" && expect_grep "q8_0" "$PL_TMP/out"
done_testing
