#!/usr/bin/env bash
# Seeds for fuzz_server_embeddings: the first byte picks the server's
# pooling ('0' none, '1' mean, '2' cls, '3' last -- its two lowest bits),
# the rest is a body.
set -euo pipefail
out=$1
i=0
seed() { i=$((i + 1)); printf '%s%s' "$1" "$2" >"$out/seed_$i"; }
seed 3 '{"model":"m","input":"Hello world"}'
seed 3 '{"input":["a","bc","d e f"],"encoding_format":"base64","dimensions":8,"user":"u"}'
seed 1 '{"input":[1,2,3,4],"encoding_format":"float"}'
seed 2 '{"input":[[1,2],[3,4,5]],"dimensions":1}'
seed 3 '{"input":[[1,2],"x"]}'
seed 3 '{"input":[],"dimensions":0}'
seed 3 '{"input":"","encoding_format":"hex"}'
seed 3 '{"input":[1.5,-1,99999999]}'
seed 3 '{"input":"x","input":"y","foo":null}'
seed 0 '{"input":"x"}'
seed 3 '{"input":"\u00e9\ud83d\ude00\u0000x<|im_end|>"}'
long=$(head -c 300 /dev/zero | tr '\0' 'a')
seed 3 "{\"input\":\"$long\"}"
