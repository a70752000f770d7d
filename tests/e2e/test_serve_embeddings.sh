# test_serve_embeddings.sh -- POST /v1/embeddings through the official
# `openai` npm client (serve_embed_client.js): a string, an array of
# strings, base64 (the client's own default, and asked for), dimensions,
# token arrays, an input longer than the server's batch, --pooling on a
# model that declares none (and the 400 without it), embeddings beside a
# completion whose greedy text must not change -- every vector equal, float
# for float, to what `pocketllm embed --json` prints for the same input with
# the same passes -- and two dozen bad requests answered with a 400 that
# names the problem.  Model: a random-weight Qwen3 (tiny shape) with the
# real Qwen2/Qwen3 tokenizer, qwen3.pooling_type last and
# tokenizer.ggml.add_eos_token set (Qwen3-Embedding's keys).
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
NODE_MODULES=$(bash "$PL_SRC/scripts/install-test-npm.sh" 2>"$PL_TMP/npm.err") || {
    echo "FAIL: the openai npm client could not be installed: $(tail -3 "$PL_TMP/npm.err")" >&2
    exit 1
}
EDIT=$PL_TOOLS/pl_gguf_edit
serve_model "$PL_TMP/base.gguf" --shape tiny --type f32 --seed 5
expect_rc 0 "$EDIT" "$PL_TMP/base.gguf" "$PL_TMP/emb.gguf" --set-u32 qwen3.pooling_type 3 \
    --set-bool tokenizer.ggml.add_eos_token 1 || exit 1

# the server's passes hold --batch 32 + --parallel 2 tokens: the CLI runs
# the same passes (--batch 34) on one thread, so the floats are the same
LONG=""
for i in $(seq 1 8); do LONG="$LONG Sentence $i of an input longer than the server's batch of thirty-two tokens."; done
cli() {
    local out=$1; shift
    "$BIN" embed -t 1 --batch 34 --json "$@" >"$PL_TMP/$out" 2>"$PL_TMP/cli.err" ||
        fail "pocketllm embed $* failed: $(head -c 300 "$PL_TMP/cli.err")"
    ok
}
cli one.json -m "$PL_TMP/emb.gguf" "Hello world"
cli two.json -m "$PL_TMP/emb.gguf" "first text" "second, longer text"
cli dims.json -m "$PL_TMP/emb.gguf" --dimensions 16 "first text" "second, longer text"
cli ids.json -m "$PL_TMP/emb.gguf" --ids "1 2 3 4 5" "42 43"
cli long.json -m "$PL_TMP/emb.gguf" "$LONG"
cli mean.json -m "$PL_TMP/base.gguf" --pooling mean "Hello world"
# the CLI reads standard input too: one input a line
printf 'first text\n\nsecond, longer text\n' | "$BIN" embed -t 1 --batch 34 --json -m "$PL_TMP/emb.gguf" >"$PL_TMP/stdin.json" 2>/dev/null
ok
cmp -s "$PL_TMP/stdin.json" "$PL_TMP/two.json" || fail "embed from standard input differs from the same texts as arguments"

# the options
expect_rc 2 "$BIN" serve --model "$PL_TMP/emb.gguf" --pooling median
expect_grep "--pooling wants mean, cls or last" "$PL_TMP/err"
expect_rc 0 "$BIN" serve --help
expect_grep "POST /v1/embeddings" "$PL_TMP/out"
expect_grep "--pooling P" "$PL_TMP/out"
expect_rc 0 "$BIN" embed --help
expect_grep "--pooling P" "$PL_TMP/out"
expect_rc 2 "$BIN" embed -m "$PL_TMP/emb.gguf" --pooling rank x
expect_rc 1 "$BIN" embed -m "$PL_TMP/emb.gguf" --ids "1 999999"
expect_grep "outside the vocabulary" "$PL_TMP/err"

serve_start nopool --model "$PL_TMP/base.gguf" --name emb --ctx 256 --parallel 1 -t 1
NOPOOL_PID=$SERVER_PID NOPOOL_LOG=$SERVER_LOG NOPOOL_BASE=$BASE/v1
serve_start mean --model "$PL_TMP/base.gguf" --name emb --ctx 256 --parallel 2 --batch 32 -t 1 --pooling mean
MEAN_PID=$SERVER_PID MEAN_LOG=$SERVER_LOG MEAN_BASE=$BASE/v1
serve_start main --model "$PL_TMP/emb.gguf" --name emb --ctx 256 --parallel 2 --batch 32 -t 1

BASE=$BASE/v1 MODEL=emb MEAN_BASE=$MEAN_BASE NOPOOL_BASE=$NOPOOL_BASE DIR=$PL_TMP LONG=$LONG \
    NODE_PATH=$NODE_MODULES node "$(dirname "$0")/serve_embed_client.js" >"$PL_TMP/node.out" 2>"$PL_TMP/node.err"
script_verdict $? "$PL_TMP/node.out" "the embeddings client checks failed: $(head -c 3000 "$PL_TMP/node.err")"
ok
grep -q "openai embeddings client: [0-9]* checks, 0 failed" "$PL_TMP/node.out" || fail "the client did not report its checks"

serve_stop
SERVER_PID=$MEAN_PID SERVER_LOG=$MEAN_LOG serve_stop
SERVER_PID=$NOPOOL_PID SERVER_LOG=$NOPOOL_LOG serve_stop
done_testing
