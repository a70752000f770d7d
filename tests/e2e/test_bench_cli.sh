# test_bench_cli.sh -- `pocketllm bench` as a user types it: usage errors
# exit 2, a missing model exits 1, and a run on a tiny model prints the
# human table and, with --json, one object with every documented key,
# consistent with itself (medians inside the runs' spread, as many runs as
# repetitions, the RSS bound = file + KV + 64 MiB).  No timing is judged:
# the numbers only have to be finite and positive.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
expect_rc 0 "$BIN" bench --help && expect_grep "--synth SHAPE:TYPE" "$PL_TMP/out"
expect_rc 2 "$BIN" bench
expect_rc 2 "$BIN" bench --model a.gguf --synth tiny:f16
expect_rc 2 "$BIN" bench --synth tiny
expect_rc 2 "$BIN" bench --synth tiny:q9_9 && expect_grep "q9_9" "$PL_TMP/err"
expect_rc 2 "$BIN" bench --synth tiny:f16 -p -3
expect_rc 2 "$BIN" bench --synth tiny:f16 -r 0
expect_rc 2 "$BIN" bench --synth tiny:f16 --kv q4
expect_rc 1 "$BIN" bench --model "$PL_TMP/missing.gguf"

expect_rc 0 "$BIN" synth --quiet --shape tiny --type f16 "$PL_TMP/t.gguf"
expect_rc 0 "$BIN" bench --model "$PL_TMP/t.gguf" -p 16 -n 4 -d 8 -r 2 -t 1 --quiet
expect_grep "pp16" "$PL_TMP/out"
expect_grep "tg4" "$PL_TMP/out"
expect_grep "bandwidth" "$PL_TMP/out"

expect_rc 0 "$BIN" bench --model "$PL_TMP/t.gguf" -p 16 -n 4 -d 8 -r 3 -t 1 --json --quiet
/usr/bin/python3 - "$PL_TMP/out" "$(stat -c %s "$PL_TMP/t.gguf")" <<'PY' || fail "bench --json is not what --help says"
import json, math, sys
d = json.loads(open(sys.argv[1]).read())
size = int(sys.argv[2])
for k in ("pp_tokens_per_s", "tg_tokens_per_s", "peak_rss_bytes", "rss_bound_bytes", "read_bandwidth_bytes_per_s",
          "weight_bytes_per_token", "decode_bound_tokens_per_s", "decode_bandwidth_fraction", "pp_runs", "tg_runs"):
    assert k in d, "missing " + k
for k in ("pp", "tg"):
    runs = d[k + "_runs"]
    assert len(runs) == 3, runs
    assert all(math.isfinite(x) and x > 0 for x in runs), runs
    assert min(runs) <= d[k + "_tokens_per_s"] <= max(runs), (k, d)
assert d["peak_rss_bytes"] > 0
# file + KV + 64 MiB: the bound is at least the file and the 64 MiB
assert d["rss_bound_bytes"] >= size + 64 * 2**20, d["rss_bound_bytes"]
assert 0 < d["weight_bytes_per_token"] <= size
# a tg step at depth 8 .. 12 reads the KV of 8 + (4 + 1) / 2 positions on average
per_pos = d["kv_bytes"] / 16  # the cache of max(p, d + n) = 16 positions
assert d["kv_bytes_per_token"] == per_pos * 10.5, (d["kv_bytes_per_token"], per_pos)
assert d["bytes_per_token"] == d["weight_bytes_per_token"] + d["kv_bytes_per_token"]
assert abs(d["decode_bound_tokens_per_s"] * d["bytes_per_token"] - d["read_bandwidth_bytes_per_s"]) <= \
    1e-6 * d["read_bandwidth_bytes_per_s"]
assert d["pp_depth"] == 0
PY
ok

# pp at a depth: the prompt appended to a cache already holding 32 tokens
expect_rc 0 "$BIN" bench --model "$PL_TMP/t.gguf" -p 16 -n 4 -d 8 --pp-depth 32 -r 2 -t 1 --json --quiet
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "bench --pp-depth --json is wrong"
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert d["pp_depth"] == 32 and d["pp_tokens_per_s"] > 0, d
assert d["kv_bytes"] == d["kv_bytes_per_token"] / 10.5 * 48, d  # the cache holds 32 + 16 positions now
PY
ok
expect_rc 0 "$BIN" bench --model "$PL_TMP/t.gguf" -p 16 -n 0 --pp-depth 8 -r 1 -t 1 --quiet && expect_grep "at depth 8" "$PL_TMP/out"
expect_rc 2 "$BIN" bench --model "$PL_TMP/t.gguf" -p 0 -n 4 --pp-depth 8

# --verify N: the passes of 1 + j tokens at tg's depth, their ratios to one
# step, and the lookup speedups recomputed from them by the stated formula
# (best over j of (1 + a + .. + a^j) / ratio[j], 1.0 at j = 0)
expect_rc 0 "$BIN" bench --model "$PL_TMP/t.gguf" -p 0 -n 4 -d 40 --verify 6 -r 3 -t 1 --json --quiet
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "bench --verify --json is wrong"
import json, sys
v = json.loads(open(sys.argv[1]).read())["verify"]
assert v["depth"] == 40 and len(v["ms"]) == 7 and len(v["cost_ratio"]) == 7, v
assert all(m > 0 for m in v["ms"]) and v["cost_ratio"][0] == 1 and v["step_ms"] == v["ms"][0], v
for e in v["lookup_speedup_computed"]:
    a, best, best_j = e["acceptance"], 1.0, 0
    for j in range(1, 7):
        x = sum(a ** i for i in range(j + 1)) / v["cost_ratio"][j]
        if x > best: best, best_j = x, j
    assert abs(e["speedup"] - best) < 1e-9 and e["draft_len"] == best_j, (e, best, best_j)
PY
ok
expect_rc 0 "$BIN" bench --model "$PL_TMP/t.gguf" -p 0 -n 2 --verify 3 -r 1 -t 1 --quiet &&
    expect_grep "verify    a pass of 1 + j tokens" "$PL_TMP/out" && expect_grep "lookup    computed" "$PL_TMP/out"
expect_rc 2 "$BIN" bench --model "$PL_TMP/t.gguf" --verify 0
expect_rc 2 "$BIN" bench --model "$PL_TMP/t.gguf" --verify 65
expect_rc 2 "$BIN" bench --model "$PL_TMP/t.gguf" --verify 4 --json-schema x.json

# --lookup / --draft: the same greedy ids both ways (bench checks and fails
# otherwise), and the counts: the model drafting for itself keeps every
# draft, so a pass yields more than one token
expect_rc 0 "$BIN" bench --model "$PL_SHARED/models/stories260K.gguf" -p 16 -n 40 --draft \
    "$PL_SHARED/models/stories260K.gguf" --draft-max 4 -r 2 -t 1 --json --quiet
/usr/bin/python3 - "$PL_TMP/out" <<'PY' || fail "bench --draft --json is wrong"
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert d["drafting"] == "draft_model" and d["draft_max"] == 4 and d["n"] == 40, d
assert d["drafted"] > 0 and d["accepted"] == d["drafted"] and d["acceptance_rate"] == 1, d
assert d["tokens_per_pass"] > 1 and d["passes"] * d["tokens_per_pass"] == 80, d
assert d["plain_tokens_per_s"] > 0 and abs(d["speedup"] - d["spec_tokens_per_s"] / d["plain_tokens_per_s"]) < 1e-9, d
PY
ok
expect_rc 0 "$BIN" bench --model "$PL_TMP/t.gguf" -p 16 -n 24 --lookup 2 -r 1 -t 1 --quiet &&
    expect_grep "drafting  prompt lookup, n-grams up to 2" "$PL_TMP/out" && expect_grep "the same ids" "$PL_TMP/out"
expect_rc 2 "$BIN" bench --model "$PL_TMP/t.gguf" --lookup 2 --draft "$PL_TMP/t.gguf"
expect_rc 2 "$BIN" bench --model "$PL_TMP/t.gguf" --lookup 2 --verify 2
expect_rc 2 "$BIN" bench --model "$PL_TMP/t.gguf" --lookup 2 -n 0
expect_rc 1 "$BIN" bench --model "$PL_TMP/t.gguf" -p 8 -n 8 --draft "$PL_SHARED/models/stories260K.gguf" &&
    expect_grep "vocabulary" "$PL_TMP/err"

# --synth writes a temporary model and removes it
expect_rc 0 env TMPDIR="$PL_TMP" "$BIN" bench --synth tiny:Q8_0 -p 8 -n 2 -r 1 -t 1 --quiet
ls "$PL_TMP"/pocketllm-bench-* >/dev/null 2>&1 && fail "bench --synth left its temporary model behind"
ok
done_testing
