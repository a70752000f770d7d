# test_grammar_gbnf.sh -- GBNF-constrained generation judged by llama.cpp's
# own grammar engine: every grammar of the bundle's grammars/ folder (json,
# json_arr, arithmetic, list, c, chess, english, japanese) is parsed by
# llama.cpp (pl_oracle_grammar --parse-only) and by `pocketllm run
# --grammar`; the ids `run` samples under it (temperature 1, three seeds,
# a random-weight qwen3 with the real Qwen2 vocabulary) are replayed
# through llama_sampler_init_grammar token by token -- each must be one
# llama.cpp allows there -- and, since -n is a budget the text is finished
# in, the text must end as a whole match.  Also: greedy decoding under a
# grammar is the most likely allowed token (it equals unconstrained greedy
# when that already obeys), and bad grammars are refused in one line.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
JUDGE=$(dirname "$ORACLE")/pl_oracle_grammar
[ -x "$JUDGE" ] || { echo "FAIL: $JUDGE is not built" >&2; exit 1; }
VOCAB=$LLAMA_SRC/models/ggml-vocab-qwen2.gguf
M=$PL_TMP/m.gguf
expect_rc 0 "$BIN" synth --quiet --shape tiny --type f16 --seed 7 --vocab "$VOCAB" \
    --template "$LLAMA_SRC/models/templates/Qwen-Qwen3-0.6B.jinja" "$M"

for g in json json_arr arithmetic list c chess english japanese; do
    G=$LLAMA_SRC/grammars/$g.gbnf
    [ -f "$G" ] || { fail "the bundle lacks grammars/$g.gbnf"; continue; }
    expect_rc 0 "$JUDGE" "$VOCAB" "$G" --parse-only || continue
    for seed in 1 2 3; do
        expect_rc 0 "$BIN" run --model "$M" --grammar "$G" --prompt "Write something:" -n 48 \
            --temperature 1 --top-k 0 --top-p 1 --min-p 0 --seed "$seed" --print-ids -t 1 || continue
        sed -n 2p "$PL_TMP/out" >"$PL_TMP/ids"
        n=$(wc -w <"$PL_TMP/ids")
        ok
        [ "$n" -ge 1 ] || { fail "$g seed $seed: nothing generated"; continue; }
        "$JUDGE" "$VOCAB" "$G" "$PL_TMP/ids" --complete >"$PL_TMP/judge" 2>&1
        rc=$?
        ok
        [ "$rc" = 0 ] || fail "$g seed $seed: llama.cpp's grammar engine says $(cat "$PL_TMP/judge") (ids: $(head -c 300 "$PL_TMP/ids"))"
    done
done

# greedy: the constraint changes nothing when the unconstrained choice obeys
printf 'root ::= [^\\x00]*\n' >"$PL_TMP/any.gbnf"
expect_rc 0 "$BIN" run --model "$M" --prompt "Once upon a time" -n 24 --print-ids -t 1
sed -n 2p "$PL_TMP/out" >"$PL_TMP/free.ids"
expect_rc 0 "$BIN" run --model "$M" --grammar "$PL_TMP/any.gbnf" --prompt "Once upon a time" -n 24 --print-ids -t 1
sed -n 2p "$PL_TMP/out" >"$PL_TMP/any.ids"
ok
cmp -s "$PL_TMP/free.ids" "$PL_TMP/any.ids" || fail "greedy under an all-allowing grammar differs: $(cat "$PL_TMP/free.ids") vs $(cat "$PL_TMP/any.ids")"

# refusals, one line each, exit 1
printf 'root ::= root "a" | "b"\n' >"$PL_TMP/left.gbnf"
printf 'root ::= undefined-rule\n' >"$PL_TMP/undef.gbnf"
printf 'root ::= "unterminated\n' >"$PL_TMP/syntax.gbnf"
# nested rules that can each match nothing: 2^30 parse stacks at the start
{ echo 'root ::= r1 r1'; for i in $(seq 1 29); do echo "r$i ::= r$((i + 1)) r$((i + 1))"; done
  echo 'r30 ::= "x" | ""'; } >"$PL_TMP/ambiguous.gbnf"
for bad in left:left-recursive undef:"never defined" syntax:"unexpected end" ambiguous:"too ambiguous"; do
    f=${bad%%:*} want=${bad#*:}
    expect_rc 1 "$BIN" run --model "$M" --grammar "$PL_TMP/$f.gbnf" --prompt x -n 4
    expect_grep "$want" "$PL_TMP/err"
    ok
    [ "$(wc -l <"$PL_TMP/err")" = 1 ] || fail "the refusal of $f.gbnf is not one line: $(cat "$PL_TMP/err")"
done
expect_rc 2 "$BIN" run --model "$M" --grammar "$PL_TMP/any.gbnf" --json-schema "$PL_TMP/any.gbnf" --prompt x
done_testing
