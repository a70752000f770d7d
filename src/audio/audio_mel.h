/*
 * audio_mel.h -- Qwen3-ASR's front end: mono PCM at 16 kHz to log-mel
 * windows, the input of the audio tower.
 *
 * The arithmetic is libmtmd's mtmd_audio_preprocessor_qwen3a
 * (tools/mtmd/mtmd-audio.cpp of llama.cpp v0.4.0, itself
 * WhisperFeatureExtractor with truncation=False) step for step, with the
 * same float/double choices and the same FFT, so that the same PCM gives
 * the same mel (tests/oracle/test_audio_mel.sh measures it):
 *   - reflection padding of n_fft/2 samples at each end (center=True);
 *   - a periodic Hann window, a radix-2 FFT down to odd lengths, which are
 *     plain DFTs (400 = 16 x 25), over a float sine/cosine table;
 *   - power spectrum, Slaney mel filterbank (area-normalised), log10 of
 *     max(sum, 2^-24);
 *   - over the whole clip: v = (max(v, max - 8) + 4) / 4;
 *   - frames split into windows of 800 (n_window_infer), each padded with
 *     zeros to a multiple of 100 frames (the conv sub-chunk).
 * The frames are computed in parallel; each one is computed whole by one
 * thread, so the result never depends on the thread count.
 *
 * Memory: the windows are the only full-clip buffer (the clip's mel,
 * n_mel x frames floats, needed whole for the normalisation); the padded
 * signal is never copied -- the edges are read by reflection.
 */
#ifndef PL_AUDIO_MEL_H
#define PL_AUDIO_MEL_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

typedef struct pl_mel {
    int64_t n_mel;     /* 128 */
    int64_t n_len;     /* frames in this window, padded to a multiple of 100 */
    int64_t n_len_org; /* frames of audio in it (the rest is padding, zeros) */
    float *data;       /* n_mel rows of n_len floats (libmtmd's mtmd_audio_mel layout) */
} pl_mel;

typedef struct pl_mel_params {
    uint32_t sample_rate, n_fft, window, hop, n_mel;
} pl_mel_params;

/* mel frames per window (the model's n_window_infer) and the multiple a
 * window is padded to (n_window * 2) */
#define PL_MEL_QWEN3A_WINDOW 800
#define PL_MEL_QWEN3A_CHUNK 100

/* Qwen3-ASR's (what clip.cpp sets for qwen3a: 16000, 400, 400, 160; n_mel from the mmproj). */
pl_mel_params pl_mel_params_qwen3a(uint32_t n_mel);

/* The windows for n samples: *n_windows and, when lens is not NULL, each window's padded n_len,
 * without computing anything (the token count of a clip: sum of n_len/100*13).
 * Returns the number of windows (0 for n == 0); lens, when given, must have room for them. */
size_t pl_mel_qwen3a_windows(size_t n_samples, int64_t *lens);

/* The whole front end: n samples (mono at p->sample_rate) -> *n_windows windows (malloc'd).
 * n_threads <= 0: the physical cores.  n == 0 is refused, as libmtmd refuses it; any n >= 1 is
 * taken as libmtmd takes it (under n_fft/2 + 1 samples the reflection reads zeros past the
 * clip, as libmtmd's does).  On failure *windows is NULL and *n_windows 0. */
pocketllm_status pl_mel_qwen3a(const pl_mel_params *p, const float *samples, size_t n, int n_threads,
                               pl_mel **windows, size_t *n_windows);
void pl_mel_free(pl_mel *windows, size_t n_windows);

#endif
