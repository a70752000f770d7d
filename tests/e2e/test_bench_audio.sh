# test_bench_audio.sh -- `pocketllm bench --mmproj --audio`: the audio
# measurement (file -> embeddings: decode, mel, every window's tower encode)
# appears in text and JSON with the counts Qwen3-ASR's front end gives --
# a 4 s clip at 16 kHz is 64000 samples, 64000 / 160 + 1 = 401 mel frames:
# one window, padded to 500 frames, 5 x 13 = 65 tokens; a 9 s one is 901
# frames: windows of 800 and 101 (padded to 200), 104 + 26 = 130 tokens --
# and the option misuse is refused.  No timing is judged (bench/compare
# --audio does the side by side with libmtmd).
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
T=$PL_TMP/t.gguf M=$PL_TMP/mm.gguf
command -v sox >/dev/null || { echo "FAIL: sox is not installed (scripts/install-deps.sh)" >&2; exit 1; }
expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --n-layer 1 --quiet "$T"
expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --mmproj "$M" --audio-layers 1 --quiet
ok
sox -n -r 16000 -c 1 -b 16 "$PL_TMP/a4.wav" synth 4 sine 440 2>"$PL_TMP/err" &&
    sox -n -r 44100 -c 2 -b 16 "$PL_TMP/a9.wav" synth 9 sine 300 2>>"$PL_TMP/err" ||
    fail "sox could not make the clips: $(head -c 300 "$PL_TMP/err")"

expect_rc 0 "$BIN" bench --model "$T" --mmproj "$M" --audio "$PL_TMP/a4.wav" -p 0 -n 0 -r 1 -t 2 --quiet
expect_grep "4.00 s, 1 windows, 65 tokens: decode" "$PL_TMP/out"
expect_rc 0 "$BIN" bench --model "$T" --mmproj "$M" --audio "$PL_TMP/a9.wav" -p 4 -n 0 -r 2 -t 2 --quiet --json
python3 - "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
j = json.loads([l for l in open(sys.argv[1]) if l.startswith('{')][-1])
a = j.get("audio") or {}
want = {"windows": 2, "n_tokens": 130, "seconds": 9.0}
bad = [f"{k} {a.get(k)}, expected {v}" for k, v in want.items() if a.get(k) != v]
for k in ("decode", "mel", "encode", "total"):
    if not (a.get(f"{k}_ms", 0) > 0 and len(a.get(f"{k}_runs_ms", [])) == 2): bad.append(f"no {k} times: {a}")
if "pp_tokens_per_s" not in j: bad.append("pp is gone beside the audio")
for b in bad: print("MISMATCH:", b)
sys.exit(1 if bad else 0)
PY
script_verdict $? "$PL_TMP/py" "bench's audio figures are wrong"
expect_rc 2 "$BIN" bench --model "$T" --audio "$PL_TMP/a4.wav" -p 0 -n 0
expect_grep "go with --mmproj" "$PL_TMP/err"
expect_rc 2 "$BIN" bench --model "$T" --mmproj "$M" --audio "$PL_TMP/a4.wav" --image-size 8x8 -p 0 -n 0
expect_grep "exactly one of" "$PL_TMP/err"
expect_rc 2 "$BIN" bench --model "$T" --mmproj "$M" --audio "$PL_TMP/a4.wav" --image-max-tokens 64 -p 0 -n 0
expect_grep "goes with an image" "$PL_TMP/err"
# a file that is not audio: one line, a library error's exit code
printf 'not audio at all' >"$PL_TMP/bad.wav"
expect_rc 1 "$BIN" bench --model "$T" --mmproj "$M" --audio "$PL_TMP/bad.wav" -p 0 -n 0 -r 1 --quiet
done_testing
