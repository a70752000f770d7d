# test_bench_moe.sh -- `pocketllm bench` on mixtures of experts: the bytes
# one decode step reads, which the bandwidth bound and tg's fraction of it
# rest on, are the weights outside the experts plus expert_used_count of
# expert_count experts of each expert tensor -- as gguf_dir.py computes them
# from the file's own directory and the format's block sizes -- not the whole
# file; the bound and each repetition's fraction follow from that figure and
# the measured bandwidth (with the KV bytes a step reads added); `inspect`
# reports the same per-token bytes; and
# --synth takes a MoE shape.  No timing is judged.
. "$(dirname "$0")/moe_lib.sh"
A=$MOE_A B=$MOE_B

for m in "$A" "$B"; do
    expect_rc 0 "$BIN" bench --model "$m" -p 8 -n 4 -d 4 -r 3 -t 1 --json --quiet || continue
    cp "$PL_TMP/out" "$PL_TMP/bench.json"
    expect_rc 0 "$BIN" inspect --json "$m" || continue
    /usr/bin/python3 - "$m" "$PL_TMP/bench.json" "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, math, statistics, sys
import gguf_dir
keys, tensors = gguf_dir.read(sys.argv[1])
b, ins = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
want = gguf_dir.moe_split(keys, tensors)["per_token"]["bytes"]
whole = sum(t["bytes"] for t in tensors)
bad = []
if b["weight_bytes_per_token"] != want:
    bad.append(f"weight_bytes_per_token {b['weight_bytes_per_token']}, the routed experts' figure {want} (all: {whole})")
if ins["moe"]["per_token"]["bytes"] != b["weight_bytes_per_token"]:
    bad.append(f"inspect's per-token bytes {ins['moe']['per_token']['bytes']} differ from bench's")
# a step also reads the KV cache it attends over (counted in the bound)
step = want + b["kv_bytes_per_token"]
if b["kv_bytes_per_token"] <= 0 or b["bytes_per_token"] != step:
    bad.append(f"bytes_per_token {b['bytes_per_token']}, weights {want} + KV {b['kv_bytes_per_token']}")
bw = b["read_bandwidth_bytes_per_s"]
if not math.isclose(b["decode_bound_tokens_per_s"], bw / step, rel_tol=1e-9):
    bad.append(f"decode bound {b['decode_bound_tokens_per_s']}, bandwidth / per-step bytes {bw / step}")
fr = [tg * step / r for tg, r in zip(b["tg_runs"], b["read_bandwidth_runs"])]
if not math.isclose(b["decode_bandwidth_fraction"], statistics.median(fr), rel_tol=1e-9):
    bad.append(f"fraction {b['decode_bandwidth_fraction']}, the runs against the routed bytes {fr}")
for x in bad: print("MISMATCH:", x)
print(f"{keys['general.architecture']}: {want} of {whole} tensor bytes per decode step")
sys.exit(1 if bad else 0)
PY
    script_verdict $? "$PL_TMP/py" "bench's bound on $(basename "$m") does not count the routed experts"
done

# the text says the same figure; --synth takes a MoE shape and cleans up
expect_rc 0 "$BIN" bench --model "$A" -p 0 -n 2 -r 1 -t 1 --quiet && expect_grep "2.38 MiB of weights + " "$PL_TMP/out"
expect_rc 0 env TMPDIR="$PL_TMP" "$BIN" bench --synth moe-tiny:Q4_K_M -p 8 -n 2 -r 1 -t 1 --quiet
expect_grep "tg2" "$PL_TMP/out"
ls "$PL_TMP"/pocketllm-bench-* >/dev/null 2>&1 && fail "bench --synth left its temporary model behind"
ok
done_testing
