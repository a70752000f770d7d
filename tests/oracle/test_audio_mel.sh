# test_audio_mel.sh -- PocketLLM's Qwen3-ASR log-mel front end
# (src/audio/audio_mel.c) against libmtmd's (mtmd_audio_preprocessor_qwen3a),
# value for value.  For each clip `pl_mtmd audio-mel` decodes it as libmtmd
# does (miniaudio, resampled to 16 kHz) and writes the decoded samples and
# libmtmd's mel windows; `pl_audio_mel` runs ours on those same samples.
# Same window count, the same padded and audio lengths per window, and no
# value further than 1e-5 from libmtmd's (the measured largest difference
# and the count of values not bit-identical are printed per clip).
#
# The clips, made here at 16 kHz mono 16-bit: espeak-ng speech cut or
# padded with sox to exactly 1, 4, 29, 31 and 95 s (one window; the 800-frame
# window boundary at 8 s and 16 s; 30 s around 3000 frames; 12 windows);
# 150 samples (under half an FFT frame: the reflection reads zeros past
# the clip, in libmtmd as here); 5 s of digital silence (the floor
# everywhere); a 440 Hz tone; and the bundle's tools/mtmd/test-2.mp3
# through libmtmd's own decoder and resampler.
#
# The mmproj is the Qwen3-ASR-0.6B audio tower at one block (the front end
# reads only its hyperparameters; libmtmd's decoding needs a full context),
# paired with a one-layer text model of its output width.
. "$(dirname "$0")/mtmd_lib.sh"
MEL=$PL_TOOLS/pl_audio_mel
[ -x "$MEL" ] || { echo "FAIL: no $MEL (a helper program of the build)" >&2; exit 1; }
MP3=$LLAMA_SRC/tools/mtmd/test-2.mp3
[ -f "$MP3" ] || { echo "FAIL: no $MP3 in the llama.cpp bundle" >&2; exit 1; }
for tool in espeak-ng sox; do
    command -v $tool >/dev/null || { echo "FAIL: $tool is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
MAX_DIFF=1e-5
RATE=16000

expect_rc 0 "$PL_BIN" synth --arch qwen3 --n-layer 1 --n-embd 1024 --n-head 16 --n-head-kv 8 --head-dim 128 \
    --n-ff 512 --quiet "$PL_TMP/text.gguf"
expect_rc 0 "$PL_BIN" synth --shape qwen3asr-0.6b --mmproj "$PL_TMP/mmproj.gguf" --audio-layers 1 --type f16 --quiet

# the speech: about 20 s of espeak-ng at 16 kHz, then clips of exact lengths
# (repeated where longer, cut to the sample)
ok
if ! { espeak-ng -w "$PL_TMP/say.wav" "The quick brown fox jumps over the lazy dog. Speech recognition turns \
spoken words into text, one window of audio at a time. Numbers like three hundred and forty two, \
or the year two thousand and twenty six, are read out in full. Silence between sentences gives the \
splitter a place to cut." &&
       sox "$PL_TMP/say.wav" -r $RATE -c 1 -b 16 "$PL_TMP/speech.wav"; } >"$PL_TMP/gen" 2>&1; then
    fail "could not make the speech: $(head -c 400 "$PL_TMP/gen")"
    done_testing
    exit
fi
# make_clip NAME SAMPLES: speech.wav repeated and cut to SAMPLES samples
make_clip() {
    local name=$1 samples=$2 have reps i inputs=()
    have=$(soxi -s "$PL_TMP/speech.wav")
    reps=$(( (samples + have - 1) / have ))
    for ((i = 0; i < reps; i++)); do inputs+=("$PL_TMP/speech.wav"); done
    ok
    sox "${inputs[@]}" "$PL_TMP/$name.wav" trim 0 "${samples}s" >"$PL_TMP/gen" 2>&1 &&
        [ "$(soxi -s "$PL_TMP/$name.wav")" = "$samples" ] ||
        fail "could not make $name.wav ($samples samples): $(head -c 400 "$PL_TMP/gen")"
}
for s in 1 4 29 31 95; do make_clip speech_${s}s $((s * RATE)); done
make_clip speech_150 150
# (-r before -n: the null input's rate, which trim and synth count in)
ok
sox -r $RATE -n -r $RATE -c 1 -b 16 "$PL_TMP/silence_5s.wav" trim 0 $((5 * RATE))s >"$PL_TMP/gen" 2>&1 ||
    fail "could not make silence_5s.wav: $(head -c 400 "$PL_TMP/gen")"
ok
sox -r $RATE -n -r $RATE -c 1 -b 16 "$PL_TMP/tone_440.wav" synth $((3 * RATE))s sine 440 vol 0.5 >"$PL_TMP/gen" 2>&1 ||
    fail "could not make tone_440.wav: $(head -c 400 "$PL_TMP/gen")"

# compare FILE [WAV_SAMPLES]: libmtmd's mel of FILE against ours on its
# decoded samples; WAV_SAMPLES, when given, is what the decode must yield
compare() {
    local file=$1 want=${2:-} what
    what=$(basename "$file")
    ok
    if ! "$PL_MTMD" audio-mel "$PL_TMP/text.gguf" "$PL_TMP/mmproj.gguf" "$file" --out "$PL_TMP/ref.f32" \
            --out-pcm "$PL_TMP/pcm.f32" >"$PL_TMP/ref" 2>"$PL_TMP/err"; then
        fail "pl_mtmd audio-mel $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    local n
    n=$(awk '$1 == "samples" {print $2}' "$PL_TMP/ref")
    if [ -n "$want" ]; then
        ok
        [ "$n" = "$want" ] || fail "$what: libmtmd decoded $n samples, the file has $want"
    fi
    ok
    "$MEL" "$PL_TMP/pcm.f32" --n-mel "$(awk '$1 == "n_mel" {print $2}' "$PL_TMP/ref")" --out "$PL_TMP/ours.f32" \
        --threads 2 --ref "$PL_TMP/ref.f32" --max-diff $MAX_DIFF >"$PL_TMP/ours" 2>"$PL_TMP/err"
    local rc=$?
    # the plan: samples, window count, n_mel, and every window's lengths
    ok
    if ! diff <(grep -E '^(samples|windows|n_mel|len) ' "$PL_TMP/ref") \
              <(grep -E '^(samples|windows|n_mel|len) ' "$PL_TMP/ours") >"$PL_TMP/diff" 2>&1; then
        fail "$what: the windows differ (libmtmd < > ours): $(tr '\n' ' ' <"$PL_TMP/diff" | head -c 400)"
        return
    fi
    ok
    local summary
    summary="$(awk '$1 == "windows" {w = $2} $1 == "max_abs" {m = $2} $1 == "differing" {d = $2 " of " $4}
                    END {printf "%s windows, max |diff| %s, %s values not bit-identical", w, m, d}' "$PL_TMP/ours")"
    if [ $rc = 0 ]; then
        echo "$what ($n samples): $summary (ours $(awk '$1 == "ms" {print $2}' "$PL_TMP/ours") ms, 2 threads;" \
             "libmtmd $(awk '$1 == "ms" {print $2}' "$PL_TMP/ref") ms, 4 threads)" >&2
    else
        fail "$what: over $MAX_DIFF: $summary $(head -c 300 "$PL_TMP/err")"
    fi
}

for s in 1 4 29 31 95; do compare "$PL_TMP/speech_${s}s.wav" $((s * RATE)); done
compare "$PL_TMP/speech_150.wav" 150
compare "$PL_TMP/silence_5s.wav" $((5 * RATE))
compare "$PL_TMP/tone_440.wav" $((3 * RATE))
compare "$MP3"

done_testing
