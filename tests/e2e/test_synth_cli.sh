# test_synth_cli.sh -- `pocketllm synth` as a user types it: usage errors
# exit 2, runtime errors exit 1 and leave no file behind, the written file
# has the shape asked for and is deterministic.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
expect_rc 0 "$BIN" synth --help && expect_grep "qwen3-0.6b" "$PL_TMP/out"
expect_rc 2 "$BIN" synth --shape tiny
expect_rc 2 "$BIN" synth "$PL_TMP/x.gguf"
expect_rc 2 "$BIN" synth --shape nosuch "$PL_TMP/x.gguf" && expect_grep "unknown shape" "$PL_TMP/err"
expect_rc 2 "$BIN" synth --shape tiny --type q4_0 "$PL_TMP/x.gguf"
expect_rc 2 "$BIN" synth --shape tiny --arch gpt9 "$PL_TMP/x.gguf"
expect_rc 2 "$BIN" synth --shape tiny --n-head 3 "$PL_TMP/x.gguf" && expect_grep "multiple" "$PL_TMP/err"
expect_rc 2 "$BIN" synth --n-embd 64 "$PL_TMP/x.gguf"
expect_rc 2 "$BIN" synth --shape tiny --seed -4 "$PL_TMP/x.gguf"
expect_rc 1 "$BIN" synth --shape tiny "$PL_TMP/no/such/dir/x.gguf"
expect_rc 1 "$BIN" synth --shape tiny --vocab "$PL_TMP/missing.gguf" "$PL_TMP/x.gguf"
ok
[ -e "$PL_TMP/x.gguf" ] && fail "a failed synth left a file"
ls "$PL_TMP"/*.partial >/dev/null 2>&1 && fail "a failed synth left a partial file"

expect_rc 0 "$BIN" synth --quiet --n-embd 32 --n-layer 2 --n-head 4 --n-head-kv 1 --head-dim 8 --n-ff 64 --untied \
    --arch llama --type f16 "$PL_TMP/c.gguf"
expect_rc 0 "$BIN" inspect --json --tensors "$PL_TMP/c.gguf"
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "explicit shape not written as asked"
import json, sys
d = json.load(open(sys.argv[1])); h = d["hyperparameters"]
assert d["architecture"] == "llama"
assert (h["embedding_length"], h["block_count"], h["attention.head_count"], h["attention.head_count_kv"],
        h["feed_forward_length"], h["attention.key_length"]) == (32, 2, 4, 1, 64, 8), h
t = {x["name"]: x for x in d["tensors"]}
assert "output.weight" in t and t["output.weight"]["type"] == "f16"
assert t["blk.0.attn_q.weight"]["shape"] == [32, 32] and t["blk.0.attn_k.weight"]["shape"] == [32, 8]
assert t["blk.1.ffn_down.weight"]["shape"] == [64, 32]
assert t["blk.0.attn_norm.weight"]["type"] == "f32"
assert "blk.0.attn_q_norm.weight" not in t
assert d["tokenizer"]["vocab_size"] == 259 and t["token_embd.weight"]["shape"] == [32, 259]
PY
ok
done_testing
