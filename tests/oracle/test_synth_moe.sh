# test_synth_moe.sh -- `pocketllm synth` for mixtures of experts (qwen3moe,
# qwen2moe): llama.cpp loads and greedily runs every MoE shape, and the file
# holds what llama.cpp's converter writes:
#  - moe-tiny, moe-small, qwen2moe-tiny, an --arch switch and explicit
#    expert dimensions, f32/f16/bf16, tied and untied, each written twice
#    and compared byte for byte;
#  - the real Qwen3-30B-A3B and Qwen1.5-MoE-A2.7B widths (vocabulary 151936,
#    all 128 / 60 experts) cut to one layer and written directly as Q4_K_M,
#    for the suite's time and disk: their hyperparameters, tensor shapes and
#    types (experts 3-D, routers f32, qwen2moe's biases and shared expert,
#    no dense FFN);
#  - the router's scale: logits of std ~2 for a unit-RMS input.
#  - our forward pass on a moe-small written directly at Q4_K_M against
#    llama.cpp's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"
T=$PL_TMP

# synth_run NAME ARGS... : write, check llama.cpp loads it and generates
synth_run() {
    local name=$1; shift
    expect_rc 0 "$BIN" synth --quiet "$@" "$T/$name.gguf" || return 1
    expect_rc 0 "$ORACLE" greedy "$T/$name.gguf" --prompt "Once upon a time" -n 8 --fa off --kv f16 -t 1 || return 1
    ok
    [ "$(wc -w <"$T/out")" -ge 1 ] || fail "$name: llama.cpp generated nothing"
}

# the same arguments twice give the same bytes
synth_twice() {
    local name=$1; shift
    synth_run "$name" "$@" || return 1
    expect_rc 0 "$BIN" synth --quiet "$@" "$T/again.gguf"
    ok
    cmp -s "$T/$name.gguf" "$T/again.gguf" || fail "$name: a second run wrote different bytes"
    rm -f "$T/$name.gguf" "$T/again.gguf"
}

for type in f32 f16 bf16; do
    for tie in "" --untied; do
        synth_twice "moe-tiny-$type${tie:+-untied}" --shape moe-tiny --type "$type" $tie --seed 7
    done
    synth_twice "qwen2moe-tiny-$type" --shape qwen2moe-tiny --type "$type" --seed 7
done
synth_twice moe-small --shape moe-small --type f16
synth_twice moe-tiny-as-qwen2moe --shape moe-tiny --arch qwen2moe --type f16
synth_twice qwen2moe-as-qwen3moe --shape qwen2moe-tiny --arch qwen3moe --type f16
synth_twice dense-as-moe --shape tiny --arch qwen3moe --n-expert 4 --n-expert-used 2 --type f16
synth_twice explicit-moe --arch qwen2moe --n-embd 128 --n-layer 2 --n-head 4 --n-head-kv 2 --head-dim 32 \
    --n-expert 12 --n-expert-used 3 --n-ff-exp 64 --n-ff-shexp 96 --type f16
expect_rc 0 "$BIN" synth --quiet --shape moe-tiny --seed 1 "$T/s1.gguf"
expect_rc 0 "$BIN" synth --quiet --shape moe-tiny --seed 2 "$T/s2.gguf"
ok
cmp -s "$T/s1.gguf" "$T/s2.gguf" && fail "moe-tiny: seeds 1 and 2 wrote the same bytes"

# what the file holds, against the converter's layout; the router's scale
cat >"$T/layout.py" <<'PY'
# layout.py INSPECT_JSON MODEL WANT: hyperparameters, tensors, router scale
import array, json, math, sys
d = json.load(open(sys.argv[1])); h = d["hyperparameters"]; want = json.loads(sys.argv[3])
t = {x["name"]: x for x in d["tensors"]}
for k, v in want["hp"].items():
    assert abs(h[k] - v) <= 1e-6 * abs(v), (k, h[k], v)
assert d["metadata"]["general.file_type"] == want["file_type"], d["metadata"]["general.file_type"]
e, f, n, s = h["embedding_length"], h["expert_feed_forward_length"], h["expert_count"], want.get("shexp")
shapes = {"ffn_gate_inp.weight": [e, n], "ffn_gate_exps.weight": [e, f, n], "ffn_up_exps.weight": [e, f, n],
          "ffn_down_exps.weight": [f, e, n]}
if s:
    q = h["attention.head_count"] * h["attention.key_length"]; kv = h["attention.head_count_kv"] * h["attention.key_length"]
    shapes.update({"ffn_gate_inp_shexp.weight": [e], "ffn_gate_shexp.weight": [e, s], "ffn_up_shexp.weight": [e, s],
                   "ffn_down_shexp.weight": [s, e], "attn_q.bias": [q], "attn_k.bias": [kv], "attn_v.bias": [kv]})
else:
    shapes.update({"attn_q_norm.weight": [h["attention.key_length"]], "attn_k_norm.weight": [h["attention.key_length"]]})
for l in range(h["block_count"]):
    for k, v in shapes.items():
        x = t["blk.%d.%s" % (l, k)]
        assert x["shape"] == v, (x["name"], x["shape"], v)
        if len(v) == 1 or k == "ffn_gate_inp.weight":
            assert x["type"] == "f32", (x["name"], x["type"])
    for k in ("ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"):
        assert "blk.%d.%s" % (l, k) not in t, "a dense " + k
    if not s:
        for k in ("attn_q.bias", "ffn_gate_inp_shexp.weight"):
            assert "blk.%d.%s" % (l, k) not in t, k
assert ("output.weight" in t) == want["untied"], "output.weight"
assert d["tokenizer"]["vocab_size"] == want["vocab"]
# router logits' spread for a unit-RMS input: sqrt(n_embd) x the weights' std
r = t["blk.0.ffn_gate_inp.weight"]
w = array.array("f")
with open(sys.argv[2], "rb") as m:
    m.seek(r["offset"]); w.frombytes(m.read(r["bytes"]))
spread = math.sqrt(e * sum(x * x for x in w) / len(w))
assert 1.8 < spread < 2.2, spread
print("%s: layout as the converter writes it, router logits' std %.3f" % (d["name"], spread))
PY
layout() {
    local name=$1 want=$2
    expect_rc 0 "$BIN" inspect --json --tensors "$T/$name.gguf" || return 1
    cp "$T/out" "$T/$name.json"
    python3 "$T/layout.py" "$T/$name.json" "$T/$name.gguf" "$want" >"$T/layout.out" 2>&1
    script_verdict $? "$T/layout.out" "$name: not the layout llama.cpp's converter writes"
}
synth_run moe-small --shape moe-small --type f16
layout moe-small '{"hp": {"expert_count": 16, "expert_used_count": 4, "expert_feed_forward_length": 256,
    "block_count": 4, "embedding_length": 256}, "file_type": 1, "untied": false, "vocab": 259}'
synth_run qwen2moe-tiny --shape qwen2moe-tiny --type f32
layout qwen2moe-tiny '{"hp": {"expert_count": 6, "expert_used_count": 2, "expert_feed_forward_length": 32,
    "expert_shared_feed_forward_length": 64}, "file_type": 0, "untied": true, "vocab": 259, "shexp": 64}'

# the real widths, one layer each, written directly as Q4_K_M
synth_run q30 --shape qwen3moe-30b-a3b --n-layer 1 --type Q4_K_M
layout q30 '{"hp": {"expert_count": 128, "expert_used_count": 8, "expert_feed_forward_length": 768,
    "embedding_length": 2048, "feed_forward_length": 6144, "attention.head_count": 32, "attention.head_count_kv": 4,
    "attention.key_length": 128, "context_length": 40960, "rope.freq_base": 1e6,
    "attention.layer_norm_rms_epsilon": 1e-6, "block_count": 1}, "file_type": 15, "untied": true, "vocab": 151936}'
rm -f "$T/q30.gguf"
synth_run a27 --shape qwen2moe-a2.7b --n-layer 1 --type Q4_K_M
layout a27 '{"hp": {"expert_count": 60, "expert_used_count": 4, "expert_feed_forward_length": 1408,
    "expert_shared_feed_forward_length": 5632, "embedding_length": 2048, "feed_forward_length": 5632,
    "attention.head_count": 16, "attention.head_count_kv": 16, "context_length": 8192, "rope.freq_base": 1e6,
    "attention.layer_norm_rms_epsilon": 1e-6}, "file_type": 15, "untied": true, "vocab": 151936, "shexp": 5632}'
rm -f "$T/a27.gguf"

# ---- our forward pass on a directly-quantized MoE file, against llama.cpp's --
# (greedy ids up to llama.cpp's first undecidable step, teacher-forced logits,
# with the ladder's margins; test_forward_moe.sh holds the files llama.cpp
# quantizes, so one directly-written rung here.)  Untied: a tied model's
# logit ranges make few steps decidable (ladder_lib.sh).
expect_rc 0 "$BIN" synth --quiet --shape moe-small --untied --type Q4_K_M --seed 3 "$T/e.gguf" &&
    ROUTER_MARGIN=2e-2 forward_check "moe-small Q4_K_M (synth)" "$T/e.gguf" f16 0.2 2e-2 32
done_testing
