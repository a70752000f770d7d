# test_cli_basics.sh -- the CLI as a user types it: help and exit codes,
# inspect on the real stories260K checkpoint (text and JSON), a vocabulary-
# only file, the host/backend/op/architecture listings, and the shared
# library exporting nothing but the public header's functions.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
MODEL=$PL_SHARED/models/stories260K.gguf
[ -f "$MODEL" ] || { echo "FAIL: $MODEL is missing (the shared models folder)" >&2; exit 1; }

expect_rc 2 "$BIN"
expect_rc 0 "$BIN" help && expect_grep "inspect" "$PL_TMP/out"
expect_rc 0 "$BIN" --version && expect_grep "ABI" "$PL_TMP/out"
expect_rc 2 "$BIN" frobnicate && expect_grep "unknown command" "$PL_TMP/err"
for cmd in inspect devices backends architectures ops help; do
    expect_rc 0 "$BIN" "$cmd" --help && expect_grep "usage: pocketllm $cmd" "$PL_TMP/out"
    expect_rc 0 "$BIN" help "$cmd" && expect_grep "usage: pocketllm $cmd" "$PL_TMP/out"
done
expect_rc 2 "$BIN" inspect
expect_rc 2 "$BIN" inspect --bogus "$MODEL"
expect_rc 2 "$BIN" inspect "$MODEL" "$MODEL"
expect_rc 1 "$BIN" inspect "$PL_TMP/missing.gguf" && expect_grep "cannot open" "$PL_TMP/err"

# acceptance: architecture llama, 48 tensors, vocabulary 512
expect_rc 0 "$BIN" inspect "$MODEL"
expect_grep "architecture:    llama" "$PL_TMP/out"
expect_grep "tensors:         48 " "$PL_TMP/out"
expect_grep "vocabulary 512" "$PL_TMP/out"
expect_grep "block_count" "$PL_TMP/out"
expect_rc 0 "$BIN" inspect "$MODEL" --tensors && expect_grep "blk.0.attn_q.weight" "$PL_TMP/out"
expect_rc 0 "$BIN" inspect "$MODEL" --json --tensors
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "inspect --json is not what it should be"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["architecture"] == "llama", d["architecture"]
assert d["tensor_count"] == 48 and len(d["tensors"]) == 48
assert d["tokenizer"]["vocab_size"] == 512 and d["tokenizer"]["model"] == "llama"
assert d["hyperparameters"]["block_count"] == 5
assert d["hyperparameters"]["embedding_length"] == 64
assert d["bytes_by_type"]["f32"]["tensors"] == 48
assert d["total_bytes"] == sum(t["bytes"] for t in d["tensors"])
t = {t["name"]: t for t in d["tensors"]}
assert t["token_embd.weight"]["shape"] == [64, 512], t["token_embd.weight"]
PY
ok

# a vocabulary-only file (no tensors), written by the test tool
"$PL_TOOLS/pl_mkbad" "$PL_TMP" >/dev/null || fail "pl_mkbad failed"
expect_rc 0 "$BIN" inspect "$PL_TMP/good.gguf" && expect_grep "tensors:         2 " "$PL_TMP/out"

# host, backends, ops, architectures
expect_rc 0 "$BIN" devices && expect_grep "cores:" "$PL_TMP/out" && expect_grep "cuda:" "$PL_TMP/out"
expect_rc 0 "$BIN" devices --json
/usr/bin/python3 -c "import json,sys; d=json.load(open('$PL_TMP/out')); assert d['cpu']['physical_cores']>=1 and 'cuda' in d" \
    || fail "devices --json"
expect_rc 0 "$BIN" backends
for b in cpu cuda cann bpu qnn metal; do expect_grep "$b" "$PL_TMP/out"; done
expect_grep "implemented" "$PL_TMP/out"
expect_rc 0 "$BIN" backends --json
expect_rc 0 "$BIN" architectures
expect_rc 0 "$BIN" architectures --json
expect_rc 0 "$BIN" ops && expect_grep "mul_mat" "$PL_TMP/out"
expect_rc 0 "$BIN" ops --op rms_norm --device cpu --json
/usr/bin/python3 -c "import json; d=json.load(open('$PL_TMP/out')); assert len(d)==1 and d[0]['op']=='rms_norm'" \
    || fail "ops --json"
expect_rc 2 "$BIN" ops --op nosuchop
expect_rc 2 "$BIN" ops --device nosuchdev
expect_rc 2 "$BIN" ops --op

# the shared library exports exactly what the public header declares
declared=$(grep -v '#define' "$PL_SRC/include/pocketllm.h" | grep -o 'POCKETLLM_API [^(]*(' | sed 's/.*[ *]\([a-z0-9_]*\)($/\1/' | sort -u)
exported=$(nm -D --defined-only "$PL_LIB" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u)
ok
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$extra" ] || fail "exported but not in pocketllm.h: $extra"
[ -z "$missing" ] || fail "declared in pocketllm.h but not exported: $missing"
[ -n "$declared" ] || fail "found no declarations in pocketllm.h"
done_testing
