# test_quantize_mmproj.sh -- `pocketllm quantize` on an mmproj (the
# Qwen3-VL-2B vision tower, cut to 6 blocks so one DeepStack tap is left)
# against llama.cpp, which quantizes mmproj files with llama-quantize itself
# (its quantize-only "clip" architecture):
#   1. our file equals llama.cpp's, tensor by tensor and in metadata
#      (pl_quant_diff), for the rungs marked "=" below: every type once
#      (Q4_K_M holds q4_K and q6_K, and shows the recipe's mapping on an
#      mmproj); the others are the same per-type code, and comparing them
#      too would double the test's time (quantizing 130M weights);
#   2. libmtmd loads every rung (pl_mtmd info) and encodes a generated
#      160x128 image with it (pl_mtmd encode: 20 merged tokens);
#   3. the correlation of each rung's embeddings with the f16 file's --
#      cosine over all output floats and the smallest per-token cosine --
#      from libmtmd, and, when tests/tools/pl_vision_encode is built, from
#      our tower on the same files against our f16 tower, side by side.
# Asserted: q8_0's correlation >= 0.999 on both sides, and ours within
# MARGIN of llama.cpp's figure for every rung: |ours - theirs| <=
# max(2e-4, 0.25 x (1 - theirs)), on 1 - cosine -- the two engines round
# activations alike but not identically, so the margin scales with the
# quantization error itself.
. "$(dirname "$0")/mtmd_lib.sh"
BIN=$PL_BIN
TEXT_DIMS=(--n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 512 --quiet)
T=$PL_TMP/text_vl.gguf M=$PL_TMP/mmproj.gguf IMG=$PL_TMP/img.png
VENC=${PL_TOOLS:-}/pl_vision_encode

expect_rc 0 "$BIN" synth --arch qwen3vl --n-layer 2 "${TEXT_DIMS[@]}" "$T"
expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$M" --vision-layers 6 --type f16 --seed 11 --quiet
# a smooth gradient with a checkerboard on it, as PNG (zlib only: no imaging library)
python3 - "$IMG" <<'EOF'
import struct, sys, zlib
w, h = 160, 128
rows = b''.join(b'\0' + bytes(v for x in range(w) for v in
        ((x * 255 // w), (y * 255 // h), (255 if ((x // 8) + (y // 8)) % 2 else 40))) for y in range(h))
chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
open(sys.argv[1], 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
                              chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
EOF
for f in "$T" "$M" "$IMG"; do
    [ -s "$f" ] || { fail "input $f was not made"; done_testing; exit 1; }
done

# the rungs: our TYPE, whether llama.cpp's file is compared ("=" or "-"),
# llama-quantize's recipe and options
RUNGS=(
    "f16 = F16 --pure" "bf16 = BF16 --pure" "q8_0 = Q8_0 --pure" "q6_K - Q6_K --pure" "q5_K = Q5_K_S --pure"
    "q4_K - Q4_K_S --pure" "q4_0 = Q4_0 --pure" "Q4_K_M = Q4_K_M"
)
: >"$PL_TMP/jobs"
declare -A job=()
n_jobs=0
for i in "${!RUNGS[@]}"; do
    read -r ours cmp recipe opts <<<"${RUNGS[$i]}"
    [ "$cmp" = "=" ] || continue
    echo "$M $PL_TMP/ref$i.gguf $recipe -t 2 $opts" >>"$PL_TMP/jobs"
    job[$i]=$n_jobs
    n_jobs=$((n_jobs + 1))
done
"$ORACLE" quantize-batch "$PL_TMP/jobs" >"$PL_TMP/oracle.status" 2>"$PL_TMP/oracle.err"
mapfile -t status <"$PL_TMP/oracle.status"

# our tower, when its tool is built (stated in the table when it is not)
have_venc=0
if [ -x "$VENC" ]; then
    if "$VENC" "$T" "$M" --image "$IMG" --out "$PL_TMP/ours_f16.f32" --threads 2 >"$PL_TMP/venc.out" 2>"$PL_TMP/venc.err"; then
        have_venc=1
    else
        fail "pl_vision_encode is built but fails on the f16 tower: $(tail -c 300 "$PL_TMP/venc.err")"
    fi
else
    echo "NOTE: $VENC is not built: only llama.cpp's side of the correlation is measured" >&2
fi
expect_rc 0 "$PL_MTMD" encode "$T" "$M" "$IMG" --out "$PL_TMP/mtmd_f16.f32" -t 2

: >"$PL_TMP/pairs"
for i in "${!RUNGS[@]}"; do
    read -r ours cmp recipe opts <<<"${RUNGS[$i]}"
    R=$PL_TMP/rung_$ours.gguf
    if [ "$cmp" = "=" ]; then
        ok
        [ "${status[${job[$i]}]:-}" = ok ] ||
            fail "$ours: llama.cpp did not quantize the mmproj (${status[${job[$i]}]:-no status}): $(tail -c 300 "$PL_TMP/oracle.err")"
    fi
    expect_rc 0 "$BIN" quantize --quiet -t 2 "$M" "$R" "$ours" || continue
    if [ "$cmp" = "=" ] && [ -s "$PL_TMP/ref$i.gguf" ]; then
        ok
        if "$PL_TOOLS/pl_quant_diff" "$R" "$PL_TMP/ref$i.gguf" >"$PL_TMP/bdiff" 2>&1; then
            echo "$ours: equal to llama.cpp's file ($(grep '^equal:' "$PL_TMP/bdiff"))" >&2
        else
            fail "$ours: our mmproj differs from llama.cpp's: $(head -c 400 "$PL_TMP/bdiff" | tr '\n' ' ')"
        fi
        rm -f "$PL_TMP/ref$i.gguf"
    fi
    expect_rc 0 "$PL_MTMD" info "$T" "$R" || continue
    expect_rc 0 "$PL_MTMD" encode "$T" "$R" "$IMG" --out "$PL_TMP/mtmd_$ours.f32" -t 2 || continue
    ours_out=-
    if [ "$have_venc" = 1 ]; then
        if "$VENC" "$T" "$R" --image "$IMG" --out "$PL_TMP/ours_$ours.f32" --threads 2 >"$PL_TMP/venc.out" 2>"$PL_TMP/venc.err"; then
            ours_out=$PL_TMP/ours_$ours.f32
        else
            fail "$ours: our tower fails on the rung: $(tail -c 300 "$PL_TMP/venc.err")"
        fi
    fi
    echo "$ours $PL_TMP/mtmd_$ours.f32 $ours_out" >>"$PL_TMP/pairs"
    rm -f "$R"
done

python3 - "$PL_TMP/pairs" "$PL_TMP/mtmd_f16.f32" "$([ "$have_venc" = 1 ] && echo "$PL_TMP/ours_f16.f32" || echo -)" \
    >"$PL_TMP/py" 2>&1 <<'EOF'
import math, struct, sys
pairs, mtmd_base, ours_base = sys.argv[1:]
W = 4096  # floats per token: the 2048-wide projection and one DeepStack set
def load(p):
    raw = open(p, 'rb').read()
    return struct.unpack(f'<{len(raw) // 4}f', raw)
def corr(a, b):
    if len(a) != len(b) or not a or len(a) % W:
        return None
    def cos(x, y):
        xy = sum(p * q for p, q in zip(x, y)); xx = sum(p * p for p in x); yy = sum(q * q for q in y)
        return xy / math.sqrt(xx * yy) if xx > 0 and yy > 0 else 0.0
    per = [cos(a[i:i + W], b[i:i + W]) for i in range(0, len(a), W)]
    return cos(a, b), min(per), len(per)
mb = load(mtmd_base)
ob = load(ours_base) if ours_base != '-' else None
bad = []
print(f"{'rung':7} | {'llama.cpp cos':>13} {'min/token':>10} | {'ours cos':>10} {'min/token':>10} | margin")
for line in open(pairs):
    rung, mpath, opath = line.split()
    m = corr(load(mpath), mb)
    if m is None:
        bad.append(f"{rung}: libmtmd's output has another size than the f16 file's"); continue
    o = corr(load(opath), ob) if opath != '-' and ob is not None else None
    margin = max(2e-4, 0.25 * (1 - m[0]))
    os_ = f"{o[0]:10.6f} {o[1]:10.6f}" if o else f"{'-':>10} {'-':>10}"
    print(f"{rung:7} | {m[0]:13.6f} {m[1]:10.6f} | {os_} | {margin:.1e}  ({m[2]} tokens)")
    if opath != '-' and o is None:
        bad.append(f"{rung}: our tower's output has another size than our f16 tower's")
    if rung == 'q8_0':
        if m[0] < 0.999 or m[1] < 0.999:
            bad.append(f"q8_0: llama.cpp's correlation {m[0]:.6f} (min per token {m[1]:.6f}) is below 0.999")
        if o and (o[0] < 0.999 or o[1] < 0.999):
            bad.append(f"q8_0: our correlation {o[0]:.6f} (min per token {o[1]:.6f}) is below 0.999")
    if o and abs((1 - o[0]) - (1 - m[0])) > margin:
        bad.append(f"{rung}: our cosine {o[0]:.6f} is not within {margin:.1e} of llama.cpp's {m[0]:.6f}")
for b in bad:
    print("MISMATCH:", b)
sys.exit(1 if bad else 0)
EOF
script_verdict $? "$PL_TMP/py" "the quantized towers' correlations are wrong (table above)"
[ "$(wc -l <"$PL_TMP/pairs")" = "${#RUNGS[@]}" ] || fail "only $(wc -l <"$PL_TMP/pairs") of ${#RUNGS[@]} rungs were encoded"
ok
done_testing
