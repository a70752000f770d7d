# test_oracle_basics.sh -- the oracle itself works: llama.cpp loads
# stories260K and its greedy ids from BOS begin 1 403 407 261 378 432 383
# 286 261 376 (flash attention off, f16 KV); our type table equals
# libggml-base's; our f16/bf16 conversions equal ggml's bit for bit.
. "$(dirname "$0")/lib.sh"
MODEL=$PL_SHARED/models/stories260K.gguf

expect_rc 0 "$ORACLE" greedy "$MODEL" --ids 1 -n 9 --fa off --kv f16
expect_grep "403 407 261 378 432 383 286 261 376" "$PL_TMP/out"
# the same with flash attention on (llama.cpp's other path)
expect_rc 0 "$ORACLE" greedy "$MODEL" --ids 1 -n 9 --fa on --kv f16
expect_grep "403 407 261 378 432 383 286 261 376" "$PL_TMP/out"

# type table: every id llama.cpp knows, same name, block size, bytes
expect_rc 0 "$ORACLE" types
cp "$PL_TMP/out" "$PL_TMP/ggml_types"
"$PL_TOOLS/pl_typetable" >"$PL_TMP/ours" || fail "pl_typetable failed"
ok
diff <(awk '$(NF-1) != 0' "$PL_TMP/ggml_types") "$PL_TMP/ours" >"$PL_TMP/diff" || fail "type table differs: $(head -20 "$PL_TMP/diff")"
expect_rc 0 "$ORACLE" half-check && expect_grep ", 0 differ" "$PL_TMP/out"
done_testing
