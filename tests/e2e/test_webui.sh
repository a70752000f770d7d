# test_webui.sh -- the chat page at / in a real browser: Debian's Chromium,
# headless, driven by puppeteer-core (pinned, installed at test time into a
# cache by scripts/install-test-npm.sh; a failed install fails the test)
# through webui_browser.js, against `pocketllm serve` on a random-weight
# Qwen3 (tiny shape, real tokenizer, Qwen3 template), a second server
# with an API key, a third with a Qwen3-VL pair (images picked and
# pasted) and a fourth with a Qwen3-ASR pair (a spoken clip attached).  Leaves a screenshot of the page after a reply in the
# build folder (webui-screenshot.png).  Release tree only (scripts/test.sh):
# the C it reaches under the sanitizers is test_serve_http's GET / checks.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
NODE_MODULES=$(bash "$PL_SRC/scripts/install-test-npm.sh" puppeteer-core 2>"$PL_TMP/npm.err") || {
    echo "FAIL: puppeteer-core could not be installed: $(tail -3 "$PL_TMP/npm.err")" >&2
    exit 1
}
CHROMIUM=$(command -v chromium || true)
[ -n "$CHROMIUM" ] || { echo "FAIL: no chromium on the PATH (scripts/install-deps.sh installs Debian's)" >&2; exit 1; }
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16
# images: the random-weight Qwen3-VL pair of the image tests, two small PNGs
# and a large one (27 MB of noise: read for long enough that a small image
# given after it is read first; it is never sent)
. "$(dirname "$0")/vl_pair_lib.sh"
convert -size 96x64 gradient:red-blue "$PL_TMP/a.png" && convert -size 64x48 gradient:yellow-green "$PL_TMP/b.png" &&
    convert -size 3000x3000 xc: +noise Random -depth 8 "$PL_TMP/big.png" ||
    { echo "FAIL: ImageMagick could not make the test images" >&2; exit 1; }
# audio: a random-weight Qwen3-ASR pair (1 layer, a 1-block tower) and a spoken clip
"$BIN" synth --quiet --shape qwen3asr-0.6b --n-layer 1 --type f16 --seed 5 --untied --vocab "$VOCAB" \
    --mmproj "$PL_TMP/asr-mm.gguf" --audio-layers 1 "$PL_TMP/asr.gguf" 2>"$PL_TMP/synth.err" || {
    echo "FAIL: pocketllm synth of the Qwen3-ASR pair failed: $(tail -3 "$PL_TMP/synth.err")" >&2
    exit 1
}
espeak-ng -w "$PL_TMP/speech.raw.wav" "Hello world." 2>"$PL_TMP/espeak.err" &&
    sox "$PL_TMP/speech.raw.wav" -r 16000 -c 1 -b 16 "$PL_TMP/speech.wav" 2>>"$PL_TMP/espeak.err" ||
    { echo "FAIL: espeak-ng/sox could not make the speech: $(tail -3 "$PL_TMP/espeak.err")" >&2; exit 1; }
serve_start asr --model "$PL_TMP/asr.gguf" --mmproj "$PL_TMP/asr-mm.gguf" --name asr --ctx 1024 --parallel 1 -t 1
ASR_BASE=$BASE
ASR_PID=$SERVER_PID
ASR_LOG=$SERVER_LOG
serve_start vl --model "$PL_TMP/vl.gguf" --mmproj "$PL_TMP/mm.gguf" --image-max-tokens 16 --name vl --ctx 512 --parallel 1 -t 1
VL_BASE=$BASE
VL_PID=$SERVER_PID
VL_LOG=$SERVER_LOG

serve_start keyed --model "$PL_TMP/m.gguf" --name tiny --api-key sekrit --ctx 512 --parallel 1 -t 1
KEY_BASE=$BASE
KEY_PID=$SERVER_PID
KEY_LOG=$SERVER_LOG
serve_start main --model "$PL_TMP/m.gguf" --name tiny --ctx 4096 --parallel 2 -t 1

BASE=$BASE KEY_BASE=$KEY_BASE VL_BASE=$VL_BASE ASR_BASE=$ASR_BASE SPEECH=$PL_TMP/speech.wav IMG_A=$PL_TMP/a.png IMG_B=$PL_TMP/b.png IMG_BIG=$PL_TMP/big.png MODEL=tiny CHROMIUM=$CHROMIUM SHOT=$PL_BUILD/webui-screenshot.png NODE_PATH=$NODE_MODULES \
    timeout 300 node "$(dirname "$0")/webui_browser.js" >"$PL_TMP/node.out" 2>"$PL_TMP/node.err"
script_verdict $? "$PL_TMP/node.out" "the browser checks failed: $(tail -c 4000 "$PL_TMP/node.err")"
ok
grep -q "webui: [0-9]* checks, 0 failed" "$PL_TMP/node.out" || fail "the browser script did not report its checks"
ok
[ -s "$PL_BUILD/webui-screenshot.png" ] || fail "no screenshot at $PL_BUILD/webui-screenshot.png"

serve_stop
SERVER_PID=$KEY_PID SERVER_LOG=$KEY_LOG serve_stop
SERVER_PID=$VL_PID SERVER_LOG=$VL_LOG serve_stop
SERVER_PID=$ASR_PID SERVER_LOG=$ASR_LOG serve_stop
done_testing
