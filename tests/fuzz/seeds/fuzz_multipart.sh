#!/usr/bin/env bash
# Seeds for fuzz_multipart: multipart/form-data bodies under the boundary
# "plfuzz" (the first byte picks Content-Length or chunked and the write
# size): a whole transcription form with a small WAV made here (never
# committed), every field, bad values, a truncated body, a duplicated
# field, no file.
set -euo pipefail
out=$1
/usr/bin/python3 - "$out" <<'PY'
import io, math, os, struct, sys, wave
out = sys.argv[1]
buf = io.BytesIO()
with wave.open(buf, "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i * 0.05))) for i in range(1600)))
wav = buf.getvalue()
def part(name, value, filename=None, ctype=None):
    h = 'Content-Disposition: form-data; name="%s"' % name
    if filename: h += '; filename="%s"' % filename
    h += "\r\n"
    if ctype: h += "Content-Type: %s\r\n" % ctype
    return b"--plfuzz\r\n" + h.encode() + b"\r\n" + value + b"\r\n"
end = b"--plfuzz--\r\n"
fileok = part("file", wav, "a.wav", "audio/wav")
seeds = [
    fileok + part("model", b"whisper-1") + end,
    fileok + part("response_format", b"verbose_json") + part("language", b"en") + part("temperature", b"0.2") + part("prompt", b"Names: Ada") + part("timestamp_granularities[]", b"segment") + end,
    fileok + part("response_format", b"srt") + end,
    fileok + part("temperature", b"abc") + end,
    fileok + part("response_format", b"xml") + end,
    fileok + fileok + end,
    part("model", b"m") + end,
    part("file", b"not audio at all", "x.wav", "audio/wav") + end,
    part("file", wav[: len(wav) // 2], "cut.wav") + end,
    fileok[: len(fileok) // 2],
    b"",
    part("unknown", b"1") + end,
]
for i, s in enumerate(seeds):
    for mode in (0, 1, 0x41):
        with open(os.path.join(out, "seed_%d_%d" % (i, mode)), "wb") as f:
            f.write(bytes([mode]) + s)
PY
