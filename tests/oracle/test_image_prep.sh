# test_image_prep.sh -- PocketLLM's Qwen3-VL image preprocessing
# (src/vision/image_prep.c) against libmtmd's, value for value: the
# bundle's tools/mtmd/test-1.jpeg and PNGs generated here (noise, gradients
# and one-pixel black/white stripes, which drive the bicubic filter past
# 0..255 and so through its clamping), at sizes that take every path --
# already aligned (a copy), one side padded only, only the height or only
# the width resized (20x1000, 1000x20), both sides resized and padded,
# the token budget's downscale branch (a 12-megapixel image, and
# small --max-tokens) and its upscale branch (17x17, 5x3, 1x1, and large
# --min-tokens).  For each, `pl_mtmd preprocess` writes the image as
# libmtmd decoded it (raw RGB8) and libmtmd's preprocessed f32 image;
# `pl_image_prep` runs ours on the same bytes and states the largest
# difference (the bound is 1/255; it is 0 when the two agree).  The
# libmtmd side also checks that its full context tokenizes the image into
# (nx / 32) x (ny / 32) merged tokens.  Then `pl_image_prep selftest`:
# the refusals, and a 100-megapixel image within the budget in bounded
# memory.  And the whole path of a file: our decode + preprocessing
# against libmtmd's (exact for PNG, alpha and grayscale JPEG; a colour
# JPEG within 0.04, stb_image not being libjpeg-turbo).
#
# The vision tower is the 2-block Qwen3-VL-2B shape in f16 (the
# preprocessing reads only its hyperparameters), paired with a one-layer
# qwen3 text model: the widths match without a DeepStack tap.
. "$(dirname "$0")/mtmd_lib.sh"
PREP=$PL_TOOLS/pl_image_prep
[ -x "$PREP" ] || { echo "FAIL: no $PREP (a helper program of the build)" >&2; exit 1; }
JPEG=$LLAMA_SRC/tools/mtmd/test-1.jpeg
[ -f "$JPEG" ] || { echo "FAIL: no $JPEG in the llama.cpp bundle" >&2; exit 1; }

expect_rc 0 "$PL_BIN" synth --arch qwen3 --n-layer 1 --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 \
    --n-ff 512 --quiet "$PL_TMP/text.gguf"
expect_rc 0 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/mmproj.gguf" --vision-layers 2 --type f16 --quiet

# the test images: PNG (RGB, 8 bits) written with the standard library alone
python3 - "$PL_TMP" >"$PL_TMP/gen" 2>&1 <<'EOF'
import random, struct, sys, zlib
out = sys.argv[1]
def png(path, w, h, seed):
    rnd = random.Random(seed)
    # row kinds, in bands of 8 rows: noise, a colour gradient, stripes
    grad = bytes(v for x in range(w) for v in (x * 255 // max(1, w - 1), 255 - x * 255 // max(1, w - 1), (x * 7) & 255))
    stripes = bytes(v for x in range(w) for v in ((255, 255, 255) if (x // (1 + x % 3)) & 1 else (0, 0, 0)))
    raw = bytearray()
    for y in range(h):
        raw.append(0)  # filter type None
        kind = (y // 8) % 3
        raw += rnd.randbytes(3 * w) if kind == 0 else grad if kind == 1 else stripes
    chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(bytes(raw), 1)) + chunk(b'IEND', b''))
for i, (w, h) in enumerate([(512, 512), (768, 768), (800, 600), (1024, 1024), (333, 777), (17, 17), (3000, 200),
                            (4000, 3000), (20, 1000), (1000, 20), (1, 1), (5, 3)]):
    png(f"{out}/img_{w}x{h}.png", w, h, i)
    print(f"img_{w}x{h}.png")
EOF
script_verdict $? "$PL_TMP/gen" "could not generate the test images"

# IMAGE [--min-tokens N] [--max-tokens N]
compare() {
    local image=$1; shift
    local what
    what="$(basename "$image") $*"
    ok
    if ! "$PL_MTMD" preprocess "$PL_TMP/text.gguf" "$PL_TMP/mmproj.gguf" "$image" --out-rgb "$PL_TMP/rgb" \
            --out "$PL_TMP/ref.f32" "$@" >"$PL_TMP/ref" 2>"$PL_TMP/err"; then
        fail "pl_mtmd preprocess $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    local w h nx ny nt
    w=$(awk '$1 == "width" {print $2}' "$PL_TMP/ref"); h=$(awk '$1 == "height" {print $2}' "$PL_TMP/ref")
    nx=$(awk '$1 == "nx" {print $2}' "$PL_TMP/ref"); ny=$(awk '$1 == "ny" {print $2}' "$PL_TMP/ref")
    nt=$(awk '$1 == "n_tokens" {print $2}' "$PL_TMP/ref")
    ok
    if [ -z "$nt" ] || [ "$nt" != $(( (nx / 32) * (ny / 32) )) ]; then
        fail "$what: libmtmd's context gives '$nt' tokens for its own ${nx}x${ny} preprocessing"
    fi
    ok
    if "$PREP" "$PL_TMP/rgb" "$w" "$h" "$PL_TMP/ref.f32" "$nx" "$ny" "$@" >"$PL_TMP/cmp" 2>&1; then
        echo "$what: $(tr '\n' ' ' <"$PL_TMP/cmp")" >&2
    else
        fail "$what: $(tr '\n' ' ' <"$PL_TMP/cmp")"
    fi
}

compare "$JPEG"
compare "$JPEG" --max-tokens 64
compare "$JPEG" --min-tokens 1024
for wh in 512x512 768x768 800x600 1024x1024 333x777 17x17 3000x200 4000x3000 20x1000 1000x20 1x1 5x3; do
    compare "$PL_TMP/img_$wh.png"
done
compare "$PL_TMP/img_1024x1024.png" --max-tokens 100
compare "$PL_TMP/img_3000x200.png" --max-tokens 64
compare "$PL_TMP/img_333x777.png" --min-tokens 2000
compare "$PL_TMP/img_17x17.png" --min-tokens 64 --max-tokens 256

# Decoding and preprocessing together: OUR decode (pl_image_decode: libjpeg-
# turbo, libpng) of IMAGE, preprocessed, against libmtmd's preprocessing of
# REF (its own stb_image decode; REF is IMAGE unless given) -- the whole path
# a user's file takes.  decoded IMAGE BOUND [REF]
DEC=$PL_TOOLS/pl_image_decode
decoded() {
    local image=$1 bound=$2 ref=${3:-$1} what
    what="decoded by us: $(basename "$image")"
    ok
    if ! "$PL_MTMD" preprocess "$PL_TMP/text.gguf" "$PL_TMP/mmproj.gguf" "$ref" --out-rgb "$PL_TMP/rgb" \
            --out "$PL_TMP/ref.f32" >"$PL_TMP/ref" 2>"$PL_TMP/err"; then
        fail "pl_mtmd preprocess $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    ok
    if ! "$DEC" "$image" --out "$PL_TMP/ours.rgb" >"$PL_TMP/dec" 2>"$PL_TMP/err"; then
        fail "pl_image_decode $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    local w h nx ny
    w=$(awk '$1 == "width" {print $2}' "$PL_TMP/dec"); h=$(awk '$1 == "height" {print $2}' "$PL_TMP/dec")
    nx=$(awk '$1 == "nx" {print $2}' "$PL_TMP/ref"); ny=$(awk '$1 == "ny" {print $2}' "$PL_TMP/ref")
    ok
    if "$PREP" "$PL_TMP/ours.rgb" "$w" "$h" "$PL_TMP/ref.f32" "$nx" "$ny" --max-diff "$bound" >"$PL_TMP/cmp" 2>&1; then
        echo "$what: $(tr '\n' ' ' <"$PL_TMP/cmp")" >&2
    else
        fail "$what: $(tr '\n' ' ' <"$PL_TMP/cmp")"
    fi
}
if command -v convert >/dev/null && [ -x "$DEC" ]; then
    # the PNGs decode the same in both (lossless): the same floats
    decoded "$PL_TMP/img_800x600.png" 0
    decoded "$PL_TMP/img_3000x200.png" 0
    # a grayscale JPEG: libjpeg-turbo and stb_image agree on it here (0)
    convert -size 300x200 gradient:red-blue -colorspace Gray -quality 90 "$PL_TMP/gray.jpg"
    decoded "$PL_TMP/gray.jpg" 0
    # a colour JPEG: stb_image's IDCT, chroma upsampling and colour
    # conversion are not libjpeg-turbo's; on test-1.jpeg the decodes differ
    # by up to 3 levels in 5% of the bytes (oracle/test_image_decode.sh),
    # 0.0314 (4 levels / 255 / std 0.5) after preprocessing: bounded at 0.04.
    # libjpeg-turbo is what Pillow, and so the model's own training
    # pipeline, decodes with.
    decoded "$JPEG" 0.04
    # alpha: ours composites on white; libmtmd drops alpha, so its input is
    # ImageMagick's 8-bit flattening of the same image, which our
    # compositing reproduces exactly
    convert -size 256x160 gradient:red-blue -alpha set -channel A -fx 'i/w' +channel -depth 8 "PNG32:$PL_TMP/alpha.png"
    convert "$PL_TMP/alpha.png" -background white -flatten -depth 8 "PNG24:$PL_TMP/alpha_flat.png"
    decoded "$PL_TMP/alpha.png" 0 "$PL_TMP/alpha_flat.png"
else
    ok
    fail "no ImageMagick convert or no $DEC: the decode + preprocessing comparisons cannot run (scripts/install-deps.sh installs imagemagick)"
fi

# no reference needed: the refusals, and 100 megapixels in bounded memory
expect_rc 0 "$PREP" selftest
cat "$PL_TMP/out" >&2
done_testing
