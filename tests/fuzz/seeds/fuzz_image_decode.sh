#!/usr/bin/env bash
# Seeds for fuzz_image_decode: small images of every kind the decoders take,
# written here by ImageMagick (scripts/install-deps.sh installs it) -- JPEG
# baseline 4:2:0 and 4:4:4, progressive, grayscale, CMYK, one with an EXIF
# orientation; PNG RGB, RGBA, gray+alpha, palette with tRNS, interlaced
# 16-bit; WebP lossy, lossless with alpha -- each a few hundred bytes to a
# few KiB.
set -euo pipefail
d=$1
convert -version 2>/dev/null | grep -q ImageMagick || { echo "fuzz_image_decode seeds: ImageMagick's convert is needed" >&2; exit 1; }
convert -size 24x16 -seed 3 plasma:red-blue -depth 8 "$d/.base.png"
convert "$d/.base.png" -alpha set -channel A -fx 'i/w' +channel -depth 8 "$d/.rgba.png"
convert "$d/.base.png" -quality 75 "$d/q75.jpg"
convert "$d/.base.png" -quality 95 "$d/q95_444.jpg"
convert "$d/.base.png" -quality 80 -interlace JPEG "$d/progressive.jpg"
convert "$d/.base.png" -colorspace Gray -quality 80 "$d/gray.jpg"
convert "$d/.base.png" -colorspace CMYK -quality 80 "$d/cmyk.jpg"
convert "$d/.base.png" "$d/rgb.png"
cp "$d/.rgba.png" "$d/rgba.png"
convert "$d/.base.png" -colorspace Gray -alpha set -channel A -fx 'j/h' +channel "$d/gray_alpha.png"
convert "$d/.base.png" -colors 8 -transparent "$(convert "$d/.base.png" -colors 8 -format '%[pixel:p{0,0}]' info:)" \
    PNG8:"$d/palette_trns.png"
convert "$d/.rgba.png" -depth 16 -interlace PNG PNG64:"$d/interlaced16.png"
convert "$d/.base.png" -quality 70 "$d/lossy.webp"
convert "$d/.rgba.png" -define webp:lossless=true "$d/lossless_alpha.webp"
# EXIF orientation 6 (big-endian TIFF) in an APP1 right after SOI
python3 - "$d/q75.jpg" "$d/orient6.jpg" <<'PY'
import struct, sys
e = '>'
entries = struct.pack(e + 'HHIHH', 0x0112, 3, 1, 6, 0)
app1 = b'Exif\0\0MM' + struct.pack(e + 'HIH', 42, 8, 1) + entries + struct.pack(e + 'I', 0)
d = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(d[:2] + b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1 + d[2:])
PY
rm -f "$d/.base.png" "$d/.rgba.png"
