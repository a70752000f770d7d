# test_chat_spec.sh -- speculative decoding in `pocketllm chat` (--lookup,
# --draft): greedy replies are the plain chat's, byte for byte, over a
# three-turn conversation (the history re-rendered each turn: the draft
# model's cache is cut back to what the new prompt shares), with the model
# itself as the draft (every draft kept), its own q8_0 (most kept), prompt
# lookup, short drafts, and a context that fills mid-reply; the summary
# line counts drafted and kept tokens; bad combinations are refused.
# Model: a random-weight Qwen3 (tiny) with the real tokenizer and template.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16
expect_rc 0 "$BIN" quantize "$PL_TMP/m.gguf" "$PL_TMP/m-q8.gguf" q8_0
TURNS='Hello\nTell me a story about a dog.\nAnd then what happened?\n'

chat_out() { # NAME ARGS...: the replies of the three turns
    local name=$1; shift
    printf "$TURNS" | "$BIN" chat --model "$PL_TMP/m.gguf" -t 1 "$@" >"$PL_TMP/$name.out" 2>"$PL_TMP/$name.err"
    local rc=$?
    ok
    [ $rc = 0 ] || fail "chat $* exited $rc: $(head -c 300 "$PL_TMP/$name.err")"
}
same() { # NAME: the replies equal the plain chat's
    ok
    cmp -s "$PL_TMP/plain.out" "$PL_TMP/$1.out" ||
        fail "$1: the replies differ from plain greedy chat: $(diff "$PL_TMP/plain.out" "$PL_TMP/$1.out" | head -5)"
}
kept() { # NAME MIN_PERCENT: the summary line, at least that share kept
    ok
    local line
    line=$(grep "drafted" "$PL_TMP/$1.err")
    echo "$1: $line" >&2
    /usr/bin/python3 - "$line" "$2" <<'PY' || fail "$1: '$line' (wanted drafts, at least $2% kept)"
import re, sys
m = re.search(r"drafted (\d+) tokens, (\d+) kept", sys.argv[1])
assert m and int(m.group(1)) > 0 and int(m.group(2)) * 100 >= float(sys.argv[2]) * int(m.group(1))
PY
}

chat_out plain --ctx 2048 -n 40
chat_out self --ctx 2048 -n 40 --draft "$PL_TMP/m.gguf" && same self && kept self 100
chat_out q8 --ctx 2048 -n 40 --draft "$PL_TMP/m-q8.gguf" --draft-max 4 && same q8 && kept q8 50
chat_out short --ctx 2048 -n 40 -md "$PL_TMP/m.gguf" --draft-max 2 --draft-min 2 && same short
chat_out lookup --ctx 2048 -n 40 --lookup 3 && same lookup
grep -q "lookup drafted" "$PL_TMP/lookup.err" || fail "no lookup summary: $(cat "$PL_TMP/lookup.err")"
ok
# the context fills in the middle of the second reply, as plain chat's does
chat_out plainfull --ctx 120 -n 40
chat_out selffull --ctx 120 -n 40 --draft "$PL_TMP/m.gguf"
ok
cmp -s "$PL_TMP/plainfull.out" "$PL_TMP/selffull.out" || fail "a full context: the replies differ"
ok
grep -q "is full" "$PL_TMP/selffull.err" || fail "a full context was not reported: $(head -c 300 "$PL_TMP/selffull.err")"
# sampled: runs, and says what it drafted
chat_out sampled --ctx 2048 -n 30 --temperature 0.8 --seed 3 --draft "$PL_TMP/m.gguf" && kept sampled 1

expect_rc 2 "$BIN" chat --model "$PL_TMP/m.gguf" --lookup 2 --draft "$PL_TMP/m.gguf" &&
    expect_grep "give one" "$PL_TMP/err"
expect_rc 2 "$BIN" chat --model "$PL_TMP/m.gguf" --lookup 9
expect_rc 2 "$BIN" chat --model "$PL_TMP/m.gguf" --draft "$PL_TMP/m.gguf" --draft-min 5 --draft-max 2
expect_rc 2 "$BIN" chat --model "$PL_TMP/m.gguf" --lookup 2 --mmproj x.gguf && expect_grep "mmproj" "$PL_TMP/err"
printf 'Hi\n' | "$BIN" chat --model "$PL_TMP/m.gguf" --draft "$PL_SHARED/models/stories260K.gguf" >/dev/null 2>"$PL_TMP/err"
rc=$?
ok
[ $rc != 0 ] && grep -q "vocabulary" "$PL_TMP/err" || fail "a draft of another vocabulary: $(head -c 300 "$PL_TMP/err")"
done_testing
