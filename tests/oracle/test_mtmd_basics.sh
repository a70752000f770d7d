# test_mtmd_basics.sh -- llama.cpp's libmtmd (pl_mtmd) loads the
# random-weight Qwen3-VL-2B vision tower of `pocketllm synth --mmproj` and
# encodes the bundle's tools/mtmd/test-1.jpeg: the hyperparameters it reads
# are the real model's, and the image token count and grid are what
# Qwen3-VL's preprocessing rules give for that image's size (computed here
# from the JPEG header, independently of libmtmd).
#
# The vision tower is the real 2B shape cut to 6 blocks, which keeps one
# DeepStack tap (block 5): its embeddings are 2048 x (1 + 1) wide, and the
# text model (arch qwen3vl, two layers, of which synth gives one DeepStack
# input) takes 4096 wide inputs.  A 2-block tower has no tap left: 2048 wide, for a plain
# qwen3 text model -- and libmtmd refuses a pair whose widths differ.
. "$(dirname "$0")/mtmd_lib.sh"
IMAGE=$LLAMA_SRC/tools/mtmd/test-1.jpeg
[ -f "$IMAGE" ] || { echo "FAIL: no $IMAGE in the llama.cpp bundle" >&2; exit 1; }
TEXT_DIMS=(--n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 512 --quiet)

expect_rc 0 "$PL_BIN" synth --arch qwen3vl --n-layer 2 "${TEXT_DIMS[@]}" "$PL_TMP/text_vl.gguf"
expect_rc 0 "$PL_BIN" inspect "$PL_TMP/text_vl.gguf"
ok
grep -Eq "n_deepstack_layers +1$" "$PL_TMP/out" ||
    fail "the 2-layer qwen3vl text model should have 1 DeepStack input (this test pairs it with a 1-tap tower): $(grep deepstack "$PL_TMP/out")"
expect_rc 0 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/mmproj6.gguf" --vision-layers 6 --type f16 --seed 7 --quiet
# the CLI's refusals
expect_rc 2 "$PL_BIN" synth --shape qwen3-0.6b --mmproj "$PL_TMP/x.gguf" && expect_grep "no vision tower" "$PL_TMP/err"
expect_rc 2 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/x.gguf" --vision-layers 25 && expect_grep "24 blocks" "$PL_TMP/err"
expect_rc 2 "$PL_BIN" synth --shape qwen3vl-2b --vision-layers 2 "$PL_TMP/x.gguf" && expect_grep "needs --mmproj" "$PL_TMP/err"

# what libmtmd read: the real 2B vision hyperparameters, the cut depth and one tap
if expect_rc 0 "$PL_MTMD" info "$PL_TMP/text_vl.gguf" "$PL_TMP/mmproj6.gguf"; then
    cp "$PL_TMP/out" "$PL_TMP/info"
    for kv in "projector qwen3vl_merger" "vision 1" "audio 0" "mrope 1" "n_embd 1024" "n_layer 6" "n_head 16" \
              "n_ff 4096" "image_size 768" "patch_size 16" "n_merge 2" "projection_dim 2048" "mmproj_embd 4096" \
              "n_deepstack 1" "image_mean 0.5 0.5 0.5" "image_std 0.5 0.5 0.5" "eps 1e-06" "text_n_embd_inp 4096"; do
        ok
        grep -qx -- "$kv" "$PL_TMP/info" || fail "pl_mtmd info lacks '$kv': $(tr '\n' ';' <"$PL_TMP/info")"
    done
fi

# the image through libmtmd's preprocessing and the tower
if expect_rc 0 "$PL_MTMD" encode "$PL_TMP/text_vl.gguf" "$PL_TMP/mmproj6.gguf" "$IMAGE" --out "$PL_TMP/embd.f32" -t 2; then
    cp "$PL_TMP/out" "$PL_TMP/encode"
    python3 - "$IMAGE" "$PL_TMP/info" "$PL_TMP/encode" "$PL_TMP/embd.f32" >"$PL_TMP/py" 2>&1 <<'EOF'
import math, struct, sys
image, info_path, enc_path, embd_path = sys.argv[1:]
def kv(path):
    return {l.split(' ', 1)[0]: l.split(' ', 1)[1].strip() for l in open(path) if ' ' in l}
info, enc = kv(info_path), kv(enc_path)
# the image's size from its JPEG frame header (SOF0/1/2)
d = open(image, 'rb').read()
i = 2
while True:
    marker, length = d[i + 1], struct.unpack('>H', d[i + 2:i + 4])[0]
    if marker in (0xC0, 0xC1, 0xC2):
        h, w = struct.unpack('>HH', d[i + 5:i + 9])
        break
    i += 2 + length
# Qwen3-VL's rules as llama.cpp v0.4.0 applies them (clip.cpp, mtmd-image.cpp):
# sides aligned to patch x merge = 32 pixels by rounding; a budget of 8 to
# 4096 merged tokens (min/max pixels = tokens x 32 x 32); over the budget
# both sides scale by sqrt(h w / max) and floor to 32, under it by
# sqrt(min / (h w)) and ceil to 32
patch, merge = 16, 2
f = patch * merge
min_px, max_px = 8 * f * f, 4096 * f * f
assert int(info['image_min_pixels']) == min_px and int(info['image_max_pixels']) == max_px, (info, min_px, max_px)
rnd = lambda x: int(math.floor(x / f + 0.5)) * f
wb, hb = max(f, rnd(w)), max(f, rnd(h))
if wb * hb > max_px:
    beta = math.sqrt(h * w / max_px)
    hb, wb = max(f, math.floor(h / beta / f) * f), max(f, math.floor(w / beta / f) * f)
elif wb * hb < min_px:
    beta = math.sqrt(min_px / (h * w))
    hb, wb = math.ceil(h * beta / f) * f, math.ceil(w * beta / f) * f
nx, ny = wb // f, hb // f
print(f"image {w}x{h} -> {wb}x{hb} pixels -> {wb // patch}x{hb // patch} patches -> {nx}x{ny} = {nx * ny} tokens")
bad = []
for key, want in (('n_tokens', nx * ny), ('nx', nx), ('ny', ny), ('n_embd', 4096), ('chunks', 3)):
    if int(enc[key]) != want:
        bad.append(f"{key} {enc[key]}, expected {want}")
# the embeddings: n_tokens rows of 4096, finite, O(1), not constant
raw = open(embd_path, 'rb').read()
n = nx * ny * 4096
if len(raw) != 4 * n:
    bad.append(f"embedding file has {len(raw)} bytes, expected {4 * n}")
else:
    v = struct.unpack(f'<{n}f', raw)
    if not all(math.isfinite(x) for x in v):
        bad.append("non-finite embeddings")
    else:
        mean = sum(v) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in v) / n)
        print(f"embeddings: mean {mean:.4f} sd {sd:.4f}")
        if not 0.01 < sd < 100:
            bad.append(f"embedding spread {sd} is not O(1)")
for b in bad:
    print("MISMATCH:", b)
sys.exit(1 if bad else 0)
EOF
    script_verdict $? "$PL_TMP/py" "libmtmd's image tokens differ from Qwen3-VL's preprocessing rules, or its embeddings are wrong"
fi

# no DeepStack tap left at 2 blocks: 2048 wide, for a plain qwen3 text model; the widths must match
expect_rc 0 "$PL_BIN" synth --arch qwen3 --n-layer 1 "${TEXT_DIMS[@]}" "$PL_TMP/text_q3.gguf"
expect_rc 0 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/mmproj2.gguf" --vision-layers 2 --quiet
if expect_rc 0 "$PL_MTMD" info "$PL_TMP/text_q3.gguf" "$PL_TMP/mmproj2.gguf"; then
    for kv in "n_layer 2" "n_deepstack 0" "mmproj_embd 2048" "mrope 0" "text_n_embd_inp 2048"; do
        expect_grep "$kv" "$PL_TMP/out"
    done
fi
expect_rc 1 "$PL_MTMD" info "$PL_TMP/text_q3.gguf" "$PL_TMP/mmproj6.gguf"
done_testing
