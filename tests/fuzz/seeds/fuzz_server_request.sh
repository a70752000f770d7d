#!/usr/bin/env bash
# Seeds for fuzz_server_request: the first byte picks the endpoint ('c':
# chat, 'p': completions -- only its lowest bit counts), the rest is a body.
set -euo pipefail
out=$1
i=0
seed() { i=$((i + 1)); printf '%s%s' "$1" "$2" >"$out/seed_$i"; }
seed c '{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"max_tokens":8}'
seed c '{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"stream":true,"stream_options":{"include_usage":true}}'
seed c '{"messages":[{"role":"developer","content":"x"},{"role":"user","content":"y"},{"role":"assistant","content":"z","reasoning_content":"r"},{"role":"user","content":"w"}],"chat_template_kwargs":{"enable_thinking":false},"stop":["</think>","\n\n"],"n":3,"seed":7,"temperature":0.5,"top_p":0.9,"top_k":40,"min_p":0.05}'
seed c '{"messages":[{"role":"user","content":"<think>a</think>b"}],"logprobs":true,"top_logprobs":5,"logit_bias":{"1":-100,"65":5.5},"presence_penalty":1.5,"frequency_penalty":-1}'
seed c '{"messages":[{"role":"user","content":"x"}],"max_tokens":-1}'
seed c '{"messages":[{"role":"user","content":"x"}],"n":1000000}'
seed c '{"messages":[{"role":"user","content":"x"}],"logit_bias":{"-1":1}}'
seed c '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}'
seed c '{"messages":[{"role":"user","content":{"nested":[1,2,{"a":null}]}}],"max_tokens":1.5}'
seed c '{"messages":[]}'
seed c '[1,2,3]'
seed c '{"messages":[{"role":"user","content":"\u00e9\ud83d\ude00\u0000x"}]}'
seed p '{"prompt":"Once upon a time","max_tokens":16,"echo":true,"stop":"time"}'
seed p '{"prompt":["a","b"],"n":2,"logprobs":3}'
seed p '{"prompt":[1,2,3,4],"best_of":1}'
seed p '{"prompt":[[1,2],[3,4,5]],"suffix":""}'
seed p '{"prompt":[[1,2],"x"]}'
seed p '{"prompt":"x","max_tokens":100000}'
long=$(head -c 3000 /dev/zero | tr '\0' 'a')
seed p "{\"prompt\":\"$long\"}"
# images ('d': bit 2 set -- the model that takes them -- and bit 0 clear:
# chat): a PNG made here (never committed), good and damaged, and the URLs
# the server refuses
png=$(/usr/bin/python3 - <<'PY'
import base64, struct, zlib
w, h = 40, 24
raw = b"".join(b"\0" + b"".join(bytes((x * 6 % 256, y * 10 % 256, 128)) for x in range(w)) for y in range(h))
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
       chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
print(base64.b64encode(data).decode())
PY
)
img() { printf '{"type":"image_url","image_url":{"url":"%s"}}' "$1"; }
seed d "{\"messages\":[{\"role\":\"user\",\"content\":[$(img "data:image/png;base64,$png"),{\"type\":\"text\",\"text\":\"What is it?\"}]}]}"
seed d "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},$(img "data:image/png;base64,$png"),$(img "data:image/png;base64,$png")]},{\"role\":\"assistant\",\"content\":\"b\"},{\"role\":\"user\",\"content\":[$(img "data:image/png;base64,$png")]}],\"stream\":true}"
seed d "{\"messages\":[{\"role\":\"user\",\"content\":[$(img "data:image/png;base64,${png:0:120}")]}]}"
seed d "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,$png\",\"detail\":\"high\"}}]}]}"
seed d "{\"messages\":[{\"role\":\"user\",\"content\":[$(img "https://example.com/a.png"),$(img "file:///etc/passwd"),$(img "data:image/png;base64,AAAA")]}]}"
seed d "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"<__media__>\"},$(img "data:image/png;base64,$png")]}]}"
if command -v convert >/dev/null; then
    jpg=$(convert -size 48x32 gradient:red-blue jpg:- | base64 -w0)
    seed d "{\"messages\":[{\"role\":\"user\",\"content\":[$(img "data:image/jpeg;base64,$jpg"),{\"type\":\"text\",\"text\":\"x\"}]}]}"
fi
# input_audio parts (the image model has no audio tower: they reach the
# part checks and the refusal); a tiny WAV made here
wav=$(/usr/bin/python3 -c '
import base64, io, struct, wave
b = io.BytesIO(); w = wave.open(b, "wb"); w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
w.writeframes(b"".join(struct.pack("<h", (i * 37) % 2000 - 1000) for i in range(800))); w.close()
print(base64.b64encode(b.getvalue()).decode())')
seed d "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"$wav\",\"format\":\"wav\"}},{\"type\":\"text\",\"text\":\"x\"}]}]}"
seed c "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"$wav\",\"format\":\"mp3\"}}]}]}"
