# test_python_media.sh -- the Python binding with images and audio
# (tests/python/test_media.py under Debian's pytest): a random-weight
# Qwen3-VL pair (vl_pair_lib.sh) and a Qwen3-ASR pair (synth, the text cut
# to 2 layers, the audio tower to 2 blocks), each beside a server on the
# same files -- chat with image and audio parts gives the server's answer,
# transcribe gives `pocketllm transcribe`'s transcript.
. "$(dirname "$0")/serve_lib.sh"
"$PY" -c "import pytest" 2>/dev/null || { echo "FAIL: python3-pytest is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
. "$(dirname "$0")/vl_pair_lib.sh"
command -v espeak-ng >/dev/null && command -v sox >/dev/null ||
    { echo "FAIL: espeak-ng and sox are needed (scripts/install-deps.sh)" >&2; exit 1; }
convert -size 96x64 gradient:red-blue "$PL_TMP/a.png" || { echo "FAIL: ImageMagick could not make the image" >&2; exit 1; }
espeak-ng -w "$PL_TMP/s.wav" "Testing one two three." 2>"$PL_TMP/err" &&
    sox "$PL_TMP/s.wav" -r 16000 -c 1 -b 16 "$PL_TMP/a2.wav" pad 0 2 trim 0 2 2>>"$PL_TMP/err" ||
    { echo "FAIL: could not make the clip: $(head -c 300 "$PL_TMP/err")" >&2; exit 1; }
"$BIN" synth --shape qwen3asr-0.6b --n-layer 2 --type f16 --seed 3 --quiet "$PL_TMP/asr.gguf" &&
    "$BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/asr-mm.gguf" --audio-layers 2 --type f16 --seed 4 --quiet ||
    { echo "FAIL: pocketllm synth of the Qwen3-ASR pair failed" >&2; exit 1; }
serve_start vl --model "$PL_TMP/vl.gguf" --mmproj "$PL_TMP/mm.gguf" --image-max-tokens 16 --ctx 512 --parallel 1 -t 1
VL_BASE=$BASE
serve_start asr --model "$PL_TMP/asr.gguf" --mmproj "$PL_TMP/asr-mm.gguf" --ctx 1024 --parallel 1 -t 1
ASR_BASE=$BASE
PL_PY_VL=$PL_TMP/vl.gguf PL_PY_VL_MM=$PL_TMP/mm.gguf PL_PY_VL_SERVER=$VL_BASE PL_PY_IMAGE=$PL_TMP/a.png \
    PL_PY_ASR=$PL_TMP/asr.gguf PL_PY_ASR_MM=$PL_TMP/asr-mm.gguf PL_PY_ASR_SERVER=$ASR_BASE PL_PY_AUDIO=$PL_TMP/a2.wav \
    POCKETLLM_LIBRARY=$PL_LIB PYTHONPATH=$PL_SRC/python:$PL_SRC/tests/python PL_BIN=$PL_BIN \
    "$PY" -m pytest -q -p no:cacheprovider "$PL_SRC/tests/python/test_media.py" >"$PL_TMP/pytest.out" 2>&1
script_verdict $? "$PL_TMP/pytest.out" "the binding's media tests failed"
grep -qE "^[0-9]+ passed" "$PL_TMP/pytest.out" && ! grep -qE "skipped|xfail" "$PL_TMP/pytest.out" ||
    fail "pytest did not report every test passed"
serve_stop
done_testing
