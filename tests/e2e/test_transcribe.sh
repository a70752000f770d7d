# test_transcribe.sh -- `pocketllm transcribe` end to end on a random-weight
# Qwen3-ASR pair (synth --shape qwen3asr-0.6b: text cut to 2 layers, the
# audio tower cut to 2 of its 18 blocks -- the words are noise, the
# mechanics are what is checked; test_asr_generate.sh checks the ids
# against llama.cpp): a 4 s clip (text and --json shape), a 95 s one made
# of speech with silent gaps (cut into pieces of at most 30 s, each cut
# inside a gap -- a quiet point -- and progress on stderr), a silent clip,
# `run --audio`, and the refusals: a file that is not audio, no --mmproj, a
# 21-minute recording, an mmproj without an audio tower (Qwen3-VL's).
#
# Time: the random model's tied embeddings make it repeat its last input
# token, so it never ends a piece by itself and each piece generates its
# whole bound (64 + 16 per second).  That is checked on the 4 s clip; the
# long and silent clips use the same weights with a chat template whose
# generation prompt ends in <|im_end|> -- repeated, it ends every piece at
# once -- so that the 95 s file takes seconds.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
command -v espeak-ng >/dev/null || { echo "FAIL: espeak-ng is not installed (scripts/install-deps.sh)" >&2; exit 1; }
command -v sox >/dev/null || { echo "FAIL: sox is not installed (scripts/install-deps.sh)" >&2; exit 1; }

TEXT=$PL_TMP/text.gguf
MMPROJ=$PL_TMP/mmproj.gguf
expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --n-layer 2 --type f16 --seed 3 --quiet "$TEXT" || { done_testing; exit 1; }
expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --mmproj "$MMPROJ" --audio-layers 2 --type f16 --seed 4 --quiet ||
    { done_testing; exit 1; }
cat >"$PL_TMP/eog.jinja" <<'EOF'
{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n<|im_end|>' }}{% endif %}
EOF
EOG=$PL_TMP/text-eog.gguf
expect_rc 0 "$BIN" synth --shape qwen3asr-0.6b --n-layer 2 --type f16 --seed 3 --quiet --template "$PL_TMP/eog.jinja" "$EOG" ||
    { done_testing; exit 1; }

# clips: 4 s of speech; 95 s of speech pieces with 1.5 s silent gaps
# between them; 5 s of silence
espeak-ng -w "$PL_TMP/s.wav" "Testing one two three, this is a short sentence for the recogniser." 2>"$PL_TMP/err"
sox "$PL_TMP/s.wav" -r 16000 -c 1 -b 16 "$PL_TMP/a4.wav" pad 0 4 trim 0 4 2>>"$PL_TMP/err"
sox -n -r 16000 -c 1 -b 16 "$PL_TMP/gap.wav" trim 0 1.5 2>>"$PL_TMP/err"
parts=()
for i in $(seq 1 18); do parts+=("$PL_TMP/a4.wav" "$PL_TMP/gap.wav"); done
# (-D: no dither, so that the gaps stay exact zeros)
sox -D "${parts[@]}" "$PL_TMP/a95.wav" trim 0 95 2>>"$PL_TMP/err"
sox -n -r 16000 -c 1 -b 16 "$PL_TMP/silence.wav" trim 0 5 2>>"$PL_TMP/err"
sox -n -r 8000 -c 1 -b 8 "$PL_TMP/long.wav" trim 0 1260 2>>"$PL_TMP/err"
ok
for f in a4 a95 silence long; do
    [ -s "$PL_TMP/$f.wav" ] || { fail "could not make $f.wav: $(head -c 300 "$PL_TMP/err")"; done_testing; exit 1; }
done
printf 'this is not audio\n' >"$PL_TMP/notes.txt"
T=(transcribe --model "$TEXT" --mmproj "$MMPROJ" -t 2)
TE=(transcribe --model "$EOG" --mmproj "$MMPROJ" -t 2)

# 4 s: plain text out, and the JSON's shape
expect_rc 0 "$BIN" "${T[@]}" "$PL_TMP/a4.wav"
ok
[ "$(wc -l <"$PL_TMP/out")" = 1 ] || fail "the transcript is not one line: $(head -c 300 "$PL_TMP/out")"
expect_rc 0 "$BIN" "${T[@]}" "$PL_TMP/a4.wav" --json --language English
python3 - "$PL_TMP/out" 4.0 >"$PL_TMP/py" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
want = float(sys.argv[2])
for k, t in (("text", str), ("language", str), ("duration", (int, float)), ("segments", list),
             ("cut_pieces", int), ("tokens", int)):
    assert isinstance(j.get(k), t), f"{k}: {j.get(k)!r}"
assert abs(j["duration"] - want) < 0.01, j["duration"]
assert j["language"] == "English", j["language"]
s = j["segments"]
assert len(s) == 1 and s[0]["start"] == 0 and abs(s[0]["end"] - want) < 0.01, s
assert s[0]["text"] == j["text"]
# the random model never ends by itself: the piece hits its bound
assert j["cut_pieces"] == 1 and j["tokens"] == 64 + 16 * 4, j
print(f"4 s: {j['tokens']} tokens, {j['cut_pieces']} cut, text {j['text'][:60]!r}")
EOF
script_verdict $? "$PL_TMP/py" "the 4 s clip's JSON is wrong"

# 95 s: pieces of at most 30 s, every cut in a silent gap, progress lines
expect_rc 0 "$BIN" "${TE[@]}" "$PL_TMP/a95.wav" --json
expect_grep "transcribe: " "$PL_TMP/err" && expect_grep "/ 95.0 s" "$PL_TMP/err"
python3 - "$PL_TMP/out" "$PL_TMP/a95.wav" >"$PL_TMP/py" 2>&1 <<'EOF'
import json, struct, sys, wave
j = json.load(open(sys.argv[1]))
w = wave.open(sys.argv[2])
rate, n = w.getframerate(), w.getnframes()
x = struct.unpack(f"<{n}h", w.readframes(n))
s = j["segments"]
loud = max(abs(v) for v in x)
assert abs(j["duration"] - 95.0) < 0.01, j["duration"]
assert len(s) >= 4, f"{len(s)} pieces for 95 s"
assert j["cut_pieces"] == 0 and j["tokens"] == 0, j
assert s[0]["start"] == 0 and abs(s[-1]["end"] - 95.0) < 0.01, s
for a, b in zip(s, s[1:]):
    assert a["end"] == b["start"], (a, b)
for g in s:
    assert 0 < g["end"] - g["start"] <= 30.0 + 1e-6, g
for g in s[1:]:
    c = int(round(g["start"] * rate))
    win = x[max(0, c - 800):c + 800]  # 50 ms either side of the cut
    peak = max(abs(v) for v in win)
    assert peak <= loud // 100, f"the cut at {g['start']:.3f} s is not in a silent gap (peak {peak} of {loud})"
print(f"95 s: {len(s)} pieces at " + ", ".join(f"{g['start']:.2f}-{g['end']:.2f}" for g in s) +
      f"; {j['tokens']} tokens, {j['cut_pieces']} cut")
EOF
script_verdict $? "$PL_TMP/py" "the 95 s clip's pieces are wrong"

# silence: transcribed (whatever the random model says), one piece
expect_rc 0 "$BIN" "${TE[@]}" "$PL_TMP/silence.wav" --json &&
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len(j["segments"])==1 and abs(j["duration"]-5)<0.01, j' \
        "$PL_TMP/out" 2>"$PL_TMP/py"
script_verdict $? "$PL_TMP/py" "the silent clip's JSON is wrong"

# run --audio: the clip's tokens in the prompt's ids (-1 each)
expect_rc 0 "$BIN" run --model "$TEXT" --mmproj "$MMPROJ" --audio "$PL_TMP/a4.wav" -t 2 \
    --prompt $'<|im_start|>user\n<__media__><|im_end|>\n<|im_start|>assistant\n' -n 2 --print-ids
ok
n_audio=$(sed -n 1p "$PL_TMP/out" | tr ' ' '\n' | grep -c -- '^-1$')
[ "$n_audio" -gt 0 ] || fail "run --audio: no audio tokens in the prompt ids: $(sed -n 1p "$PL_TMP/out" | head -c 200)"

# refusals, each with its reason
expect_rc 1 "$BIN" "${T[@]}" "$PL_TMP/notes.txt" && expect_grep "notes.txt" "$PL_TMP/err"
expect_rc 2 "$BIN" transcribe --model "$TEXT" "$PL_TMP/a4.wav" && expect_grep "--mmproj" "$PL_TMP/err"
expect_rc 2 "$BIN" transcribe --mmproj "$MMPROJ" "$PL_TMP/a4.wav" && expect_grep "--model" "$PL_TMP/err"
expect_rc 2 "$BIN" "${T[@]}" && expect_grep "FILE" "$PL_TMP/err"
expect_rc 1 "$BIN" "${T[@]}" "$PL_TMP/long.wav" && expect_grep "20 minutes" "$PL_TMP/err"
expect_rc 1 "$BIN" "${T[@]}" "$PL_TMP/missing.wav" && expect_grep "missing.wav" "$PL_TMP/err"
expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$PL_TMP/vl.gguf" --vision-layers 1 --type f16 --quiet &&
    expect_rc 1 "$BIN" transcribe --model "$TEXT" --mmproj "$PL_TMP/vl.gguf" "$PL_TMP/a4.wav" &&
    expect_grep "no audio tower" "$PL_TMP/err"
expect_rc 2 "$BIN" "${T[@]}" "$PL_TMP/a4.wav" --temperature -1
expect_rc 0 "$BIN" transcribe --help && expect_grep "Qwen3-ASR" "$PL_TMP/out"
done_testing
