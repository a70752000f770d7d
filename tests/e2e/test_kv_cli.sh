# test_kv_cli.sh -- the KV cache types on every command that opens a
# session (run, logits, chat, serve's options, bench, perplexity, embed,
# fit): --kv T sets K and V, -ctk/-ctv one of
# them (-ctk alone leaves V at f16, as llama.cpp), a quantized V turns
# flash attention on unless it is set off (then refused with the reason),
# a bad name exits 2 naming the choices, --help tells of them; a packed
# cache gives the same ids batched and one token at a time and under
# --lookup; bench and fit count the cache in its type.  That the ids equal
# llama.cpp's is tests/oracle/test_forward_kv.sh; the Python binding's
# kv_type / kv_type_v, tests/python/test_kv.py.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
Q=$PL_TMP/q.gguf
expect_rc 0 "$BIN" synth --quiet --shape small --type f16 --seed 3 "$Q" || { done_testing; exit 1; }
ids() { "$BIN" run -m "$Q" -p "Once upon a time there was" -n 24 -t 2 --print-ids "$@" 2>"$PL_TMP/ids.err" | tail -1; }

# the spellings: --kv = -ctk + -ctv; -ctk alone keeps V in f16
a=$(ids --kv q8_0) b=$(ids -ctk q8_0 -ctv q8_0) c=$(ids --cache-type-k q8_0 --cache-type-v q8_0 -fa on)
ok
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] || fail "--kv q8_0, -ctk/-ctv q8_0 and --cache-type-k/v q8_0 differ: '$a' '$b' '$c'"
a=$(ids -ctk q4_0) b=$(ids -ctk q4_0 -ctv f16 -fa off) c=$(ids -ctv f16 -ctk q4_0)
ok
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] || fail "-ctk q4_0 alone is not a q4_0 K over an f16 V: '$a' '$b' '$c'"
# batched prefill, one token a pass, one thread: the same ids
for kv in q8_0 iq4_nl bf16; do
    base=$(ids --kv $kv)
    for args in "--batch 1" "--batch 3 -t 1"; do
        # shellcheck disable=SC2086
        got=$(ids --kv $kv $args)
        ok
        [ "$got" = "$base" ] || fail "--kv $kv $args gives other ids than a batched prefill"
    done
    # prompt lookup verifies drafts in a batched pass over the packed cache
    got=$(ids --kv $kv --lookup 2)
    ok
    [ "$got" = "$base" ] || fail "--kv $kv --lookup 2 is not plain greedy"
done
# a quantized V: flash on by itself; refused with it set off
expect_rc 1 "$BIN" run -m "$Q" -p "Hi" -n 2 -ctv q5_0 -fa off
ok
grep -q "needs flash attention" "$PL_TMP/err" || fail "no reason for a quantized V without flash: $(cat "$PL_TMP/err")"
# bad names and heads a block does not fit
for cmd in run chat serve bench perplexity embed fit logits; do
    expect_rc 2 "$BIN" $cmd -m "$Q" -ctk q4_K
    ok
    grep -q "iq4_nl" "$PL_TMP/err" || fail "$cmd -ctk q4_K: the choices are not named: $(cat "$PL_TMP/err")"
    expect_rc 0 "$BIN" $cmd --help
    ok
    grep -q -- "-ctk T" "$PL_TMP/out" || fail "$cmd --help does not tell of -ctk"
done
expect_rc 1 "$BIN" run -m "$PL_SHARED/models/stories260K.gguf" -p "Hi" -n 2 --kv q5_1
ok
grep -q "heads of 8" "$PL_TMP/err" || fail "q5_1 on heads of 8: $(cat "$PL_TMP/err")"

# logits, chat, embed, perplexity run with a packed cache
expect_rc 0 "$BIN" logits -m "$Q" -p "Once upon a time" --out "$PL_TMP/l.f32" --kv q8_0
printf 'Hello\n' >"$PL_TMP/chat.in"
expect_rc 0 "$BIN" chat -m "$Q" --template "$QWEN3_TEMPLATE" -n 4 --kv q4_1 <"$PL_TMP/chat.in"
expect_rc 0 "$BIN" embed -m "$Q" --kv q8_0 "some text"
yes "The cat sat on the mat and looked at the sea." | head -c 6000 >"$PL_TMP/text.txt"
expect_rc 0 "$BIN" perplexity -m "$Q" --file "$PL_TMP/text.txt" --ctx 128 --chunks 2 --json --quiet --kv f16
p16=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ppl"])' "$PL_TMP/out")
expect_rc 0 "$BIN" perplexity -m "$Q" --file "$PL_TMP/text.txt" --ctx 128 --chunks 2 --json --quiet --kv q8_0
p8=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ppl"])' "$PL_TMP/out")
ok
echo "perplexity of the random model: f16 cache $p16, q8_0 cache $p8" >&2
# (a random model's perplexity is huge: compared as mean log-likelihoods)
/usr/bin/python3 -c "import math, sys; a, b = math.log(float(sys.argv[1])), math.log(float(sys.argv[2])); sys.exit(0 if a != b and abs(a - b) < 0.01 * a else 1)" "$p16" "$p8" ||
    fail "perplexity with a q8_0 cache ($p8) is not near, yet not equal to, the f16 cache's ($p16)"

# bench counts the cache in its type: q8_0 is 34 bytes a 32 values, f16 64
kvb() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["kv_bytes_per_token"], d["kv"], d["kv_v"], d["flash_attn"])' "$PL_TMP/out"; }
expect_rc 0 "$BIN" bench -m "$Q" -p 8 -n 8 -d 64 -r 1 --json --kv f16
read -r f16b k v fa < <(kvb)
expect_rc 0 "$BIN" bench -m "$Q" -p 8 -n 8 -d 64 -r 1 --json --kv q8_0
read -r q8b k v fa < <(kvb)
ok
[ "$k $v $fa" = "q8_0 q8_0 True" ] || fail "bench --kv q8_0 reports kv '$k', kv_v '$v', flash $fa"
[ $((q8b * 64)) = $((f16b * 34)) ] || fail "bench: KV bytes a token q8_0 $q8b, f16 $f16b: not 34/64"
expect_rc 0 "$BIN" bench -m "$Q" -p 8 -n 8 -d 64 -r 1 --json -ctk q4_0
read -r mixb k v fa < <(kvb)
ok
[ "$k $v $fa" = "q4_0 f16 False" ] || fail "bench -ctk q4_0 reports kv '$k', kv_v '$v', flash $fa"
[ $((mixb * 128)) = $((f16b * (64 + 18))) ] || fail "bench: KV bytes a token q4_0/f16 $mixb, f16 $f16b"

# fit counts the session's cache in its type
sess() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["session_bytes"])' "$PL_TMP/out"; }
expect_rc 0 "$BIN" fit -m "$Q" --memory 1G --ctx 4096 --plan --json --kv f16
s16=$(sess)
expect_rc 0 "$BIN" fit -m "$Q" --memory 1G --ctx 4096 --plan --json --kv q8_0
s8=$(sess)
ok
# 6 layers x 4096 positions x 2 x 128 values: 12 MiB in f16, 34/64 of it in q8_0
[ $((s16 - s8)) = $((6 * 4096 * 2 * 128 * 2 * 30 / 64)) ] ||
    fail "fit: session bytes f16 $s16, q8_0 $s8: the difference is not the cache's"

done_testing
