# test_vulkan_cli.sh -- the Vulkan backend as a user types it: `devices`
# lists a usable device (text and --json), `backends` and `ops` say the
# backend is implemented with mul_mat kernels for every width of the
# ladder, `run --device vulkan` gives exactly the CPU's ids, chat,
# perplexity and bench work on the device, a budget too small for the
# weights or for a session's KV cache is refused with one line pointing to
# `fit --device vulkan`, and that fit picks, writes and the device then
# runs a smaller rung.  Without the loader (POCKETLLM_VULKAN_LOADER names a
# missing file) `devices` says so, a device run fails with one line and
# the CPU still works: the library never links libvulkan.  Every KV cache
# type runs on the device; a block type that does not divide the model's
# heads is refused with one line, as on the CPU.  Speculative decoding on
# the device: run --lookup / --draft, and serve --draft.
# POCKETLLM_NO_VULKAN=1 skips it (exit 77); without a usable device it fails.
if [ "${POCKETLLM_NO_VULKAN:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_VULKAN=1 -- the Vulkan CLI test did not run" >&2
    exit 77
fi
. "$(dirname "$0")/serve_lib.sh"
BIN=$PL_BIN
PY=/usr/bin/python3
MODEL=$PL_SHARED/models/stories260K.gguf
[ -f "$MODEL" ] || { echo "FAIL: $MODEL is missing (the shared models folder)" >&2; exit 1; }

# one_line FILE WHAT: FILE (stderr of a refusal) is exactly one line
one_line() {
    ok
    [ "$(wc -l <"$1")" = 1 ] || fail "$2 is not one line: $(cat "$1")"
}

# ---- every command that opens a model documents the two options ----------
for cmd in run logits chat serve bench perplexity imatrix fit; do
    expect_rc 0 "$BIN" $cmd --help && expect_grep "--device D" "$PL_TMP/out" &&
        expect_grep "--device-memory S" "$PL_TMP/out"
done
expect_rc 0 "$BIN" devices --help && expect_grep "Vulkan" "$PL_TMP/out"
expect_rc 2 "$BIN" run --model "$MODEL" --ids 1 --device metal
expect_rc 2 "$BIN" chat --model "$MODEL" --device-memory 12
expect_rc 2 "$BIN" fit --model "$MODEL" --device-memory 2M

# ---- devices: a usable Vulkan device, in text and in JSON ------------------
expect_rc 0 "$BIN" devices
cp "$PL_TMP/out" "$PL_TMP/devices.txt"
expect_grep "vulkan:" "$PL_TMP/devices.txt"
expect_grep "loader:       loaded" "$PL_TMP/devices.txt"
expect_grep "[vulkan:0]" "$PL_TMP/devices.txt"
ok
grep -q "usable:       yes" "$PL_TMP/devices.txt" || {
    fail "no usable Vulkan device (a Vulkan driver, e.g. Debian's mesa-vulkan-drivers, is needed): $(sed -n '/^vulkan:/,$p' "$PL_TMP/devices.txt")"
    done_testing
    exit 1
}
expect_rc 0 "$BIN" devices --json
"$PY" - "$PL_TMP/out" <<'PY' >"$PL_TMP/py.out" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
v = d["vulkan"]
assert v["loader_loaded"] is True and v["instance_version"].count(".") == 2, v
assert v["device_count"] == len(v["devices"]) >= 1, v
keys = {"id", "index", "name", "type", "driver", "api_version", "vendor_id", "device_id", "device_local_bytes",
        "heaps", "subgroup_size", "fp16", "int8_dot", "int8_dot_accelerated", "cooperative_matrix",
        "cooperative_matrix_nv", "usable", "why_not"}
for i, dev in enumerate(v["devices"]):
    assert keys <= set(dev), keys - set(dev)
    assert dev["id"] == "vulkan:%d" % i, dev["id"]
    assert dev["type"] in ("discrete", "integrated", "virtual", "cpu", "other"), dev["type"]
    assert dev["heaps"] and all(h["bytes"] > 0 for h in dev["heaps"]), dev["heaps"]
    if dev["usable"]:
        assert dev["device_local_bytes"] > 0 and dev["subgroup_size"] > 0 and dev["why_not"] == "", dev
assert any(dev["usable"] for dev in v["devices"]), "no usable device"
assert "cpu" in d and "cuda" in d
PY
script_verdict $? "$PL_TMP/py.out" "devices --json lacks the documented Vulkan fields"

# ---- backends and ops ------------------------------------------------------
expect_rc 0 "$BIN" backends
ok
grep -qE "^vulkan +implemented" "$PL_TMP/out" || fail "backends does not list vulkan as implemented: $(cat "$PL_TMP/out")"
expect_rc 0 "$BIN" ops --device vulkan --op mul_mat
# (the types of the ladder's widths: 16-bit, 8-bit, K, IQ, ternary)
for t in f16 q8_0 q4_K iq2_xxs tq2_0; do
    ok
    grep -qw -- "$t" "$PL_TMP/out" || fail "ops --device vulkan: no mul_mat for $t: $(cat "$PL_TMP/out")"
done
expect_rc 0 "$BIN" ops --device vulkan --op mul_mat --json
"$PY" - "$PL_TMP/out" <<'PY' >"$PL_TMP/py.out" 2>&1
import json, sys
ops = json.load(open(sys.argv[1]))
types = ops[0]["backends"]["vulkan"]
missing = [t for t in ("f16", "q8_0", "q4_K", "iq2_xxs", "tq2_0") if t not in types]
assert not missing, "mul_mat lacks %s: %s" % (missing, types)
PY
script_verdict $? "$PL_TMP/py.out" "ops --json: vulkan's mul_mat types"

# ---- run: the device gives exactly the CPU's ids ---------------------------
expect_rc 0 "$BIN" run --model "$MODEL" --ids 1 -n 64 --print-ids
cp "$PL_TMP/out" "$PL_TMP/cpu.ids"
expect_rc 0 "$BIN" run --model "$MODEL" --ids 1 -n 64 --print-ids --device vulkan
ok
cmp -s "$PL_TMP/out" "$PL_TMP/cpu.ids" || fail "run --device vulkan: $(tail -1 "$PL_TMP/out") -- the CPU: $(tail -1 "$PL_TMP/cpu.ids")"
ok
[ "$(sed -n 2p "$PL_TMP/out" | wc -w)" = 64 ] || fail "expected 64 ids: $(cat "$PL_TMP/out")"

# ---- the KV cache: every type on the device (oracle/test_vulkan_kv.sh
# compares them with llama.cpp); a block type on stories260K's heads of 8
# is refused in one line, as on the CPU
for kv in "--kv f32" "--kv bf16" "-ctk f16 -ctv f32" "-ctk bf16 -ctv f16 -fa on"; do
    # shellcheck disable=SC2086
    expect_rc 0 "$BIN" run --model "$MODEL" --ids 1 -n 8 --device vulkan --print-ids $kv
    ok
    [ "$(sed -n 2p "$PL_TMP/out" | wc -w)" = 8 ] || fail "--device vulkan $kv: expected 8 ids: $(cat "$PL_TMP/out")"
done
expect_rc 1 "$BIN" run --model "$MODEL" --ids 1 -n 8 --device vulkan --kv q8_0
one_line "$PL_TMP/err" "run --device vulkan --kv q8_0 on heads of 8"
expect_grep "do not divide this model's heads of 8" "$PL_TMP/err"

# ---- chat, perplexity, bench on the device ---------------------------------
printf '%s' "{% for m in messages %}{{ bos_token }}{{ m['content'] }}{% endfor %}" >"$PL_TMP/t.jinja"
printf 'Once upon a time\n' | "$BIN" chat --model "$MODEL" --template "$PL_TMP/t.jinja" -n 24 >"$PL_TMP/chat_cpu.out" 2>&1
printf 'Once upon a time\n' | "$BIN" chat --model "$MODEL" --template "$PL_TMP/t.jinja" -n 24 --device vulkan \
    >"$PL_TMP/chat_vk.out" 2>"$PL_TMP/chat_vk.err"
rc=$?
ok
[ "$rc" = 0 ] || fail "chat --device vulkan exited $rc: $(head -c 400 "$PL_TMP/chat_vk.err")"
expect_grep "little girl" "$PL_TMP/chat_vk.out"
ok
cmp -s "$PL_TMP/chat_vk.out" "$PL_TMP/chat_cpu.out" ||
    fail "chat --device vulkan replied '$(cat "$PL_TMP/chat_vk.out")', the CPU '$(cat "$PL_TMP/chat_cpu.out")'"

for _ in 1 2 3 4 5 6 7 8 9 10; do
    printf 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. '
done >"$PL_TMP/story.txt"
expect_rc 0 "$BIN" perplexity --model "$MODEL" --file "$PL_TMP/story.txt" --ctx 64 --json --quiet
cp "$PL_TMP/out" "$PL_TMP/ppl_cpu.json"
expect_rc 0 "$BIN" perplexity --model "$MODEL" --file "$PL_TMP/story.txt" --ctx 64 --json --quiet --device vulkan
"$PY" - "$PL_TMP/ppl_cpu.json" "$PL_TMP/out" <<'PY' >"$PL_TMP/py.out" 2>&1
import json, sys
c, v = (json.load(open(p)) for p in sys.argv[1:3])
assert c["scored"] == v["scored"] > 0, (c, v)
assert abs(v["ppl"] - c["ppl"]) <= 1e-3 * c["ppl"], "perplexity %.6f on the device, %.6f on the CPU" % (v["ppl"], c["ppl"])
PY
script_verdict $? "$PL_TMP/py.out" "perplexity --device vulkan differs from the CPU's"

expect_rc 0 "$BIN" bench --model "$MODEL" -p 8 -n 4 -r 1 --device vulkan --quiet
expect_grep "tg4" "$PL_TMP/out" && expect_grep "n/a" "$PL_TMP/out" && expect_grep "vulkan:" "$PL_TMP/out"
expect_rc 0 "$BIN" bench --model "$MODEL" -p 8 -n 4 -r 1 --device vulkan --quiet --json
"$PY" - "$PL_TMP/out" <<'PY' >"$PL_TMP/py.out" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device"].startswith("vulkan:"), d
assert d["pp_tokens_per_s"] > 0 and d["tg_tokens_per_s"] > 0, d
assert d["decode_bandwidth_fraction"] is None and d["read_bandwidth_bytes_per_s"] is None, d
assert 0 < d["device_memory_used_bytes"] <= d["device_memory_budget_bytes"], d
PY
script_verdict $? "$PL_TMP/py.out" "bench --device vulkan --json is not what --help says"

# ---- a device too small: one line pointing to fit --------------------------
# the weights (1.1 MiB) do not fit 1 MiB
expect_rc 1 "$BIN" run --model "$MODEL" --ids 1 -n 4 --device vulkan --device-memory 1M
expect_grep "does not fit" "$PL_TMP/err" && expect_grep "pocketllm fit --device vulkan" "$PL_TMP/err"
one_line "$PL_TMP/err" "the weights' refusal"
expect_rc 1 env POCKETLLM_DEVICE_MEMORY=1M "$BIN" run --model "$MODEL" --ids 1 -n 4 --device vulkan
expect_grep "does not fit" "$PL_TMP/err"
# the weights fit 3 MiB, the KV cache of 100000 positions does not
expect_rc 1 "$BIN" run --model "$MODEL" --ids 1 -n 4 --device vulkan --device-memory 3M --ctx 100000
expect_grep "does not fit" "$PL_TMP/err" && expect_grep "KV cache" "$PL_TMP/err" &&
    expect_grep "pocketllm fit --device vulkan" "$PL_TMP/err"
one_line "$PL_TMP/err" "the session's refusal"
expect_rc 1 "$BIN" perplexity --model "$MODEL" --file "$PL_TMP/story.txt" --device vulkan --device-memory 1M --quiet
expect_grep "does not fit" "$PL_TMP/err"

# ---- fit --device: a budget the source does not fit and Q2_K does ----------
expect_rc 0 "$BIN" synth --quiet --arch qwen3 --shape tiny --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 \
    --head-dim 64 --n-ff 512 --type f16 "$PL_TMP/q.gguf"
# what each needs on this device (no cap), then a budget halfway between
# the source's need and Q2_K's
expect_rc 0 "$BIN" fit --model "$PL_TMP/q.gguf" --device vulkan --ctx 32 --all --json --quiet
S=$("$PY" - "$PL_TMP/out" <<'PY'
import json, sys
rows = {r["recipe"]: r for r in json.load(open(sys.argv[1]))["rows"]}
src, q2 = rows["source"]["total_bytes"], rows["Q2_K"]["total_bytes"]
assert src > q2 > 0, (src, q2)
print((src + q2) // 2)
PY
) || S=
ok
[ -n "$S" ] || fail "fit --device vulkan --all --json: no source and Q2_K needs: $(head -c 400 "$PL_TMP/out")"
if [ -n "$S" ]; then
    expect_rc 0 "$BIN" fit --model "$PL_TMP/q.gguf" --device vulkan --device-memory "$S" --ctx 32 --quiet \
        --out "$PL_TMP/fit.gguf"
    expect_grep "refused by the device" "$PL_TMP/out" && expect_grep "written to" "$PL_TMP/out"
    expect_rc 0 "$BIN" fit --model "$PL_TMP/q.gguf" --device vulkan --device-memory "$S" --ctx 32 --quiet --json
    "$PY" - "$PL_TMP/out" "$S" <<'PY' >"$PL_TMP/py.out" 2>&1
import json, sys
d, s = json.load(open(sys.argv[1])), int(sys.argv[2])
assert d["device"] == "vulkan" and d["memory"] == s, d
rows = {r["recipe"]: r for r in d["rows"]}
assert rows["source"]["measured"] and not rows["source"]["fits"], rows["source"]
c = rows[d["chosen"]]
assert d["chosen"] != "source" and c["fits"] and 0 < c["total_bytes"] <= s, c
PY
    script_verdict $? "$PL_TMP/py.out" "fit --device vulkan --device-memory $S did not pick a lower rung"
    ok
    [ -s "$PL_TMP/fit.gguf" ] || fail "fit wrote no $PL_TMP/fit.gguf"
    # the rung written loads and generates on that budget; the source does not
    expect_rc 0 "$BIN" run --model "$PL_TMP/fit.gguf" --ids "1 2 3" -n 8 --print-ids --ctx 32 --device vulkan \
        --device-memory "$S"
    ok
    [ "$(sed -n 2p "$PL_TMP/out" | wc -w)" = 8 ] || fail "the fitted rung generated: $(cat "$PL_TMP/out")"
    expect_rc 1 "$BIN" run --model "$PL_TMP/q.gguf" --ids "1 2 3" -n 8 --ctx 32 --device vulkan --device-memory "$S"
    expect_grep "does not fit" "$PL_TMP/err"
fi
# nothing fits 1 MiB: exit 1, one line
expect_rc 1 "$BIN" fit --model "$PL_TMP/q.gguf" --device vulkan --device-memory 1M --ctx 32 --quiet
expect_grep "does not fit" "$PL_TMP/err"

# ---- no loader: devices says so, the device fails clearly, the CPU runs ------
expect_rc 0 env POCKETLLM_VULKAN_LOADER=/nonexistent "$BIN" devices
expect_grep "no Vulkan loader" "$PL_TMP/out"
expect_rc 0 env POCKETLLM_VULKAN_LOADER=/nonexistent "$BIN" devices --json
ok
grep -Eq '"loader_loaded":[[:space:]]*false' "$PL_TMP/out" || fail "devices --json without a loader: $(head -c 300 "$PL_TMP/out")"
expect_rc 1 env POCKETLLM_VULKAN_LOADER=/nonexistent "$BIN" run --model "$MODEL" --ids 1 -n 4 --device vulkan
expect_grep "Vulkan loader" "$PL_TMP/err"
one_line "$PL_TMP/err" "the missing loader's error"
expect_rc 0 env POCKETLLM_VULKAN_LOADER=/nonexistent "$BIN" run --model "$MODEL" --ids 1 -n 64 --print-ids
ok
cmp -s "$PL_TMP/out" "$PL_TMP/cpu.ids" || fail "the CPU run without a Vulkan loader: $(tail -1 "$PL_TMP/out")"

# ---- the library does not link libvulkan (it is opened at run time) --------
LIB=${PL_LIB:-${PL_BUILD:-}/libpocketllm.so}
ok
if [ ! -f "$LIB" ]; then
    fail "no library at '$LIB' (PL_LIB)"
elif ! readelf -d "$LIB" >"$PL_TMP/readelf.out" 2>&1; then
    fail "readelf -d $LIB failed: $(head -3 "$PL_TMP/readelf.out")"
elif grep NEEDED "$PL_TMP/readelf.out" | grep -qi vulkan; then
    fail "$LIB links libvulkan: $(grep NEEDED "$PL_TMP/readelf.out" | grep -i vulkan)"
fi
# ---- speculative decoding on the device: prompt lookup and a draft model
# in run, a draft model in serve (stories260K as its own draft: every draft
# kept) give plain greedy's ids,
# with the f16 cache and a bf16 one (the device's rows of a verifying pass
# equal one-token decoding's, as on the CPU)
SPEC_P="Lily and Tom went to the park. Lily and Tom went to the park. Lily and Tom"
for kv in f16 bf16; do
    expect_rc 0 "$BIN" run --model "$MODEL" -p "$SPEC_P" -n 48 --temp 0 --print-ids --device vulkan --kv $kv
    plain=$(cat "$PL_TMP/out")
    for spec in "--lookup 3" "--draft $MODEL --draft-max 4"; do
        # shellcheck disable=SC2086
        expect_rc 0 "$BIN" run --model "$MODEL" -p "$SPEC_P" -n 48 --temp 0 --print-ids --device vulkan --kv $kv \
            $spec --timings
        ok
        [ "$(cat "$PL_TMP/out")" = "$plain" ] || fail "vulkan --kv $kv $spec: ids differ from plain greedy"
        expect_grep "kept" "$PL_TMP/err"
    done
done
# the server's draft model on the device, two sequences at once: each
# completion is plain greedy's text (`run` on the device), every draft kept
SPEC_Q="Once upon a time, there was a little girl. Once upon a time, there was a little"
expect_rc 0 "$BIN" run --model "$MODEL" -p "$SPEC_Q" -n 40 --temp 0 --device vulkan
cp "$PL_TMP/out" "$PL_TMP/want_q.txt"
expect_rc 0 "$BIN" run --model "$MODEL" -p "$SPEC_P" -n 40 --temp 0 --device vulkan
cp "$PL_TMP/out" "$PL_TMP/want_p.txt"
serve_start vkdraft --model "$MODEL" --device vulkan --draft "$MODEL" --draft-max 4 --parallel 2 --quiet
"$PY" - "$PORT" "$SPEC_P" "$PL_TMP/want_p.txt" "$SPEC_Q" "$PL_TMP/want_q.txt" <<'PY' >"$PL_TMP/py.out" 2>&1
import http.client, json, sys, threading
port, cases = int(sys.argv[1]), [(sys.argv[2], sys.argv[3]), (sys.argv[4], sys.argv[5])]
def call(method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request(method, path, json.dumps(body) if body else None, {"Content-Type": "application/json"})
    return json.loads(c.getresponse().read())
got = [None, None]
def ask(i):
    got[i] = call("POST", "/v1/completions", {"prompt": cases[i][0], "max_tokens": 40, "temperature": 0})
threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
for t in threads: t.start()
for t in threads: t.join()
bad = 0
for i, (prompt, want_file) in enumerate(cases):
    want = open(want_file).read().rstrip("\n")
    text = got[i]["choices"][0]["text"]
    if text != want:
        bad += 1
        print("FAIL: %r: %r, run gave %r" % (prompt, text, want))
sp = call("GET", "/health")["speculative"]
print("speculative on the device:", sp)
if not (sp["drafted"] > 0 and sp["accepted"] == sp["drafted"]):
    bad += 1
    print("FAIL: the model as its own draft on the device: not every draft kept")
sys.exit(1 if bad else 0)
PY
script_verdict $? "$PL_TMP/py.out" "serve --draft on the device differs from plain greedy"
serve_stop
done_testing
