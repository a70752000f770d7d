#!/usr/bin/env bash
# Seeds for fuzz_audio_decode: tiny recordings of the kinds the decoder
# takes, written here by sox (scripts/install-deps.sh installs it): WAV
# 16-bit mono 16 kHz, 8-bit and float stereo at other rates, AIFF, AU,
# FLAC, Ogg/Vorbis -- each a few hundred bytes to a few KiB (0.05 s) --
# and an MP3 by pl_audio_encode (libsndfile's LAME writer; sox writes no
# MP3) from the fuzz tree scripts/test.sh builds ($2 is the checkout).
set -euo pipefail
d=$1
command -v sox >/dev/null 2>&1 || { echo "fuzz_audio_decode seeds: sox is needed" >&2; exit 1; }
s() { sox -n "$@" synth 0.05 sine 440; }
s -r 16000 -c 1 -b 16 "$d/mono16k.wav"
s -r 8000 -c 2 -b 8 -e unsigned-integer "$d/stereo8k_u8.wav"
s -r 44100 -c 2 -e floating-point -b 32 "$d/stereo44k_float.wav"
s -r 22050 -c 1 "$d/mono22k.aiff"
s -r 16000 -c 1 "$d/mono16k.au"
s -r 48000 -c 2 "$d/stereo48k.flac"
s -r 16000 -c 1 "$d/mono16k.ogg"
enc=${2:-.}/build-asan/pl_audio_encode
if [ -x "$enc" ]; then
  sox -n -r 22050 -c 1 "$d/.src.wav" synth 0.2 sine 440
  "$enc" "$d/.src.wav" "$d/mono22k.mp3" mp3
  rm -f "$d/.src.wav"
fi
