# test_image_decode.sh -- PocketLLM's image decoding (src/vision/
# image_decode.c: libjpeg-turbo, libpng, libwebp) against ImageMagick's
# decode of the same files, byte for byte, and the bundle's test-1.jpeg
# against libmtmd's (stb_image) within a stated bound.
#
# The images are made here, at test time (never committed): with
# ImageMagick from one seeded plasma picture -- JPEG q90 (4:4:4), q75
# (4:2:0), 4:2:2, progressive, grayscale, CMYK (Adobe, inverted), each EXIF
# orientation 1-8 (an APP1 segment put in by Python, both byte orders);
# PNG RGB, RGBA with an alpha ramp, gray+alpha, palette with tRNS,
# interlaced, 16-bit (and 16-bit RGBA/gray+alpha of random samples, written
# by Python); WebP lossy, lossless with alpha, lossy with alpha.  The
# reference is `convert -define jpeg:dct-method=islow F -auto-orient
# +repage -background white -flatten -depth 8 rgb:-` (+repage: IM's
# transpose keeps the old page size, which -flatten would then crop to).
# Every one must be identical (max abs diff 0).
#
# The limits: a 12000x9000 JPEG (108 MP) comes out at 1/2 scale, 6000x4500,
# equal to ImageMagick's own 1/2-scale decode (-define jpeg:size), in
# memory bounded by that output (peak RSS under 2x its 81 MB); a
# 20000x15000 one (300 MP) at 1/4; both are baseline files written by
# Python (ImageMagick's pixel cache would need seconds and a GiB of disk);
# a 1x20000 strip decodes (its reference: the generator's own pixels).
# Bad inputs -- empty, text, random bytes, truncated JPEG/PNG/WebP, a PNG
# claiming 0x0 or 2^31 x 2^31, a 10000x10000 PNG, a GIF -- each exit 1
# (not a signal) with one line naming the problem.
. "$(dirname "$0")/mtmd_lib.sh"
DEC=$PL_TOOLS/pl_image_decode
[ -x "$DEC" ] || { echo "FAIL: no $DEC (a helper program of the build)" >&2; exit 1; }
if ! convert -version 2>/dev/null | grep -q ImageMagick; then
    echo "FAIL: ImageMagick's convert is needed (Debian: imagemagick; scripts/install-deps.sh installs it)" >&2
    exit 1
fi
convert -list format 2>/dev/null | grep -q "WEBP.*rw" || { echo "FAIL: this ImageMagick cannot write WebP" >&2; exit 1; }
JPEG1=$LLAMA_SRC/tools/mtmd/test-1.jpeg
[ -f "$JPEG1" ] || { echo "FAIL: no $JPEG1 in the llama.cpp bundle" >&2; exit 1; }
T=$PL_TMP

# ---- the images -------------------------------------------------------------
gen() { "$@" >>"$T/gen.log" 2>&1 || { cat "$T/gen.log" >&2; echo "FAIL: could not generate a test image: $*" >&2; exit 1; }; }
gen convert -size 257x131 -seed 7 plasma:red-blue -depth 8 "$T/base.png"
gen convert "$T/base.png" -alpha set -channel A -fx 'i/w' +channel -depth 8 "$T/rgba.png"
gen convert "$T/base.png" -quality 90 "$T/q90.jpg"
gen convert "$T/base.png" -quality 75 "$T/q75_420.jpg"
gen convert "$T/base.png" -quality 85 -sampling-factor 2x1 "$T/q85_422.jpg"
gen convert "$T/base.png" -quality 80 -interlace JPEG "$T/progressive.jpg"
gen convert "$T/base.png" -colorspace Gray -quality 90 "$T/gray.jpg"
gen convert "$T/base.png" -colorspace CMYK -quality 90 "$T/cmyk.jpg"
gen cp "$T/base.png" "$T/rgb.png"
gen convert "$T/base.png" -colorspace Gray -alpha set -channel A -fx 'j/h' +channel "$T/gray_alpha.png"
# a 16-colour palette whose first colour is transparent (tRNS)
gen convert "$T/base.png" -colors 16 "$T/pal_src.png"
gen convert "$T/pal_src.png" -transparent "$(convert "$T/pal_src.png" -format '%[pixel:p{0,0}]' info:)" PNG8:"$T/palette_trns.png"
gen convert "$T/rgba.png" -interlace PNG "$T/interlaced.png"
gen convert "$T/base.png" -depth 16 PNG48:"$T/rgb16.png"
gen convert "$T/base.png" -quality 80 "$T/lossy.webp"
gen convert "$T/rgba.png" -define webp:lossless=true "$T/lossless_alpha.webp"
gen convert "$T/rgba.png" -quality 80 "$T/lossy_alpha.webp"
gen convert "$T/base.png" "$T/image.gif"

python3 - "$T" >"$T/py.log" 2>&1 <<'EOF'
import random, struct, sys, zlib
out = sys.argv[1]
chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
def png(path, w, h, depth, ctype, raw, idat=None):
    ihdr = struct.pack('>IIBBBBB', w, h, depth, ctype, 0, 0, 0)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + chunk(b'IDAT', idat or zlib.compress(raw))
                + chunk(b'IEND', b''))
# 16-bit samples that are not multiples of 257 (ImageMagick's own 16-bit files are)
rnd = random.Random(5)
for name, ctype, ch in (('rgb16_random', 2, 3), ('rgba16_random', 6, 4), ('gray_alpha16_random', 4, 2)):
    w, h = 67, 45
    raw = b''.join(b'\0' + b''.join(struct.pack('>H', rnd.randrange(65536)) for _ in range(w * ch)) for _ in range(h))
    png(f'{out}/{name}.png', w, h, 16, ctype, raw)
# a 1 x 20000 strip and its pixels (the reference)
px = bytes((y * 7 + c * 85) & 255 for y in range(20000) for c in range(3))
png(f'{out}/strip.png', 1, 20000, 8, 2, b''.join(b'\0' + px[3 * y:3 * y + 3] for y in range(20000)))
open(f'{out}/strip.ref', 'wb').write(px)
# headers that lie about the size (the pixel data is a few zero bytes)
for name, w, h in (('zero', 0, 0), ('side_2e31', 1 << 31, 1 << 31), ('mp100', 10000, 10000)):
    png(f'{out}/{name}.png', w, h, 8, 2, b'', idat=zlib.compress(b'\0' * 64))

# EXIF orientation: an APP1 segment after SOI, IFD0 with a filler tag then 0x0112
q90 = open(f'{out}/q90.jpg', 'rb').read()
for o in range(1, 9):
    order = 'II' if o % 2 else 'MM'
    e = '<' if order == 'II' else '>'
    entries = [struct.pack(e + 'HHI', 0x010F, 2, 4) + b'cam\0', struct.pack(e + 'HHIHH', 0x0112, 3, 1, o, 0)]
    tiff = order.encode() + struct.pack(e + 'HI', 42, 8) + struct.pack(e + 'H', len(entries)) + b''.join(entries) \
        + struct.pack(e + 'I', 0)
    app1 = b'Exif\0\0' + tiff
    open(f'{out}/orient{o}.jpg', 'wb').write(q90[:2] + b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1 + q90[2:])

# large baseline grayscale JPEGs: every AC zero, the DC a vertical gradient
def big_jpeg(path, W, H):
    bw, bh = (W + 7) // 8, (H + 7) // 8
    seg = lambda m, d: b'\xff' + bytes([m]) + struct.pack('>H', len(d) + 2) + d
    dc_bits = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]  # the standard luminance DC table
    dht = seg(0xC4, b'\x00' + bytes(dc_bits) + bytes(range(12)) + b'\x10' + bytes([1] + [0] * 15) + b'\x00')
    head = seg(0xDB, b'\x00' + b'\x01' * 64) + dht + seg(0xC0, struct.pack('>BHHB', 8, H, W, 1) + b'\x01\x11\x00') \
        + seg(0xDA, b'\x01\x01\x00\x00\x3f\x00')
    codes = ['00', '010', '011', '100', '101', '110', '1110', '11110', '111110', '1111110', '11111110', '111111110']
    def dc(d):
        cat = abs(d).bit_length()
        return codes[cat] + (format(d if d > 0 else d + (1 << cat) - 1, '0%db' % cat) if cat else '')
    rows, prev, rest = [], 0, '000' * (bw - 1)  # DC diff 0 ('00'), EOB ('0', a 1-bit AC table)
    for r in range(bh):
        v = round(-1000 + 2000 * r / max(1, bh - 1))
        rows.append(dc(v - prev) + '0' + rest)
        prev = v
    bits = ''.join(rows)
    bits += '1' * (-len(bits) % 8)
    data = int(bits, 2).to_bytes(len(bits) // 8, 'big').replace(b'\xff', b'\xff\x00')
    open(path, 'wb').write(b'\xff\xd8' + head + data + b'\xff\xd9')
big_jpeg(f'{out}/big_12000x9000.jpg', 12000, 9000)
big_jpeg(f'{out}/big_20000x15000.jpg', 20000, 15000)
EOF
script_verdict $? "$T/py.log" "could not generate the Python-made test images"

# ---- against ImageMagick, exactly ---------------------------------------------
# FILE [MAX_DIFF [EXPECT_WxH]]
against_im() {
    local f=$1 bound=${2:-0} want=${3:-} name
    name=$(basename "$f")
    ok
    if ! convert -define jpeg:dct-method=islow "$f" -auto-orient +repage -background white -flatten -depth 8 \
            rgb:"$T/ref.rgb" 2>"$T/im.err"; then
        fail "$name: ImageMagick could not decode it: $(head -c 300 "$T/im.err")"
        return
    fi
    compare_ref "$f" "$T/ref.rgb" "$bound" "$want"
}

# FILE REF.rgb MAX_DIFF [EXPECT_WxH]
compare_ref() {
    local f=$1 ref=$2 bound=$3 want=${4:-} name w h d rc
    name=$(basename "$f")
    ok
    "$DEC" "$f" --ref "$ref" >"$T/dec.out" 2>"$T/dec.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        fail "$name: pl_image_decode exited $rc: $(head -c 300 "$T/dec.err")"
        return
    fi
    w=$(awk '$1 == "width" {print $2}' "$T/dec.out"); h=$(awk '$1 == "height" {print $2}' "$T/dec.out")
    d=$(awk '$1 == "max_abs_diff" {print $2}' "$T/dec.out")
    echo "$name: ${w}x${h} $(awk '$1 == "max_abs_diff" || $1 == "n_diff" {printf "%s %s ", $1, $2}' "$T/dec.out")" >&2
    ok
    [ -n "$want" ] && [ "${w}x${h}" != "$want" ] && fail "$name: decoded as ${w}x${h}, expected $want"
    ok
    [ -n "$d" ] && [ "$d" -le "$bound" ] || fail "$name: max abs diff '$d' over the bound $bound"
}

for f in q90 q75_420 q85_422 progressive gray cmyk; do against_im "$T/$f.jpg" 0 257x131; done
for o in 1 2 3 4; do against_im "$T/orient$o.jpg" 0 257x131; done
for o in 5 6 7 8; do against_im "$T/orient$o.jpg" 0 131x257; done
for f in rgb rgba gray_alpha palette_trns interlaced rgb16; do against_im "$T/$f.png" 0 257x131; done
for f in rgb16_random rgba16_random gray_alpha16_random; do against_im "$T/$f.png" 0 67x45; done
for f in lossy lossless_alpha lossy_alpha; do against_im "$T/$f.webp" 0 257x131; done
# ImageMagick's 16384-pixel side limit (its policy) keeps it from reading the strip
compare_ref "$T/strip.png" "$T/strip.ref" 0 1x20000

# ---- over the pixel limit: DCT-scaled JPEG, in bounded memory -------------------
ok
if convert -define jpeg:size=6000x4500 -define jpeg:dct-method=islow "$T/big_12000x9000.jpg" -depth 8 \
        rgb:"$T/big.ref" 2>"$T/im.err"; then
    compare_ref "$T/big_12000x9000.jpg" "$T/big.ref" 0 6000x4500
else
    fail "ImageMagick's 1/2-scale decode of the 12000x9000 JPEG failed: $(head -c 300 "$T/im.err")"
fi
rm -f "$T/big.ref" "$T/ref.rgb"
# peak memory of the decode alone, in KiB (the child's peak resident size)
peak_kib() {
    python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sys.stdout.write(r.stdout.decode())
print("rc", r.returncode)
print("peak_kib", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
for case in 12000x9000:6000x4500 20000x15000:5000x3750; do
    src=${case%%:*} want=${case##*:}
    peak_kib "$DEC" "$T/big_$src.jpg" >"$T/peak.out"
    w=$(awk '$1 == "width" {print $2}' "$T/peak.out"); h=$(awk '$1 == "height" {print $2}' "$T/peak.out")
    rc=$(awk '$1 == "rc" {print $2}' "$T/peak.out"); kib=$(awk '$1 == "peak_kib" {print $2}' "$T/peak.out")
    out_kib=$(( ${want%x*} * ${want#*x} * 3 / 1024 ))
    echo "big_$src.jpg: ${w}x${h}, peak RSS $kib KiB (the output alone: $out_kib KiB)" >&2
    ok
    [ "$rc" = 0 ] && [ "${w}x${h}" = "$want" ] || fail "big_$src.jpg: rc $rc, ${w}x${h}, expected ${want} (DCT-scaled)"
    ok
    [ -n "$kib" ] && [ "$kib" -lt $((2 * out_kib)) ] || fail "big_$src.jpg: peak RSS $kib KiB, over 2x the output"
done

# ---- test-1.jpeg against libmtmd's decode (stb_image) ------------------------
# stb_image has its own IDCT and upsampling; measured: max abs diff 3
expect_rc 0 "$PL_BIN" synth --arch qwen3 --n-layer 1 --n-embd 2048 --n-head 16 --n-head-kv 8 --head-dim 128 \
    --n-ff 512 --quiet "$T/text.gguf"
expect_rc 0 "$PL_BIN" synth --shape qwen3vl-2b --mmproj "$T/mmproj.gguf" --vision-layers 1 --type f16 --quiet
ok
if "$PL_MTMD" preprocess "$T/text.gguf" "$T/mmproj.gguf" "$JPEG1" --out-rgb "$T/stb.rgb" --out "$T/prep.f32" \
        >"$T/mtmd.out" 2>"$T/mtmd.err"; then
    compare_ref "$JPEG1" "$T/stb.rgb" 3 \
        "$(awk '$1 == "width" {w = $2} $1 == "height" {h = $2} END {print w "x" h}' "$T/mtmd.out")"
else
    fail "pl_mtmd preprocess test-1.jpeg: $(head -c 300 "$T/mtmd.err")"
fi
against_im "$JPEG1" 0

# ---- bad inputs: exit 1 (a refusal, not a signal) with one line -------------------
: >"$T/empty"
echo "this is a text file, not an image" >"$T/text.txt"
head -c 4096 /dev/urandom >"$T/random.bin"
for f in q90.jpg progressive.jpg rgba.png interlaced.png lossy.webp lossless_alpha.webp; do
    head -c $(( $(stat -c %s "$T/$f") / 2 )) "$T/$f" >"$T/half_$f"
done
head -c 200 "$T/q90.jpg" >"$T/head_q90.jpg"
head -c 30 "$T/rgb.png" >"$T/head_rgb.png"
head -c 20 "$T/lossy.webp" >"$T/head_lossy.webp"
# FILE WORDS: exits 1 with one line on stderr that contains WORDS
bad() {
    local f=$1 words=$2 rc
    "$DEC" "$T/$f" >"$T/bad.out" 2>"$T/bad.err"
    rc=$?
    echo "$f: rc $rc: $(head -c 300 "$T/bad.err")" >&2
    ok
    [ "$rc" = 1 ] || fail "$f: exited $rc, expected 1 (a refusal)"
    ok
    [ "$(wc -l <"$T/bad.err")" = 1 ] || fail "$f: $(wc -l <"$T/bad.err") lines on stderr, expected one"
    ok
    grep -qF -- "$words" "$T/bad.err" || fail "$f: the message lacks '$words'"
}
bad empty "empty image data"
bad text.txt "not an image (JPEG, PNG or WebP expected)"
bad random.bin "not an image"
bad image.gif "GIF images are not supported"
bad half_q90.jpg "truncated JPEG"
bad half_progressive.jpg "truncated JPEG"
bad head_q90.jpg "truncated JPEG"
bad half_rgba.png "truncated PNG"
bad half_interlaced.png "truncated PNG"
bad head_rgb.png "truncated PNG"
bad half_lossy.webp "truncated WebP"
bad half_lossless_alpha.webp "truncated WebP"
bad head_lossy.webp "truncated WebP"
bad zero.png "PNG image is 0x0"
bad side_2e31.png "2147483648x2147483648: a side over the 1048576-pixel limit"
bad mp100.png "10000x10000 = 100000000 pixels, over the limit of 67108864"
bad no_such_file "cannot open"
done_testing
