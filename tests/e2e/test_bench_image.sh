# test_bench_image.sh -- `pocketllm bench --mmproj`: the image-encode
# measurement appears (text and JSON) for a file and for a synthetic
# image, with the token count Qwen3-VL's preprocessing gives (a 160x128
# PNG: 5 x 4 merged tokens; --image-size 96x64: 3 x 2 < the 8-token
# minimum, so both sides scale by sqrt(8192 / (96 x 64)) and round up to
# 32: 128 x 96, 4 x 3 tokens), and the option misuse is refused.  No
# timing is judged (bench/compare --vision does the side by side).
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_TMP/t.gguf M=$PL_TMP/mm.gguf IMG=$PL_TMP/img.png
# a 2-block tower has no DeepStack tap: 2048 wide, for a plain qwen3 text model
expect_rc 0 "$BIN" synth --arch qwen3 --n-layer 1 --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 512 \
    --quiet "$T"
expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$M" --vision-layers 2 --quiet
python3 - "$IMG" <<'PY'
import struct, sys, zlib
w, h = 160, 128
rows = b''.join(b'\0' + bytes(v for x in range(w) for v in (x * 255 // w, y * 255 // h, 128)) for y in range(h))
chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
open(sys.argv[1], 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
                              chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
PY
expect_rc 0 "$BIN" bench --model "$T" --mmproj "$M" --image "$IMG" -p 0 -n 0 -r 1 -t 2 --quiet
expect_grep "160x128 -> 160x128, 20 tokens: preprocess" "$PL_TMP/out"
expect_rc 0 "$BIN" bench --model "$T" --mmproj "$M" --image-size 96x64 -p 8 -n 2 -r 1 -t 2 --quiet --json
python3 - "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
j = json.loads([l for l in open(sys.argv[1]) if l.startswith('{')][-1])
im = j.get("image") or {}
want = {"width": 96, "height": 64, "prep_width": 128, "prep_height": 96, "n_tokens": 12}
bad = [f"{k} {im.get(k)}, expected {v}" for k, v in want.items() if im.get(k) != v]
if not (im.get("encode_ms", 0) > 0 and len(im.get("encode_runs_ms", [])) == 1): bad.append(f"no encode time: {im}")
if "pp_tokens_per_s" not in j: bad.append("pp is gone beside the image")
for b in bad: print("MISMATCH:", b)
sys.exit(1 if bad else 0)
PY
script_verdict $? "$PL_TMP/py" "bench's image figures are wrong"
expect_rc 2 "$BIN" bench --model "$T" --mmproj "$M" -p 0 -n 0
expect_grep "exactly one of --image and --image-size" "$PL_TMP/err"
expect_rc 2 "$BIN" bench --model "$T" --image "$IMG"
expect_grep "go with --mmproj" "$PL_TMP/err"
expect_rc 2 "$BIN" bench --model "$T" --mmproj "$M" --image-size 12xq
done_testing
