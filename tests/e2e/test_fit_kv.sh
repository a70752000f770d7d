# test_fit_kv.sh -- `pocketllm fit --kv auto`: the cache narrows before the
# weights.  On a qwen3 whose KV cache at 32768 positions outweighs its
# weights (heads of 64, so q8_0 and q4_0 blocks fit them):
#  1. the needs with an f16, a q8_0 and a q4_0 cache are measured by plain
#     fits (--kv T); they must shrink in that order;
#  2. a budget between the q8_0 and the f16 need of Q4_K_M: plain fit finds
#     no rung (every rung's f16 cache alone is over it); --kv auto chooses
#     Q4_K_M with a q8_0 cache, whose need is the plain q8_0 fit's, and says
#     what the f16 cache would need (that plain fit's figure);
#  3. a budget between the q4_0 and the q8_0 need: a q4_0 cache;
#  4. --eval scores the chosen row with its own cache; the rung written
#     runs with the cache fit named;
#  5. refused or kept: --plan with --kv auto (one line), and stories260K
#     (heads of 8: no block cache) keeps f16 with a note.
# The binding's fit(kv_auto=True): tests/python/test_kv.py (the sanitizer
# tree cannot load into Debian's python3).
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_SRC/tests/oracle/data/eval_story.txt
M=$PL_TMP/kv.gguf
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-layer 2 --n-embd 256 --n-head 4 --n-head-kv 2 --head-dim 64 \
    --n-ff 512 --type f16 --seed 3 "$M"

need() { # KV BUDGET: Q4_K_M's need with that cache (plain fit, --json)
    "$BIN" fit --quiet --json -m "$M" --ctx 32768 --memory "$2" --kv "$1" >"$PL_TMP/need.json" 2>"$PL_TMP/err" ||
        { fail "fit --kv $1: $(head -c 300 "$PL_TMP/err")"; echo 0; return; }
    /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(next(r["total_bytes"] for r in d["rows"] if r["recipe"] == "Q4_K_M"))' "$PL_TMP/need.json"
}
F16=$(need f16 1G) Q8=$(need q8_0 1G) Q4=$(need q4_0 1G)
ok
[ "$F16" -gt "$Q8" ] && [ "$Q8" -gt "$Q4" ] && [ "$Q4" -gt 0 ] ||
    fail "needs do not shrink with the cache: f16 $F16, q8_0 $Q8, q4_0 $Q4"

auto() { # BUDGET WANT_RECIPE WANT_CACHE WANT_NEED
    expect_rc 0 "$BIN" fit --quiet --json -m "$M" --ctx 32768 --memory "$1" --kv auto || return
    cp "$PL_TMP/out" "$PL_TMP/auto.json"
    /usr/bin/python3 - "$PL_TMP/auto.json" "$2" "$3" "$4" "$F16" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
recipe, cache, want, f16 = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
assert d["chosen"] == recipe, d["chosen"]
r = next(r for r in d["rows"] if r["recipe"] == recipe)
assert r["cache_type_k"] == cache and r["cache_type_v"] == cache, r
# the heap is measured through the allocator: the same sessions, within 1%
assert abs(r["total_bytes"] - want) <= want / 100, (r["total_bytes"], want)
assert abs(r["asked_cache_bytes"] - f16) <= f16 / 100, (r["asked_cache_bytes"], f16)
assert d["rows"][0]["cache_type_k"] == "f16", d["rows"][0]
print(f"--kv auto at {d['memory']} bytes: {recipe} with a {cache} cache, {r['total_bytes']} bytes "
      f"(f16 cache: {r['asked_cache_bytes']})")
PY
    script_verdict $? "$PL_TMP/py" "--kv auto at $1 did not choose $2 with a $3 cache"
}
B8=$(((Q8 + F16) / 2)) B4=$(((Q4 + Q8) / 2))
expect_rc 1 "$BIN" fit --quiet -m "$M" --ctx 32768 --memory "$B8" && expect_grep "does not fit" "$PL_TMP/err"
auto "$B8" Q4_K_M q8_0 "$Q8"
auto "$B4" Q4_K_M q4_0 "$Q4"

# the table and the closing line
expect_rc 0 "$BIN" fit --quiet -m "$M" --ctx 32768 --memory "$B8" --kv auto --out "$PL_TMP/chosen.gguf" &&
    expect_grep "fit: chose a q8_0 cache to keep Q4_K_M and the 32768 positions" "$PL_TMP/out" &&
    expect_grep "run it with --kv q8_0" "$PL_TMP/out" && expect_grep "cache" "$PL_TMP/out"
expect_rc 0 "$BIN" run -m "$PL_TMP/chosen.gguf" --ctx 32768 --kv q8_0 -n 4 --temp 0 -p "Once upon a time"

# scored with its cache
expect_rc 0 "$BIN" fit --quiet --json -m "$M" --ctx 32768 --memory "$B8" --kv auto --eval "$T" --eval-ctx 64 \
    --eval-chunks 4
/usr/bin/python3 - "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d["rows"] if r["recipe"] == d["chosen"])
assert r["cache_type_k"] == "q8_0" and "kl_mean" in r and r["kl_mean"] > 0, r
print(f"scored with its q8_0 cache: KL {r['kl_mean']:.3g}, top-1 {r['top1']:.3f}")
PY
script_verdict $? "$PL_TMP/py" "the narrowed row was not scored"

# refused, and kept
expect_rc 2 "$BIN" fit --quiet -m "$M" --memory 1G --plan --kv auto && expect_grep "which --plan does not do" "$PL_TMP/err"
expect_rc 1 "$BIN" fit --quiet -m "$PL_SHARED/models/stories260K.gguf" --memory 2M --ctx 512 --kv auto &&
    expect_grep "no narrower cache" "$PL_TMP/out"
done_testing
