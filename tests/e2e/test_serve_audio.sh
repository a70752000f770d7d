# test_serve_audio.sh -- speech through `pocketllm serve --mmproj` with a
# Qwen3-ASR pair: the official `openai` npm client (serve_audio_client.js)
# calls audio.transcriptions.create with json, text, verbose_json, srt and
# vtt, and the transcript equals `pocketllm transcribe`'s for the same file
# (greedy; also with the language forced); a chat completion with an
# input_audio part (WAV, and the same clip as FLAC) answers as `pocketllm
# run --mmproj --audio` answers the prompt the template renders; bad
# input_audio parts are 400s naming the part.  Then bad uploads with curl
# -- not audio, a truncated WAV, a file over --max-upload-mb, temperature
# "abc", an unknown response_format, an unknown field, no file, a body that
# is not multipart, a multipart body cut short -- each a 4xx naming the
# problem, and the server still transcribes afterwards; a server without
# --mmproj and one with a vision-only mmproj refuse audio with a 400.
#
# Model: a random-weight Qwen3-ASR-0.6B pair from `pocketllm synth`, the
# text model cut to 1 layer and the audio tower to 1 block (the suite's
# time), the real Qwen2 vocabulary; the transcript is noise, the same noise
# everywhere.  The speech is
# made here with espeak-ng and sox.
. "$(dirname "$0")/serve_lib.sh"
NODE_MODULES=$(bash "$PL_SRC/scripts/install-test-npm.sh" 2>"$PL_TMP/npm.err") || {
    echo "FAIL: the openai npm client could not be installed: $(tail -3 "$PL_TMP/npm.err")" >&2
    exit 1
}
for tool in espeak-ng sox curl; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
D=$PL_TMP/audio
mkdir -p "$D"

# ---- the models ------------------------------------------------------------
# (the real Qwen2 vocabulary, with Qwen3-ASR's tokens added by synth, and an
# untied head: the transcript is then words of noise -- with the built-in
# byte vocabulary or a tied head a random model writes only padding or
# newlines, which would make every comparison trivially equal)
serve_bundle
"$BIN" synth --quiet --shape qwen3asr-0.6b --n-layer 1 --type f16 --seed 5 --untied --vocab "$VOCAB" \
    --mmproj "$PL_TMP/asr-mm.gguf" --audio-layers 1 "$PL_TMP/asr.gguf" 2>"$PL_TMP/synth.err" || {
    echo "FAIL: pocketllm synth of the Qwen3-ASR pair failed: $(tail -3 "$PL_TMP/synth.err")" >&2
    exit 1
}
# a vision-only pair (Qwen3-VL tower cut to one block, a text model of its width)
printf '%s\n' "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{%- endfor %}" \
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}" >"$PL_TMP/chatml.jinja"
"$BIN" synth --quiet --arch qwen3vl --n-embd 2048 --n-layer 1 --n-head 2 --n-head-kv 1 --head-dim 64 --n-ff 256 \
    --template "$PL_TMP/chatml.jinja" "$PL_TMP/vl.gguf" 2>>"$PL_TMP/synth.err" &&
    "$BIN" synth --quiet --shape qwen3vl-2b --mmproj "$PL_TMP/vl-mm.gguf" --vision-layers 1 2>>"$PL_TMP/synth.err" || {
    echo "FAIL: pocketllm synth of the Qwen3-VL pair failed: $(tail -3 "$PL_TMP/synth.err")" >&2
    exit 1
}

# ---- the audio -------------------------------------------------------------
# (one second: a transcription generates up to 64 + 16 tokens a second of audio)
espeak-ng -w "$D/speech.raw.wav" "Hello world." 2>"$PL_TMP/espeak.err" &&
    sox "$D/speech.raw.wav" -r 16000 -c 1 -b 16 "$D/speech.wav" 2>>"$PL_TMP/espeak.err" &&
    sox "$D/speech.wav" "$D/speech.flac" 2>>"$PL_TMP/espeak.err" || {
    echo "FAIL: espeak-ng/sox could not make the speech: $(tail -3 "$PL_TMP/espeak.err")" >&2
    exit 1
}
# over a 1 MiB upload limit: 40 s of silence at 16 kHz, 16 bit (1.25 MiB)
sox -n -r 16000 -c 1 -b 16 "$D/big.wav" trim 0 40 || { echo "FAIL: sox could not make the large file" >&2; exit 1; }
printf 'this is a text file, not a recording\n' >"$D/not_audio.txt"
# the WAV cut in the middle of its data (the header still claims all of it)
head -c $(($(stat -c %s "$D/speech.wav") / 2)) "$D/speech.wav" >"$D/truncated.wav"

# ---- what the CLI says -------------------------------------------------------
"$BIN" transcribe --model "$PL_TMP/asr.gguf" --mmproj "$PL_TMP/asr-mm.gguf" -t 1 --json "$D/speech.wav" \
    >"$D/cli.json" 2>"$PL_TMP/cli.err" || { echo "FAIL: pocketllm transcribe failed: $(tail -3 "$PL_TMP/cli.err")" >&2; exit 1; }
"$BIN" transcribe --model "$PL_TMP/asr.gguf" --mmproj "$PL_TMP/asr-mm.gguf" -t 1 --json --language English \
    "$D/speech.wav" >"$D/cli_en.json" 2>"$PL_TMP/cli.err" || {
    echo "FAIL: pocketllm transcribe --language English failed: $(tail -3 "$PL_TMP/cli.err")" >&2
    exit 1
}

# ---- the servers --------------------------------------------------------------
serve_start main --model "$PL_TMP/asr.gguf" --mmproj "$PL_TMP/asr-mm.gguf" --ctx 1024 --parallel 2 -t 1 --max-upload-mb 1
MAIN_BASE=$BASE MAIN_PID=$SERVER_PID MAIN_LOG=$SERVER_LOG
serve_start text --model "$PL_TMP/asr.gguf" --ctx 256 --parallel 1 -t 1
TEXT_BASE=$BASE TEXT_PID=$SERVER_PID TEXT_LOG=$SERVER_LOG
serve_start vision --model "$PL_TMP/vl.gguf" --mmproj "$PL_TMP/vl-mm.gguf" --ctx 256 --parallel 1 -t 1
VISION_BASE=$BASE

BASE=$MAIN_BASE/v1 TEXT_BASE=$TEXT_BASE/v1 VISION_BASE=$VISION_BASE/v1 BIN=$BIN MODEL_FILE=$PL_TMP/asr.gguf \
    MMPROJ=$PL_TMP/asr-mm.gguf DIR=$D RUN_ARGS="--ctx 1024 -t 1" NODE_PATH=$NODE_MODULES \
    node "$(dirname "$0")/serve_audio_client.js" >"$PL_TMP/node.out" 2>"$PL_TMP/node.err"
script_verdict $? "$PL_TMP/node.out" "the openai client's audio checks failed: $(head -c 3000 "$PL_TMP/node.err")"
ok
grep -q "openai audio client: [0-9]* checks, 0 failed" "$PL_TMP/node.out" || fail "the client did not report its checks"

# ---- bad uploads (curl) ------------------------------------------------------------
URL=$MAIN_BASE/v1/audio/transcriptions
# post NAME WANT-STATUS WORD CURL-ARGS... : the answer's status and that its message names WORD
post() {
    local name=$1 want=$2 word=$3; shift 3
    local got
    got=$(curl -s -o "$PL_TMP/$name.json" -w '%{http_code}' "$@" "$URL")
    ok
    [ "$got" = "$want" ] || { fail "$name: status $got, wanted $want: $(head -c 300 "$PL_TMP/$name.json")"; return; }
    ok
    grep -qF -- "$word" "$PL_TMP/$name.json" || fail "$name: the message does not name '$word': $(head -c 300 "$PL_TMP/$name.json")"
}
post not_audio 400 "not decodable audio" -F "file=@$D/not_audio.txt" -F model=m
post truncated 400 "file: not decodable audio" -F "file=@$D/truncated.wav" -F model=m
post too_large 413 "--max-upload-mb" -F "file=@$D/big.wav" -F model=m
post temperature 400 "temperature" -F "file=@$D/speech.wav" -F temperature=abc
post temperature_range 400 "between 0 and 1" -F "file=@$D/speech.wav" -F temperature=1.5
post format 400 "response_format" -F "file=@$D/speech.wav" -F response_format=xml
post unknown_field 400 "colour" -F "file=@$D/speech.wav" -F colour=blue
post language 400 "language" -F "file=@$D/speech.wav" -F language=klingon
post twice 400 "twice" -F "file=@$D/speech.wav" -F "file=@$D/speech.wav"
post no_file 400 "'file'" -F model=m -F response_format=json
post empty_file 400 "empty" -F "file=@/dev/null;filename=empty.wav" -F model=m
post not_multipart 415 "multipart/form-data" -H "Content-Type: application/json" --data '{"file":"x"}'
# a form whose closing boundary never comes
printf -- '--XyZ\r\nContent-Disposition: form-data; name="model"\r\n\r\nm\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n' >"$D/cut.form"
head -c 3000 "$D/speech.wav" >>"$D/cut.form"
post cut_short 400 "cut short" -H "Content-Type: multipart/form-data; boundary=XyZ" --data-binary "@$D/cut.form"
# the servers without an audio tower
got=$(curl -s -o "$PL_TMP/text_srv.json" -w '%{http_code}' -F "file=@$D/speech.wav" "$TEXT_BASE/v1/audio/transcriptions")
ok
[ "$got" = 400 ] && grep -qF "takes no audio" "$PL_TMP/text_srv.json" || fail "no --mmproj: $got $(head -c 300 "$PL_TMP/text_srv.json")"
got=$(curl -s -o "$PL_TMP/vision_srv.json" -w '%{http_code}' -F "file=@$D/speech.wav" "$VISION_BASE/v1/audio/transcriptions")
ok
[ "$got" = 400 ] && grep -qF "no audio tower" "$PL_TMP/vision_srv.json" || fail "vision-only mmproj: $got $(head -c 300 "$PL_TMP/vision_srv.json")"
# GET is not the method
got=$(curl -s -o /dev/null -w '%{http_code}' "$URL")
ok
[ "$got" = 405 ] || fail "GET $URL: $got, wanted 405"

# ---- and the server still transcribes ----------------------------------------------
got=$(curl -s -o "$PL_TMP/after.json" -w '%{http_code}' -F "file=@$D/speech.wav" -F model=m "$URL")
ok
[ "$got" = 200 ] || fail "a good request after the bad ones: $got $(head -c 300 "$PL_TMP/after.json")"
ok
"$PY" - "$PL_TMP/after.json" "$D/cli.json" <<'PY' || fail "the transcript after the bad uploads differs from pocketllm transcribe's"
import json, sys
a = json.load(open(sys.argv[1]))["text"]
b = json.load(open(sys.argv[2]))["text"]
sys.exit(0 if a == b else 1)
PY
expect_grep '"audio":true' <(curl -s "$MAIN_BASE/health")

# (the requests and their times, for the log)
grep -E "POST|GET" "$MAIN_LOG" | head -60 >&2
SERVER_PID=$MAIN_PID SERVER_LOG=$MAIN_LOG serve_stop
SERVER_PID=$TEXT_PID SERVER_LOG=$TEXT_LOG serve_stop
serve_stop
done_testing
