# pngfile.py -- writes 8-bit RGB PNGs for the vision oracle tests
# (test_vision_tower.sh, test_vlm_generate.sh and their Vulkan variants):
# unfiltered rows that libmtmd's stb and our decoder both read back to
# exactly these pixels; and the banded test pattern of the tower tests.
import random
import struct
import zlib


def banded(w, h, seed, kinds):
    """w x h RGB bytes in bands of 8 rows, cycling through the first `kinds`
    of: noise, a colour gradient, stripes; with a vertical gradient over the
    whole image so that rows differ too."""
    rnd = random.Random(seed)
    raw = bytearray()
    for y in range(h):
        kind = (y // 8) % kinds
        g = y * 255 // max(1, h - 1)
        if kind == 0:
            raw += rnd.randbytes(3 * w)
        elif kind == 1:
            raw += bytes(v for x in range(w) for v in (x * 255 // max(1, w - 1), g, 255 - g))
        else:
            raw += bytes(v for x in range(w) for v in ((g, 255, 255) if (x // (1 + x % 3)) & 1 else (0, 0, g)))
    return bytes(raw)


def write_png(path, w, h, rgb, level=6):
    """rgb: w * h * 3 bytes, row after row."""
    assert len(rgb) == 3 * w * h, (len(rgb), w, h)
    raw = b''.join(b'\x00' + rgb[y * 3 * w:(y + 1) * 3 * w] for y in range(h))  # filter type None

    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(bytes(raw), level)) + chunk(b'IEND', b''))
