# mp3len.py FILE -- an MP3's length counted from its frame headers (MPEG-1/2/2.5
# Layer III), minus the encoder delay and padding its LAME tag states: what
# a gapless decoder gives.  Prints "frames F rate R samples S delay D padding P".
import struct, sys
d = open(sys.argv[1], 'rb').read()
i = 0
if d[:3] == b'ID3':
    i = 10 + ((d[6] & 127) << 21 | (d[7] & 127) << 14 | (d[8] & 127) << 7 | (d[9] & 127))
BR = {1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
      2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]}
SR = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}
frames = delay = padding = 0
rate = None
first = True
while i + 4 <= len(d):
    h = struct.unpack('>I', d[i:i + 4])[0]
    if h >> 21 != 0x7FF or (h >> 17) & 3 != 1:  # sync, layer III
        if d[i:i + 3] == b'TAG': break
        i += 1
        continue
    ver = (h >> 19) & 3
    bri, sri, pad = (h >> 12) & 15, (h >> 10) & 3, (h >> 9) & 1
    if bri in (0, 15) or sri == 3 or ver == 1:
        i += 1
        continue
    rate = SR[ver][sri]
    spf = 1152 if ver == 3 else 576
    size = (144 if ver == 3 else 72) * BR[1 if ver == 3 else 2][bri] * 1000 // rate + pad
    frame = d[i:i + size]
    if first and (b'Xing' in frame[:64] or b'Info' in frame[:64]):
        k = frame.find(b'LAME')
        if k < 0: k = frame.find(b'Lavc')
        if k >= 0:
            b = frame[k + 21:k + 24]
            delay, padding = (b[0] << 4) | (b[1] >> 4), ((b[1] & 15) << 8) | b[2]
    else:
        frames += 1
    first = False
    i += size
print(f'frames {frames} rate {rate} samples {frames * spf - delay - padding} delay {delay} padding {padding}')
