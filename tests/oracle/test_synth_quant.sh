# test_synth_quant.sh -- `pocketllm synth --type RECIPE`: a quantized rung
# written directly (random valid blocks, no f16 intermediate), held to:
#  - every tensor's type and the file type equal llama-quantize's for the
#    same shape's f16 file (llama.cpp run through the oracle), for every
#    recipe, on dense and MoE shapes with rows of whole 256-blocks and with
#    rows that fall back to smaller blocks; recipes llama.cpp refuses without
#    an importance matrix are given a flat one (synth plans them as made
#    with one); a lower-case type is llama-quantize --pure;
#  - every block of every type decodes, by llama.cpp's own to_float, to
#    finite values of the fill's scale (max within 2x its bound, RMS within
#    1.6x);
#  - deterministic; llama.cpp loads and runs directly-quantized MoE files,
#    `pocketllm inspect` reads them;
#  - on a dense model (the ladder's shape, test_ladder_*.sh) our forward
#    pass agrees with llama.cpp's on directly-quantized files as it does on
#    files llama.cpp quantized (same margins).
# Small shapes only, for the suite's time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"
T=$PL_TMP

cat >"$T/flat_imatrix.py" <<'PY'
# flat_imatrix.py INSPECT_JSON OUT: ones for every matrix (llama.cpp's GGUF
# imatrix: "<name>.in_sum2" [ne0, experts], "<name>.counts" [1, experts])
import json, struct, sys
d = json.load(open(sys.argv[1]))
s = lambda x: struct.pack("<Q", len(x.encode())) + x.encode()
kv = (s("general.type") + struct.pack("<I", 8) + s("imatrix")
      + s("imatrix.datasets") + struct.pack("<IIQ", 9, 8, 1) + s("flat")
      + s("imatrix.chunk_count") + struct.pack("<II", 4, 1)
      + s("imatrix.chunk_size") + struct.pack("<II", 4, 1))
tensors = []
for t in d["tensors"]:
    sh = t["shape"]
    if len(sh) < 2 or t["name"] in ("token_embd.weight", "output.weight"):
        continue
    m = sh[2] if len(sh) > 2 else 1
    tensors += [(t["name"] + ".in_sum2", sh[0], m), (t["name"] + ".counts", 1, m)]
info, data = b"", b""
for name, a, b in tensors:
    info += s(name) + struct.pack("<IQQIQ", 2, a, b, 0, len(data))
    blob = struct.pack("<%df" % (a * b), *([1.0] * (a * b)))
    data += blob + b"\0" * (-len(blob) % 32)
head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 4) + kv + info
open(sys.argv[2], "wb").write(head + b"\0" * (-len(head) % 32) + data)
PY

cat >"$T/same_types.py" <<'PY'
# same_types.py PAIRS: each line "OURS.json REF.json LABEL"; every tensor's
# type and shape, and general.file_type, must be equal
import json, sys
bad = n = 0
for line in open(sys.argv[1]):
    a, b, label = line.split()
    da, db = json.load(open(a)), json.load(open(b))
    ta = {t["name"]: (t["type"], t["shape"]) for t in da["tensors"]}
    tb = {t["name"]: (t["type"], t["shape"]) for t in db["tensors"]}
    diff = [(k, ta.get(k), tb.get(k)) for k in sorted(set(ta) | set(tb)) if ta.get(k) != tb.get(k)]
    fa, fb = da["metadata"].get("general.file_type"), db["metadata"].get("general.file_type")
    n += 1
    if diff or fa != fb:
        bad += 1
        print("%s: file type %s / llama.cpp %s; %d tensors differ, e.g. %s" % (label, fa, fb, len(diff), diff[:3]))
print("%d files, %d with other types than llama-quantize's" % (n, bad))
sys.exit(1 if bad or n == 0 else 0)
PY

cat >"$T/blocks.py" <<'PY'
# blocks.py extract|check LIST DIR: for each "PREFIX" line of LIST (a model
# PREFIX.gguf with its inspect PREFIX.json), the first rows (up to 16) of
# every quantized tensor cut out for llama.cpp's to_float (DIR/jobs); then
# each decoded sample: finite, max within 2x the fill's bound, RMS within
# 1.6x the fill's (whole tensors would cost the suite minutes of Python; all
# blocks of a type and scale are drawn from one pool)
import array, json, math, os, sys
mode, lst, out = sys.argv[1:4]
rows = lambda t: math.prod(t["shape"][1:])
take = lambda t: min(rows(t), 16)
jobs = open(os.path.join(out, "jobs"), "w") if mode == "extract" else None
failed = 0
for k, prefix in enumerate(l.strip() for l in open(lst)):
    d = json.load(open(prefix + ".json"))
    qs = [(i, t) for i, t in enumerate(d["tensors"]) if t["type"] not in ("f32", "f16", "bf16")]
    bad = []
    for i, t in qs:
        q, f = os.path.join(out, "%d.%d.q" % (k, i)), os.path.join(out, "%d.%d.f" % (k, i))
        if jobs:
            with open(prefix + ".gguf", "rb") as m:
                m.seek(t["offset"])
                open(q, "wb").write(m.read(t["bytes"] // rows(t) * take(t)))
            jobs.write("to-float %s %s %s\n" % (t["type"], q, f))
            continue
        v = array.array("f")
        v.frombytes(open(f, "rb").read())
        bound = 1.0 if t["name"] == "token_embd.weight" else math.sqrt(3.0 / t["shape"][0])
        finite = all(math.isfinite(x) for x in v)
        big = max(abs(x) for x in v) if finite and v else float("inf")
        ratio = math.sqrt(sum(x * x for x in v) / len(v)) / (bound / math.sqrt(3.0)) if finite and v else float("nan")
        if len(v) != t["shape"][0] * take(t) or not finite or big > 2 * bound or not 1 / 1.6 < ratio < 1.6:
            bad.append("  %s %s: %d values, finite %s, max %.3g (bound %.3g), rms/fill %.3f" %
                       (t["name"], t["type"], len(v), finite, big, bound, ratio))
    if jobs:
        continue
    print("%s: %d of %d quantized tensors (%s) decode to sensible values" % (os.path.basename(prefix),
          len(qs) - len(bad), len(qs), " ".join(sorted({t["type"] for i, t in qs}))))
    print("\n".join(bad[:8])) if bad else None
    failed += len(bad) > 0
sys.exit(1 if failed else 0)
PY

inspect_json() { "$BIN" inspect --json --tensors "$1" >"$2" || fail "inspect $1"; }

# ---- types: ours against llama-quantize's ------------------------------------
ALL="Q8_0 Q6_K Q5_K_M Q5_K_S Q5_1 Q5_0 Q4_K_M Q4_K_S Q4_1 Q4_0 IQ4_XS IQ4_NL Q3_K_L Q3_K_M Q3_K_S IQ3_M IQ3_S"
ALL="$ALL IQ3_XS IQ3_XXS Q2_K Q2_K_S IQ2_M IQ2_S IQ2_XS IQ2_XXS IQ1_M IQ1_S TQ2_0 TQ1_0 MXFP4_MOE F16 BF16 F32"
SOME="Q4_K_M Q3_K_M Q2_K IQ2_XXS IQ3_XXS MXFP4_MOE"
: >"$T/jobs"
: >"$T/ours_list"
# LABEL|synth args|recipes ("type:RECIPE": a lower-case type against --pure).
# moe-4 (moe-small with 4 experts: the recipes tell 1, >= 4 and 8 experts
# apart) has rows of whole 256-blocks, and between them its files hold every
# encodable type; small's ffn_down (704) and the tiny shapes fall back.
while IFS='|' read -r label args recipes; do
    # shellcheck disable=SC2086
    expect_rc 0 "$BIN" synth --quiet $args --type f16 "$T/$label.f16.gguf" || continue
    inspect_json "$T/$label.f16.gguf" "$T/$label.f16.json"
    python3 "$T/flat_imatrix.py" "$T/$label.f16.json" "$T/$label.imatrix" || fail "$label: flat imatrix"
    for r in $recipes; do
        ty=${r%%:*} recipe=${r#*:} extra=
        [ "$ty" != "$r" ] && extra=--pure
        echo "$T/$label.f16.gguf $T/$label.$ty.ref.gguf $recipe -t 2 $extra" >>"$T/jobs"
        # shellcheck disable=SC2086
        expect_rc 0 "$BIN" synth --quiet $args --type "$ty" "$T/$label.$ty.gguf" || continue
        echo "$label $ty" >>"$T/ours_list"
    done
done <<LIST
moe-4|--shape moe-small --n-expert 4 --n-expert-used 2|$ALL q4_K:Q4_K_S q5_K:Q5_K_S
small|--shape small --untied|$SOME Q5_K_M Q4_0 IQ4_XS IQ1_M TQ1_0 q8_0:Q8_0
qwen2moe-256|--shape moe-small --arch qwen2moe --n-expert 4 --n-expert-used 2|$SOME
moe-8|--shape moe-small --n-expert 8 --n-expert-used 2 --n-layer 2|Q4_K_M Q2_K IQ2_XXS
moe-tiny|--shape moe-tiny|Q4_K_M IQ3_XXS Q2_K
qwen2moe-tiny|--shape qwen2moe-tiny|Q4_K_M IQ3_XXS Q2_K
LIST
# llama.cpp as a user runs it: without an importance matrix, and with the
# flat one where it refuses to go without (one oracle process per pass:
# ggml builds its IQ grids once)
"$ORACLE" quantize-batch "$T/jobs" >"$T/qstatus" 2>"$T/qerr"
paste -d' ' "$T/qstatus" "$T/jobs" | awk '$1 != "ok" { im = $2; sub(/\.f16\.gguf$/, ".imatrix", im);
    $1 = ""; print substr($0, 2) " --imatrix " im }' >"$T/jobs2"
"$ORACLE" quantize-batch "$T/jobs2" >"$T/qstatus2" 2>"$T/qerr2"
ok
[ "$(grep -vc '^ok$' "$T/qstatus2")" = 0 ] ||
    fail "llama.cpp did not quantize every job: $(paste -d' ' "$T/qstatus2" "$T/jobs2" | grep -v '^ok' | head -3)"
: >"$T/pairs"
while read -r label ty; do
    [ -f "$T/$label.$ty.ref.gguf" ] || continue
    inspect_json "$T/$label.$ty.gguf" "$T/$label.$ty.json"
    inspect_json "$T/$label.$ty.ref.gguf" "$T/$label.$ty.ref.json"
    echo "$T/$label.$ty.json $T/$label.$ty.ref.json $label/$ty" >>"$T/pairs"
    rm -f "$T/$label.$ty.ref.gguf"
done <"$T/ours_list"
python3 "$T/same_types.py" "$T/pairs" >"$T/types.out" 2>&1
script_verdict $? "$T/types.out" "synth --type: tensor types differ from llama-quantize's"

# ---- every type's blocks, decoded by llama.cpp -------------------------------
mkdir -p "$T/dec"
: >"$T/dec/list"
for r in $ALL q4_K q5_K; do
    case $r in F16 | BF16 | F32) continue ;; esac
    [ -f "$T/moe-4.$r.json" ] && echo "$T/moe-4.$r" >>"$T/dec/list"
done
printf '%s\n' "$T/small.Q4_K_M" "$T/small.IQ2_XXS" "$T/qwen2moe-256.Q2_K" "$T/moe-tiny.Q4_K_M" >>"$T/dec/list"
python3 "$T/blocks.py" extract "$T/dec/list" "$T/dec" || fail "cutting out blocks"
expect_rc 0 "$ORACLE" quant-batch "$T/dec/jobs"
python3 "$T/blocks.py" check "$T/dec/list" "$T/dec" >"$T/blk.out" 2>&1
script_verdict $? "$T/blk.out" "synth --type: blocks that do not decode to the fill's values"
for ty in q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K q6_K iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq1_s iq1_m iq4_nl \
          iq4_xs tq1_0 tq2_0 mxfp4; do
    ok
    grep -q "(.*\b$ty\b.*) decode" "$T/blk.out" || fail "no $ty block was checked"
done
rm -rf "${T:?}/dec"

# ---- deterministic; loads in llama.cpp and in inspect -------------------------
expect_rc 0 "$BIN" synth --quiet --shape moe-small --n-expert 4 --n-expert-used 2 --type Q4_K_M "$T/again.gguf"
ok
cmp -s "$T/again.gguf" "$T/moe-4.Q4_K_M.gguf" || fail "synth --type Q4_K_M: a second run wrote different bytes"
expect_rc 0 "$BIN" synth --quiet --shape moe-small --n-expert 4 --n-expert-used 2 --type Q4_K_M --seed 1 \
    "$T/again.gguf"
ok
cmp -s "$T/again.gguf" "$T/moe-4.Q4_K_M.gguf" && fail "synth --type Q4_K_M: seeds 0 and 1 wrote the same bytes"
for f in moe-4.Q4_K_M moe-4.IQ2_XXS qwen2moe-256.Q4_K_M moe-8.IQ2_XXS moe-tiny.Q2_K qwen2moe-tiny.IQ3_XXS small.Q4_K_M; do
    expect_rc 0 "$ORACLE" greedy "$T/$f.gguf" --prompt "Once upon a time" -n 4 --fa off --kv f16 -t 1
    ok
    [ "$(wc -w <"$T/out")" -ge 1 ] || fail "$f: llama.cpp generated nothing"
    expect_rc 0 "$BIN" inspect "$T/$f.gguf"
done
rm -f "$T"/*.gguf "$T"/*.json

# ---- our forward pass on directly-quantized dense files ------------------------
# the ladder's model (ladder_lib.sh): rows of whole 256-blocks, untied; its
# margins (0.2 near-tie, 2% of the logit range)
for r in Q4_K_M IQ2_XXS; do
    expect_rc 0 "$BIN" synth --quiet --arch qwen3 --n-embd 256 --n-layer 2 --n-head 4 --n-head-kv 2 --head-dim 64 \
        --n-ff 512 --untied --type "$r" --seed 3 "$T/d.gguf" || continue
    forward_check "synth --type $r" "$T/d.gguf" f16 0.2 2e-2 32
done
done_testing
