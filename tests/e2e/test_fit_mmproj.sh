# test_fit_mmproj.sh -- `pocketllm fit --mmproj`: the vision tower's share
# is in every row's need (a qwen3vl text model of 2 layers beside the
# Qwen3-VL-2B tower cut to 6 blocks, one DeepStack tap):
#  - the tower's weights are at least its file (used in place) and the
#    row's need is file + heap + tower;
#  - the largest image is --image-max-tokens (default 4096) merged tokens,
#    held to the context less the span's two markers; its activations are at
#    least the five patches x width f32 activations the tower keeps (4
#    patches a token, width 1024) and grow with the tokens;
#  - a budget the model alone fits but the model and the tower do not: the
#    choice changes (or nothing fits);
#  - a tower that does not belong to the model is refused; the options'
#    misuse is a usage error.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_TMP/t.gguf M=$PL_TMP/mm.gguf
expect_rc 0 "$BIN" synth --arch qwen3vl --n-layer 2 --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 \
    --n-ff 512 --quiet "$T"
expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$M" --vision-layers 6 --type f16 --seed 5 --quiet
[ -s "$T" ] && [ -s "$M" ] || { fail "inputs not made"; done_testing; exit 1; }

fitj() { # OUT.json ARGS...: fit's JSON table
    local o=$1; shift
    "$BIN" fit --quiet --model "$T" -t 2 --json "$@" >"$o" 2>"$PL_TMP/err"
}
fitj "$PL_TMP/a.json" --memory 8G --ctx 512 --mmproj "$M" || fail "fit --mmproj failed: $(head -c 300 "$PL_TMP/err")"
ok
fitj "$PL_TMP/b.json" --memory 8G --ctx 8192 --mmproj "$M" || fail "fit --mmproj --ctx 8192 failed: $(head -c 300 "$PL_TMP/err")"
ok
fitj "$PL_TMP/c.json" --memory 8G --ctx 8192 --mmproj "$M" --image-max-tokens 64 ||
    fail "fit --image-max-tokens failed: $(head -c 300 "$PL_TMP/err")"
ok
fitj "$PL_TMP/n.json" --memory 8G --ctx 512 || fail "fit without the tower failed: $(head -c 300 "$PL_TMP/err")"
ok
python3 - "$PL_TMP" "$M" >"$PL_TMP/py" 2>&1 <<'PY'
import json, os, sys
d, mm = sys.argv[1:]
a, b, c, n = (json.load(open(f"{d}/{x}.json")) for x in "abcn")
bad = []
size = os.path.getsize(mm)
for name, t, tokens in (("ctx 512", a, 510), ("ctx 8192", b, 4096), ("max 64", c, 64)):
    v = t.get("vision")
    if not v:
        bad.append(f"{name}: no vision object"); continue
    if v["image_tokens"] != tokens: bad.append(f"{name}: image_tokens {v['image_tokens']}, expected {tokens}")
    if v["weights_bytes"] < size: bad.append(f"{name}: tower weights {v['weights_bytes']} < its file {size}")
    floor = 5 * 4 * tokens * 1024 * 4
    if v["image_bytes"] < floor: bad.append(f"{name}: image activations {v['image_bytes']} < the 5 x N x D floor {floor}")
    for r in t["rows"]:
        if not r["measured"]: continue
        if r.get("vision_bytes") != v["weights_bytes"] + v["image_bytes"]:
            bad.append(f"{name} {r['recipe']}: vision_bytes {r.get('vision_bytes')} is not the tower's share")
        if r["total_bytes"] != r["weights_bytes"] + r["heap_bytes"] + r.get("vision_bytes", 0):
            bad.append(f"{name} {r['recipe']}: total {r['total_bytes']} is not file + heap + tower")
if a.get("vision") and b.get("vision") and c.get("vision"):
    if not c["vision"]["image_bytes"] < a["vision"]["image_bytes"] < b["vision"]["image_bytes"]:
        bad.append("the image activations do not grow with the tokens")
if "vision" in n or any("vision_bytes" in r for r in n["rows"]): bad.append("a fit without --mmproj counts a tower")
ra = {r["recipe"]: r for r in a["rows"]}; rn = {r["recipe"]: r for r in n["rows"]}
for k in ("source", "Q4_K_M"):
    if k in ra and k in rn and ra[k]["weights_bytes"] != rn[k]["weights_bytes"]:
        bad.append(f"{k}: the text model's mapping differs with the tower")
for x in bad: print("MISMATCH:", x)
if not bad:
    print(f"tower: {a['vision']['weights_bytes']} B weights; images of 64 / 510 / 4096 tokens: "
          f"{c['vision']['image_bytes']} / {a['vision']['image_bytes']} / {b['vision']['image_bytes']} B")
    # a budget between Q4_K_M alone and Q4_K_M with the tower
    q4 = rn["Q4_K_M"]["total_bytes"]
    print(f"BUDGET {q4 + (1 << 20)}")
sys.exit(1 if bad else 0)
PY
script_verdict $? "$PL_TMP/py" "fit's tower figures are wrong"
budget=$(sed -n 's/^BUDGET //p' "$PL_TMP/py")
if [ -n "$budget" ]; then
    fitj "$PL_TMP/d.json" --memory "$budget" --ctx 512 || fail "fit without the tower at $budget failed"
    ok
    grep -q '"chosen": "Q4_K_M"' "$PL_TMP/d.json" || fail "without the tower, $budget should fit Q4_K_M: $(head -c 300 "$PL_TMP/d.json")"
    expect_rc 1 "$BIN" fit --quiet --model "$T" -t 2 --memory "$budget" --ctx 512 --mmproj "$M"
    ok
    grep -q "Q4_K_M" "$PL_TMP/out" && grep -q "^Q4 .* no " "$PL_TMP/out" ||
        fail "with the tower Q4_K_M should not fit $budget: $(head -c 600 "$PL_TMP/out")"
    expect_grep "the vision tower" "$PL_TMP/out"
fi
# a tower for another text width; misuse
expect_rc 0 "$BIN" synth --arch qwen3 --n-layer 1 --n-embd 256 --n-head 2 --n-head-kv 1 --head-dim 128 --n-ff 256 \
    --quiet "$PL_TMP/small.gguf"
expect_rc 1 "$BIN" fit --quiet --model "$PL_TMP/small.gguf" --memory 8G --ctx 512 --mmproj "$M"
expect_grep "mm.gguf" "$PL_TMP/err"
expect_rc 2 "$BIN" fit --model "$T" --memory 8G --image-max-tokens 64
expect_grep "goes with --mmproj" "$PL_TMP/err"
expect_rc 2 "$BIN" fit --model "$T" --memory 8G --mmproj "$M" --image-max-tokens 3
done_testing
