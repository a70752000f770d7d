# audio_lib.sh -- shared by the audio tower tests on other backends and
# weight types (test_vulkan_audio_tower.sh, test_arm64_audio.sh,
# test_audio_tower_quant.sh): a speech clip made with espeak-ng and sox, and
# audio_compare, the tower's embeddings of ours against libmtmd's on
# exactly the mel libmtmd fed its own tower (as test_audio_tower.sh does).
# Source after mtmd_lib.sh; set TOWER (the pl_audio_tower to run: the
# program, or an arm_wrap script), DEVICE (cpu, vulkan) and THREADS.
CMP=$PL_TOOLS/pl_vision_encode
[ -x "$CMP" ] || { echo "FAIL: no $CMP (a helper program of the build)" >&2; exit 1; }
for t in espeak-ng sox; do
    command -v $t >/dev/null || { echo "FAIL: $t is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done

# speech OUT SECONDS TEXT : espeak-ng's 22 kHz speech as 16 kHz mono
# 16-bit WAV, padded with silence and cut to SECONDS
speech() {
    local out=$1 secs=$2 text=$3
    espeak-ng -w "$PL_TMP/raw.wav" "$text" 2>"$PL_TMP/err" &&
        sox "$PL_TMP/raw.wav" -r 16000 -c 1 -b 16 "$out" pad 0 "$secs" trim 0 "$secs" 2>>"$PL_TMP/err"
}

# audio_compare TEXT MMPROJ CLIP MAX_ABS [MIN_COS] : libmtmd (CPU) encodes CLIP
# and writes its mel windows; $TOWER encodes those windows on $DEVICE; per
# token cosine >= MIN_COS (default 0.9999) and every difference <= MAX_ABS.
# Prints the measured minimum cosine and largest difference.
audio_compare() {
    local text=$1 tower=$2 clip=$3 max_abs=$4 min_cos=${5:-0.9999}
    local what lens n_embd
    what="$(basename "$clip") on $(basename "$tower" .gguf) ($DEVICE)"
    ok
    if ! "$PL_MTMD" audio-encode "$text" "$tower" "$clip" --out "$PL_TMP/ref.f32" --out-mel "$PL_TMP/mel.f32" \
            -t "$THREADS" >"$PL_TMP/ref" 2>"$PL_TMP/err"; then
        fail "pl_mtmd audio-encode $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    lens=$(awk '$1 == "mel" {printf "%s%s", s, $2; s = ","}' "$PL_TMP/ref")
    ok
    if ! "$TOWER" "$text" "$tower" "$PL_TMP/mel.f32" --lens "$lens" --out "$PL_TMP/ours.f32" --threads "$THREADS" \
            --device "$DEVICE" >"$PL_TMP/ours" 2>"$PL_TMP/err"; then
        fail "pl_audio_tower $what: $(head -c 400 "$PL_TMP/err")"
        return
    fi
    ok
    [ "$(grep -E '^(tokens|n_embd) ' "$PL_TMP/ours")" = "$(grep -E '^(tokens|n_embd) ' "$PL_TMP/ref")" ] ||
        fail "$what: windows/tokens/width differ: ours $(tr '\n' ' ' <"$PL_TMP/ours"), libmtmd $(tr '\n' ' ' <"$PL_TMP/ref")"
    n_embd=$(awk '$1 == "n_embd" {print $2}' "$PL_TMP/ref")
    ok
    if "$CMP" compare "$PL_TMP/ours.f32" "$PL_TMP/ref.f32" "$n_embd" 1 --min-cos "$min_cos" --max-abs "$max_abs" \
            >"$PL_TMP/cmp" 2>&1; then
        echo "$what (windows $lens):" >&2
        sed 's/^/    /' "$PL_TMP/cmp" >&2
    else
        fail "$what: $(cat "$PL_TMP/cmp")"
    fi
}
