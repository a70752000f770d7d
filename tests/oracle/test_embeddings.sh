# test_embeddings.sh -- `pocketllm embed` (pocketllm_embed) against
# llama.cpp's embeddings (pl_oracle embed: a context with embeddings on and
# the same pooling, llama_get_embeddings_seq, L2-normalised as
# llama-embedding does) on random-weight qwen3 checkpoints with the real
# Qwen2/Qwen3 vocabulary.  The pooling comes from the file's
# qwen3.pooling_type, written into copies of one checkpoint: last (with
# tokenizer.ggml.add_eos_token, as Qwen3-Embedding has it), mean and cls;
# and none, a vector per token, on the file without the key.  Inputs:
# short, Unicode, a special-token text, and one of a few hundred tokens;
# ours runs with the default batch (one pass) and with --batch 64 (that
# input in several passes, the pooling accumulated).  Every vector's
# cosine with llama.cpp's must be >= 0.9999; our mean pooling against
# llama.cpp's last must not be (the comparison sees a wrong pooling).
# Then (on the CPU) Qwen3-0.6B's widths (Qwen3-Embedding-0.6B's shape) cut
# to 2 layers in f16, last pooling with the end-of-text token appended; and a model
# asking for non-causal attention and an input longer than the context are
# refused.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
EDIT=$PL_TOOLS/pl_gguf_edit
PY=/usr/bin/python3
# our side runs on $PL_DEVICE when set (test_vulkan_embeddings.sh)
EMBED=("$BIN" embed ${PL_DEVICE:+--device "$PL_DEVICE"})
DEV_TAG=${PL_DEVICE:+, $PL_DEVICE}
# (on a device only the chunked passes: every pass shape is in them, and
# each run there pays the device's start-up)
BATCHES=$([ -n "${PL_DEVICE:-}" ] && echo 64 || echo "512 64")
VOCAB=$PL_ORACLE_DIR/src/models/ggml-vocab-qwen2.gguf
[ -f "$VOCAB" ] || { echo "FAIL: no Qwen2 vocabulary at $VOCAB" >&2; exit 1; }

IN=$PL_TMP/inputs.txt
{
    echo "Hello world"
    echo "The quick brown fox jumps over the lazy dog."
    echo "Ünïcödé: 日本語のテキスト, emoji 🙂 and math ∑ x²"
    echo "<|im_start|>user what is an embedding?<|im_end|>"
    long=""
    for i in $(seq 1 12); do long="$long Sentence $i of a long input that the batch of 64 cuts into several passes, pooled across them."; done
    echo "$long"
} >"$IN"

# cosine_check NAME MIN|MAX-BELOW OURS THEIRS : every vector of OURS against
# the same line of THEIRS (same count, same widths); "min" wants every
# cosine >= 0.9999, "below" wants some cosine < 0.9999
cosine_check() {
    local name=$1 want=$2 ours=$3 theirs=$4
    ok
    "$PY" - "$ours" "$theirs" "$want" <<'EOF' >"$PL_TMP/cos.out" 2>&1
import math, sys
def load(p):
    return [list(map(float, l.split())) for l in open(p) if l.strip()]
a, b, want = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
if len(a) != len(b) or not a:
    sys.exit("%d vectors against llama.cpp's %d" % (len(a), len(b)))
worst = 2.0
for i, (x, y) in enumerate(zip(a, b)):
    if len(x) != len(y):
        sys.exit("vector %d has %d floats, llama.cpp's %d" % (i, len(x), len(y)))
    nx, ny = math.sqrt(sum(p * p for p in x)), math.sqrt(sum(q * q for q in y))
    c = sum(p * q for p, q in zip(x, y)) / (nx * ny) if nx and ny else (1.0 if nx == ny else 0.0)
    worst = min(worst, c)
print("%d vectors of %d, min cosine %.7f" % (len(a), len(a[0]), worst))
sys.exit(0 if (worst >= 0.9999) == (want == "min") else 1)
EOF
    local rc=$?
    echo "$name: $(cat "$PL_TMP/cos.out")" >&2
    [ $rc = 0 ] || fail "$name: $([ "$want" = min ] && echo "a cosine under 0.9999" || echo "no cosine under 0.9999 for a wrong pooling"): $(cat "$PL_TMP/cos.out")"
}

# compare NAME MODEL POOLING [OUR OPTIONS...] : llama.cpp and ours (default
# batch, then --batch 64) on every input
compare() {
    local name=$1 model=$2 pooling=$3; shift 3
    expect_rc 0 "$ORACLE" embed "$model" --file "$IN" --pooling "$pooling" -t 1 || return
    cp "$PL_TMP/out" "$PL_TMP/theirs"
    for batch in $BATCHES; do
        "${EMBED[@]}" -m "$model" -t 2 --batch $batch "$@" <"$IN" >"$PL_TMP/ours" 2>"$PL_TMP/ours.err"
        ok
        [ $? = 0 ] || { fail "$name: pocketllm embed failed: $(head -c 300 "$PL_TMP/ours.err")"; continue; }
        cosine_check "$name, batch $batch$DEV_TAG" min "$PL_TMP/ours" "$PL_TMP/theirs"
    done
}

expect_rc 0 "$BIN" synth --quiet --vocab "$VOCAB" --shape tiny --type f32 --seed 5 "$PL_TMP/base.gguf" || exit 1
expect_rc 0 "$EDIT" "$PL_TMP/base.gguf" "$PL_TMP/last.gguf" --set-u32 qwen3.pooling_type 3 \
    --set-bool tokenizer.ggml.add_eos_token 1
expect_rc 0 "$EDIT" "$PL_TMP/base.gguf" "$PL_TMP/mean.gguf" --set-u32 qwen3.pooling_type 1
expect_rc 0 "$EDIT" "$PL_TMP/base.gguf" "$PL_TMP/cls.gguf" --set-u32 qwen3.pooling_type 2

# the end-of-text token the last pooling reads is appended, as llama.cpp appends it
expect_rc 0 "$BIN" tokenize --model "$PL_TMP/last.gguf" --text "Hello world" && cp "$PL_TMP/out" "$PL_TMP/tok.ours"
expect_rc 0 "$ORACLE" tokenize "$PL_TMP/last.gguf" --text "Hello world"
ok
cmp -s "$PL_TMP/out" "$PL_TMP/tok.ours" || fail "tokens with add_eos: ours $(cat "$PL_TMP/tok.ours"), llama.cpp $(cat "$PL_TMP/out")"
ok
[ "$(awk '{print $NF}' "$PL_TMP/tok.ours")" = 151643 ] || fail "add_eos_token: no <|endoftext|> at the end: $(cat "$PL_TMP/tok.ours")"

compare "tiny f32, pooling last (the file's), EOS appended" "$PL_TMP/last.gguf" last
compare "tiny f32, pooling mean (the file's)" "$PL_TMP/mean.gguf" mean
compare "tiny f32, pooling cls (the file's)" "$PL_TMP/cls.gguf" cls
compare "tiny f32, no pooling key: a vector per token" "$PL_TMP/base.gguf" none
expect_grep "declares no pooling" "$PL_TMP/ours.err"
compare "tiny f32, --pooling mean over the file's last" "$PL_TMP/last.gguf" mean --pooling mean
# unnormalised: the raw vectors agree too, and are not unit vectors
expect_rc 0 "$ORACLE" embed "$PL_TMP/last.gguf" --file "$IN" --pooling last --no-normalize -t 1 &&
    cp "$PL_TMP/out" "$PL_TMP/theirs.raw"
"${EMBED[@]}" -m "$PL_TMP/last.gguf" -t 2 --no-normalize <"$IN" >"$PL_TMP/ours.raw" 2>/dev/null
cosine_check "tiny f32, last, both unnormalised" min "$PL_TMP/ours.raw" "$PL_TMP/theirs.raw"
ok
"$PY" -c "
import sys, math
v = [float(x) for x in open(sys.argv[1]).readline().split()]
sys.exit(0 if abs(math.sqrt(sum(x * x for x in v)) - 1) > 0.01 else 1)" "$PL_TMP/ours.raw" ||
    fail "--no-normalize gave a unit vector"

# the comparison sees a wrong pooling
"${EMBED[@]}" -m "$PL_TMP/mean.gguf" -t 2 <"$IN" >"$PL_TMP/ours.mean" 2>/dev/null
expect_rc 0 "$ORACLE" embed "$PL_TMP/mean.gguf" --file "$IN" --pooling last -t 1 &&
    cosine_check "our mean against llama.cpp's last (must differ)" below "$PL_TMP/ours.mean" "$PL_TMP/out"

# Qwen3-Embedding-0.6B's shape: Qwen3-0.6B's widths, 2 layers, f16 (on the
# CPU only: on lavapipe the upload and the passes of its 151936-row
# embedding table take minutes, and test_vulkan_forward.sh covers the
# device's ops at these widths)
[ -z "${PL_DEVICE:-}" ] &&
expect_rc 0 "$BIN" synth --quiet --vocab "$VOCAB" --shape qwen3-0.6b --n-layer 2 --type f16 --seed 9 "$PL_TMP/big.gguf" &&
    expect_rc 0 "$EDIT" "$PL_TMP/big.gguf" "$PL_TMP/big-last.gguf" --set-u32 qwen3.pooling_type 3 \
        --set-bool tokenizer.ggml.add_eos_token 1 &&
    compare "qwen3-0.6b widths, 2 layers, f16, pooling last, EOS appended" "$PL_TMP/big-last.gguf" last
rm -f "$PL_TMP"/big*.gguf

# a model that asks for non-causal attention (<arch>.attention.causal false):
# refused rather than pooled from causal states
expect_rc 0 "$EDIT" "$PL_TMP/base.gguf" "$PL_TMP/noncausal.gguf" --set-u32 qwen3.pooling_type 1 \
    --set-bool qwen3.attention.causal 0 &&
    expect_rc 1 "${EMBED[@]}" -m "$PL_TMP/noncausal.gguf" "Hello world" &&
    expect_grep "non-causal attention is not supported" "$PL_TMP/err"

# longer than the context: refused, in one line, exit 1
"${EMBED[@]}" -m "$PL_TMP/last.gguf" --ctx 32 "$(tail -1 "$IN")" >/dev/null 2>"$PL_TMP/err"
rc=$?
ok
[ $rc = 1 ] || fail "an input over --ctx exited $rc, expected 1"
expect_grep "do not fit the context of 32 positions" "$PL_TMP/err"
done_testing
