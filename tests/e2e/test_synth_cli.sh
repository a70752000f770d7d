# test_synth_cli.sh -- `pocketllm synth` as a user types it: usage errors
# exit 2, runtime errors exit 1 and leave no file behind, the written file
# has the shape asked for and is deterministic.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
expect_rc 0 "$BIN" synth --help && expect_grep "qwen3-0.6b" "$PL_TMP/out"
for w in qwen3moe-30b-a3b qwen2moe-a2.7b moe-tiny --n-expert-used --n-ff-shexp Q4_K_M; do expect_grep "$w" "$PL_TMP/out"; done
expect_rc 2 "$BIN" synth --shape tiny
expect_rc 2 "$BIN" synth "$PL_TMP/x.gguf"
expect_rc 2 "$BIN" synth --shape nosuch "$PL_TMP/x.gguf" && expect_grep "unknown shape" "$PL_TMP/err"
# refuse RC TEXT ARGS... : synth ARGS exits RC with one line that says TEXT
refuse() {
    local rc=$1 text=$2
    shift 2
    expect_rc "$rc" "$BIN" synth "$@" "$PL_TMP/x.gguf" && expect_grep "$text" "$PL_TMP/err" || return 1
    ok
    [ "$(wc -l <"$PL_TMP/err")" = 1 ] || fail "synth $*: a refusal of more than one line: $(cat "$PL_TMP/err")"
}
# mixtures of experts: bad combinations
refuse 2 "only 8 experts" --shape moe-tiny --n-expert-used 9
refuse 2 "at least 1" --shape moe-tiny --n-expert 0
refuse 2 "at most 1024" --shape moe-tiny --n-expert 2000
refuse 2 "no shared expert" --shape moe-tiny --n-ff-shexp 64
refuse 2 "mixture-of-experts arch" --shape tiny --n-expert 4
refuse 2 "is a mixture of experts" --shape moe-tiny --arch qwen3
refuse 2 "expert count" --shape tiny --arch qwen3moe
refuse 2 "n_head x head_dim" --shape moe-tiny --arch qwen2moe --head-dim 8
refuse 2 "--n-ff-exp" --arch qwen3moe --n-embd 64 --n-layer 1 --n-head 4 --n-head-kv 2
refuse 2 "--mmproj takes" --shape qwen3vl-2b --type Q4_K_M --mmproj "$PL_TMP/x.gguf"
# a rung this build cannot encode is a runtime refusal
refuse 1 "cannot encode" --shape moe-small --type Q1_0
refuse 2 "neither" --shape tiny --type q4_9
refuse 2 "neither" --shape tiny --type Q4_K_XL
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

# an explicit mixture of experts: the converter's tensors, the defaults
expect_rc 0 "$BIN" synth --quiet --arch qwen2moe --n-embd 64 --n-layer 2 --n-head 4 --n-head-kv 2 --head-dim 16 \
    --n-expert 4 --n-expert-used 2 --n-ff-exp 32 --n-ff-shexp 48 --type f16 "$PL_TMP/m.gguf"
expect_rc 0 "$BIN" inspect --json --tensors "$PL_TMP/m.gguf"
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "explicit MoE shape not written as asked"
import json, sys
d = json.load(open(sys.argv[1])); h = d["hyperparameters"]
assert d["architecture"] == "qwen2moe"
assert (h["expert_count"], h["expert_used_count"], h["expert_feed_forward_length"],
        h["expert_shared_feed_forward_length"], h["feed_forward_length"]) == (4, 2, 32, 48, 64), h
t = {x["name"]: x for x in d["tensors"]}
assert t["blk.1.ffn_gate_exps.weight"]["shape"] == [64, 32, 4] and t["blk.1.ffn_gate_exps.weight"]["type"] == "f16"
assert t["blk.1.ffn_down_exps.weight"]["shape"] == [32, 64, 4]
assert t["blk.0.ffn_gate_inp.weight"]["shape"] == [64, 4] and t["blk.0.ffn_gate_inp.weight"]["type"] == "f32"
assert t["blk.0.ffn_gate_inp_shexp.weight"]["shape"] == [64] and t["blk.0.ffn_down_shexp.weight"]["shape"] == [48, 64]
assert t["blk.0.attn_k.bias"]["shape"] == [32] and "output.weight" in t and "blk.0.ffn_up.weight" not in t
PY
ok

# a quantized rung written directly: the recipe's metadata, progress for a
# big file (stderr is not a terminal: every 10%)
expect_rc 0 "$BIN" synth --shape qwen3-0.6b --n-layer 1 --type Q4_K_M "$PL_TMP/q.gguf"
expect_grep "synth: 100% of" "$PL_TMP/err"
expect_rc 0 "$BIN" inspect --json --tensors "$PL_TMP/q.gguf"
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "Q4_K_M rung not written as llama-quantize would"
import json, sys
d = json.load(open(sys.argv[1])); m = d["metadata"]
assert m["general.file_type"] == 15 and m["general.quantization_version"] == 2, m
t = {x["name"]: x["type"] for x in d["tensors"]}
# tied: the embedding is the output (q6_K); the one layer uses more bits for attn_v and ffn_down
assert t["token_embd.weight"] == "q6_K" and t["blk.0.attn_q.weight"] == "q4_K", t
assert t["blk.0.attn_v.weight"] == "q6_K" and t["blk.0.ffn_down.weight"] == "q6_K", t
assert t["blk.0.attn_norm.weight"] == "f32"
PY
ok
done_testing
