# test_audio_formats.sh -- PocketLLM's audio decoding (src/audio/:
# libsndfile, mono mix, libsoxr to 16 kHz) of WAV, FLAC, Ogg/Vorbis, MP3 and Opus
# against sox's own decode and resampling of the same files
# (`sox F -r 16000 -c 1 -t f32 ref.raw`), and the bundle's test-2.mp3.
#
# The speech is made here (espeak-ng, 22050 Hz mono) and converted by sox
# to 44.1 kHz stereo WAV, FLAC and Ogg/Vorbis; the MP3 is written by
# pl_audio_encode (libsndfile's LAME writer: Debian's sox writes no MP3,
# and reads none either, so the MP3's reference is sox's resampling of the
# WAV it was encoded from).  Bounds, with what they measured when written:
#   - length: within 2 samples of the reference (measured: equal; the MP3's
#     LAME tag lets libmpg123 drop the encoder delay and padding);
#   - WAV, FLAC (lossless) and Ogg (the same libvorbis decode on both
#     sides): max abs diff <= 3e-4 and correlation >= 0.99999 (measured
#     7.5e-5 / 7.6e-5, correlation 0.999999998): sox 14.4's rate effect is
#     its own resampler, libsoxr's ancestor, with the same 95%-bandwidth
#     linear-phase design at 20 bits, not the same code, so a few 16-bit
#     LSBs apart;
#   - MP3 and Ogg/Opus (also written by pl_audio_encode, from 48 kHz
#     stereo) against the WAV each came from (lossy): correlation >= 0.99
#     (measured 0.99956 and 0.99901);
#   - each decoded from memory (pl_audio_decode, the server's path) equals
#     the file's decode (pl_audio_load) byte for byte.
# tools/mtmd/test-2.mp3 (the bundle's speech sample) decodes to its length
# counted from its frame headers less its LAME tag's delay and padding
# (mp3len.py), resampled to 16 kHz, within 2 samples; its duration is
# printed.
. "$(dirname "$0")/lib.sh"
DEC=$PL_TOOLS/pl_audio_decode
ENC=$PL_TOOLS/pl_audio_encode
for t in "$DEC" "$ENC"; do
    [ -x "$t" ] || { echo "FAIL: no $t (a helper program of the build)" >&2; exit 1; }
done
for c in sox espeak-ng python3; do
    command -v $c >/dev/null 2>&1 || { echo "FAIL: $c is needed (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
MP3=$LLAMA_SRC/tools/mtmd/test-2.mp3
[ -f "$MP3" ] || { echo "FAIL: no $MP3 in the llama.cpp bundle" >&2; exit 1; }
T=$PL_TMP

gen() { "$@" >>"$T/gen.log" 2>&1 || { cat "$T/gen.log" >&2; echo "FAIL: could not generate test audio: $*" >&2; exit 1; }; }
gen espeak-ng -w "$T/speech.wav" "The quick brown fox jumps over the lazy dog. Seven hundred and twelve boxes arrived on Tuesday."
gen sox "$T/speech.wav" -r 44100 -c 2 "$T/s.wav"
gen sox "$T/s.wav" "$T/s.flac"
gen sox "$T/s.wav" "$T/s.ogg"
gen "$ENC" "$T/s.wav" "$T/s.mp3" mp3
gen sox "$T/s.wav" -r 16000 -c 1 -t f32 "$T/s.wav.ref"
for f in flac ogg; do gen sox "$T/s.$f" -r 16000 -c 1 -t f32 "$T/s.$f.ref"; done
cp "$T/s.wav.ref" "$T/s.mp3.ref" # (the MP3's source)
# Ogg/Opus (libsndfile's writer; Opus takes 48 kHz), its source the reference
gen sox "$T/speech.wav" -r 48000 -c 2 "$T/s48.wav"
gen "$ENC" "$T/s48.wav" "$T/s.opus" opus
gen sox "$T/s48.wav" -r 16000 -c 1 -t f32 "$T/s.opus.ref"

field() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
for f in wav flac ogg mp3 opus; do
    expect_rc 0 "$DEC" "$T/s.$f" --out "$T/$f.raw" --ref "$T/s.$f.ref" || continue
    cp "$T/out" "$T/$f.txt"
    n=$(field samples "$T/$f.txt") m=$(field ref_samples "$T/$f.txt")
    max=$(field max_abs_diff "$T/$f.txt") corr=$(field corr "$T/$f.txt")
    echo "  $f: samples $n (sox $m), max_abs_diff $max, corr $corr" >&2
    ok
    [ "$(field rate "$T/$f.txt")" = 16000 ] || fail "$f: rate $(field rate "$T/$f.txt")"
    ok
    python3 -c "import sys; sys.exit(abs($n - $m) > 2)" || fail "$f: $n samples, sox $m"
    ok
    if [ $f = mp3 ] || [ $f = opus ]; then
        python3 -c "import sys; sys.exit(not $corr >= 0.99)" || fail "$f: correlation $corr < 0.99"
    else
        python3 -c "import sys; sys.exit(not ($corr >= 0.99999 and $max <= 3e-4))" ||
            fail "$f: max abs diff $max (bound 3e-4), correlation $corr (bound 0.99999)"
    fi
    expect_rc 0 "$DEC" "$T/s.$f" --memory --out "$T/$f.mem.raw" &&
        { ok; cmp -s "$T/$f.raw" "$T/$f.mem.raw" || fail "$f: the decode from memory differs from the file's"; }
done

# the bundle's speech sample: its length from its frame headers
python3 "$(dirname "$0")/mp3len.py" "$MP3" >"$T/mp3len" 2>&1 || { cat "$T/mp3len" >&2; fail "mp3len.py $MP3"; }
if expect_rc 0 "$DEC" "$MP3"; then
    n=$(field samples "$T/out")
    want=$(python3 -c "import sys; k = dict(zip(*[iter(open('$T/mp3len').read().split())] * 2)); print(round(int(k['samples']) * 16000 / int(k['rate'])))")
    echo "  test-2.mp3: $n samples at 16 kHz = $(field seconds "$T/out") s (its frames say $want: $(cat "$T/mp3len"))" >&2
    ok
    python3 -c "import sys; sys.exit(abs($n - $want) > 2)" || fail "test-2.mp3: $n samples, its frames say $want"
fi
done_testing
