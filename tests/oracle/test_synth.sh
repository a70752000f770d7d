# test_synth.sh -- `pocketllm synth` output loads and runs in llama.cpp
# (greedy decoding through the oracle, flash attention off, f16 KV) and is
# deterministic (same arguments, same bytes):
#  - tiny and small, qwen3 and llama, tied and untied, f32/f16/bf16, at full
#    depth, each written twice and compared byte for byte;
#  - every named Qwen3 shape at its real widths (vocabulary 151936 included)
#    with the depth cut to one layer (--n-layer 1) so that the suite stays
#    within its time and disk budget: the layer is the real layer, the
#    missing ones are repeats of it; qwen3-0.6b also at f32/bf16 untied.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN

# synth_run NAME ARGS... : write, check llama.cpp loads it and generates
synth_run() {
    local name=$1; shift
    local f="$PL_TMP/$name.gguf"
    expect_rc 0 "$BIN" synth --quiet "$@" "$f" || return 1
    expect_rc 0 "$ORACLE" greedy "$f" --prompt "Once upon a time" -n 8 --fa off --kv f16 || return 1
    local n
    n=$(wc -w <"$PL_TMP/out")
    ok
    [ "$n" -ge 1 ] || fail "$name: llama.cpp generated nothing"
}

for arch in qwen3 llama; do
    for shape in tiny small; do
        for type in f32 f16 bf16; do
            for tie in "" --untied; do
                name="$arch-$shape-$type${tie:+-untied}"
                synth_run "$name" --arch "$arch" --shape "$shape" --type "$type" $tie --seed 7 || continue
                expect_rc 0 "$BIN" synth --quiet --arch "$arch" --shape "$shape" --type "$type" $tie --seed 7 "$PL_TMP/again.gguf"
                ok
                cmp -s "$PL_TMP/$name.gguf" "$PL_TMP/again.gguf" || fail "$name: a second run wrote different bytes"
                rm -f "$PL_TMP/$name.gguf" "$PL_TMP/again.gguf"
            done
        done
    done
done
# a different seed gives different weights
expect_rc 0 "$BIN" synth --quiet --shape tiny --seed 1 "$PL_TMP/s1.gguf"
expect_rc 0 "$BIN" synth --quiet --shape tiny --seed 2 "$PL_TMP/s2.gguf"
ok
cmp -s "$PL_TMP/s1.gguf" "$PL_TMP/s2.gguf" && fail "seeds 1 and 2 wrote the same bytes"

# the real Qwen3 widths, one layer each
for shape in qwen3-0.6b qwen3-1.7b qwen3-4b qwen3-8b; do
    synth_run "$shape" --shape "$shape" --n-layer 1 --type f16
    expect_rc 0 "$BIN" inspect --json "$PL_TMP/$shape.gguf"
    /usr/bin/python3 - "$PL_TMP/out" "$shape" <<'PY' || fail "$shape: hyperparameters are not Qwen3's"
import json, sys
d = json.load(open(sys.argv[1])); h = d["hyperparameters"]
want = {"qwen3-0.6b": (1024, 16, 8, 3072), "qwen3-1.7b": (2048, 16, 8, 6144),
        "qwen3-4b": (2560, 32, 8, 9728), "qwen3-8b": (4096, 32, 8, 12288)}[sys.argv[2]]
got = (h["embedding_length"], h["attention.head_count"], h["attention.head_count_kv"], h["feed_forward_length"])
assert got == want, (got, want)
assert h["attention.key_length"] == 128 and h["rope.freq_base"] == 1e6 and d["tokenizer"]["vocab_size"] == 151936
PY
    ok
    rm -f "$PL_TMP/$shape.gguf"
done
synth_run q06-f32-untied --shape qwen3-0.6b --n-layer 1 --type f32 --untied && rm -f "$PL_TMP/q06-f32-untied.gguf"
synth_run q06-bf16-untied --shape qwen3-0.6b --n-layer 1 --type bf16 --untied && rm -f "$PL_TMP/q06-bf16-untied.gguf"

# with the real Qwen2/Qwen3 vocabulary and a chat template copied in
VOCAB=$LLAMA_SRC/models/ggml-vocab-qwen2.gguf
TEMPLATE=$LLAMA_SRC/models/templates/Qwen-Qwen3-0.6B.jinja
synth_run qwen-vocab --shape small --vocab "$VOCAB" --template "$TEMPLATE"
expect_rc 0 "$BIN" inspect --json "$PL_TMP/qwen-vocab.gguf"
/usr/bin/python3 - "$PL_TMP/out" "$TEMPLATE" <<'PY' || fail "vocabulary or template not copied"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tokenizer"]["vocab_size"] == 151936 and d["tokenizer"]["pre"] == "qwen2"
assert d["metadata"]["tokenizer.chat_template"] == open(sys.argv[2], encoding="utf-8").read()
PY
ok
done_testing
