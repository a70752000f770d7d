/*
 * audio_mel.c -- Qwen3-ASR's log-mel front end (audio_mel.h): libmtmd's
 * mtmd_audio_preprocessor_qwen3a with its arithmetic kept operation for
 * operation, so that the mel is libmtmd's to the last bit or so.
 *
 * What "the same arithmetic" means here, each matched on purpose:
 *   - the tables as mtmd_audio_cache fills them: sine/cosine as sinf/cosf of
 *     a double angle rounded to float; the Hann window in double from a
 *     cosf; the filterbank in double, stored as float;
 *   - the FFT of fft_impl<false, true>: radix-2 decimation in time, halves
 *     copied out and transformed recursively, odd lengths (25 for n_fft
 *     400) by a direct DFT indexing the table with (k * n * step) % size,
 *     the butterflies in float in the same order;
 *   - the power and the filterbank dot product in float, four products a
 *     step summed into a double; log10 in double of max(sum, 2^-24);
 *   - the normalisation over the clip in double, stored as float.
 * No floating-point contraction (FMA): libmtmd is built for the baseline
 * ISA without it, and a fused multiply-add rounds differently.
 */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#include "audio/audio_mel.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/threadpool.h"

/* libmtmd's filter_params.mel_floor: 2^-24 */
#define MEL_FLOOR 5.960464477539063e-08f
/* limits on the parameters, far past any real front end (they bound the
 * table sizes and keep the DFT's int index arithmetic in range) */
#define MAX_N_FFT 16384u
#define MAX_N_MEL 4096u
/* frames one call of the ranged job computes */
#define FRAME_GRAIN 32

pl_mel_params pl_mel_params_qwen3a(uint32_t n_mel) {
    pl_mel_params p = {16000, 400, 400, 160, n_mel};
    return p;
}

/* mel frames of n samples: the reflection-padded signal (n + n_fft samples)
 * has (n + n_fft - n_fft) / hop + 1 frames of n_fft */
static int64_t frames_of(size_t n, uint32_t hop) { return (int64_t)(n / hop) + 1; }

/* window w's audio frames of n_frames in all, and its padded length */
static int64_t window_org(int64_t n_frames, size_t w) {
    int64_t left = n_frames - (int64_t)w * PL_MEL_QWEN3A_WINDOW;
    return left < PL_MEL_QWEN3A_WINDOW ? left : PL_MEL_QWEN3A_WINDOW;
}
static int64_t window_len(int64_t org) {
    return (org + PL_MEL_QWEN3A_CHUNK - 1) / PL_MEL_QWEN3A_CHUNK * PL_MEL_QWEN3A_CHUNK;
}

size_t pl_mel_qwen3a_windows(size_t n_samples, int64_t *lens) {
    if (n_samples == 0) return 0;
    const int64_t n_frames = frames_of(n_samples, pl_mel_params_qwen3a(128).hop);
    const size_t n_windows = (size_t)((n_frames + PL_MEL_QWEN3A_WINDOW - 1) / PL_MEL_QWEN3A_WINDOW);
    if (lens)
        for (size_t w = 0; w < n_windows; w++) lens[w] = window_len(window_org(n_frames, w));
    return n_windows;
}

void pl_mel_free(pl_mel *windows, size_t n_windows) {
    if (!windows) return;
    for (size_t i = 0; i < n_windows; i++) free(windows[i].data);
    free(windows);
}

/* ---- the tables (mtmd_audio_cache) ------------------------------------- */

typedef struct mel_tables {
    int n_fft, n_bins, n_mel;
    float *sin_vals, *cos_vals; /* n_fft each */
    float *hann;                /* n_fft: the window, centred in zeros when shorter */
    float *filters;             /* n_mel rows of n_bins */
    int *nz;                    /* per row: its first nonzero bin and one past its last */
} mel_tables;

static void tables_free(mel_tables *t) {
    free(t->sin_vals);
    free(t->cos_vals);
    free(t->hann);
    free(t->filters);
    free(t->nz);
}

/* Slaney's mel scale (librosa's default), as fill_mel_filterbank_matrix has it */
static const double MIN_LOG_HZ = 1000.0;
static const double LIN_SLOPE = 3 / 200.;
/* std::max(a, b) as libmtmd calls it: b only when a < b */
static double max_d(double a, double b) { return a < b ? b : a; }

static double hz_to_mel(double f_hz) {
    const double min_log_mel = MIN_LOG_HZ * LIN_SLOPE, log_step = log(6.4) / 27.0;
    return (f_hz < MIN_LOG_HZ) ? f_hz * LIN_SLOPE : min_log_mel + log(f_hz / MIN_LOG_HZ) / log_step;
}
static double mel_to_hz(double m) {
    const double min_log_mel = MIN_LOG_HZ * LIN_SLOPE, log_step = log(6.4) / 27.0;
    return (m < min_log_mel) ? m / LIN_SLOPE : MIN_LOG_HZ * exp((m - min_log_mel) * log_step);
}

/* fill_mel_filterbank_matrix(n_mel, n_fft, sample_rate) with its defaults:
 * fmin 0, fmax sample_rate / 2, Slaney area normalisation, scale 1 */
static void fill_filters(float *out, int64_t n_mel, int64_t n_fft, int sample_rate) {
    const float f_min = 0.0f, f_max = 0.5f * sample_rate, scale = 1.0f;
    const double bin_hz_step = (double)sample_rate / (double)n_fft;
    const double m_lo = hz_to_mel(f_min), m_hi = hz_to_mel(f_max);
    const int64_t n_bins = n_fft / 2 + 1;
    for (int64_t m = 0; m < n_mel; ++m) {
        /* the edges hz_pts[m .. m + 2] of the mel grid (n_mel + 2 points) */
        double hz[3];
        for (int e = 0; e < 3; e++) {
            const int i = (int)m + e;
            hz[e] = mel_to_hz(m_lo + (m_hi - m_lo) * ((double)i / (double)(n_mel + 1)));
        }
        const double f_left = hz[0], f_center = hz[1], f_right = hz[2];
        const double denom_l = max_d(1e-30, f_center - f_left);
        const double denom_r = max_d(1e-30, f_right - f_center);
        const double enorm = 2.0 / max_d(1e-30, f_right - f_left);
        for (int k = 0; k < n_bins; ++k) {
            const double f = k * bin_hz_step;
            double w = 0.0;
            if (f >= f_left && f <= f_center)
                w = (f - f_left) / denom_l;
            else if (f > f_center && f <= f_right)
                w = (f_right - f) / denom_r;
            out[(size_t)m * (size_t)n_bins + (size_t)k] = (float)(w * enorm * scale);
        }
    }
}

static pocketllm_status tables_init(mel_tables *t, const pl_mel_params *p) {
    memset(t, 0, sizeof *t);
    t->n_fft = (int)p->n_fft;
    t->n_bins = (int)p->n_fft / 2 + 1;
    t->n_mel = (int)p->n_mel;
    t->sin_vals = malloc(sizeof(float) * p->n_fft);
    t->cos_vals = malloc(sizeof(float) * p->n_fft);
    t->hann = calloc(p->n_fft, sizeof(float));
    t->filters = malloc(sizeof(float) * (size_t)t->n_bins * p->n_mel);
    t->nz = malloc(sizeof(int) * 2 * p->n_mel);
    float *win = malloc(sizeof(float) * p->window);
    if (!t->sin_vals || !t->cos_vals || !t->hann || !t->filters || !t->nz || !win) {
        free(win);
        tables_free(t);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "mel: out of memory for the tables");
    }
    /* fill_sin_cos_table(n_fft): a double angle, sinf/cosf of it as a float */
    for (uint32_t i = 0; i < p->n_fft; i++) {
        const double theta = (2 * M_PI * i) / p->n_fft;
        t->sin_vals[i] = sinf((float)theta);
        t->cos_vals[i] = cosf((float)theta);
    }
    /* fill_hann_window(window, periodic) */
    for (uint32_t i = 0; i < p->window; i++)
        win[i] = (float)(0.5 * (1.0 - cosf((float)((2.0 * M_PI * i) / p->window))));
    /* log_mel_spectrogram pads a shorter window to the frame, centred */
    memcpy(t->hann + (p->n_fft - p->window) / 2, win, sizeof(float) * p->window);
    free(win);
    fill_filters(t->filters, p->n_mel, p->n_fft, (int)p->sample_rate);
    for (int m = 0; m < t->n_mel; m++) {
        const float *f = t->filters + (size_t)m * (size_t)t->n_bins;
        int lo = 0, hi = t->n_bins;
        while (lo < hi && f[lo] == 0.0f) lo++;
        while (hi > lo && f[hi - 1] == 0.0f) hi--;
        t->nz[2 * m] = lo;
        t->nz[2 * m + 1] = hi;
    }
    return POCKETLLM_OK;
}

/* ---- the FFT (fft_impl<false, true> and dft_impl<false, true>) ---------- */

/* the DFT of N real inputs (odd N), out interleaved re/im */
static void dft_real(const mel_tables *t, const float *in, int N, float *out) {
    const int n_sc = t->n_fft, step = n_sc / N;
    const float sign = -1.0f, scale = 1.0f;
    for (int k = 0; k < N; k++) {
        float re = 0, im = 0;
        /* libmtmd's (k * n * step) % n_sc, stepped instead of divided
         * (k * step < n_sc: one subtraction keeps it in range) */
        const int dk = k * step;
        int idx = 0;
        for (int n = 0; n < N; n++, idx = idx + dk >= n_sc ? idx + dk - n_sc : idx + dk) {
            const float cos_val = t->cos_vals[idx], sin_val = t->sin_vals[idx];
            const float in_re = in[n];
            re += in_re * cos_val;
            im += sign * in_re * sin_val;
        }
        out[k * 2 + 0] = re * scale;
        out[k * 2 + 1] = im * scale;
    }
}

/* The FFT of N real inputs into out (2N floats, interleaved), with
 * libmtmd's scratch layout: in needs 2N floats (the halves are copied to
 * in + N), out 8N (the halves' transforms at out + 2N and out + 3N). */
static void fft_real(const mel_tables *t, float *in, int N, float *out) {
    if (N == 1) {
        out[0] = in[0];
        out[1] = 0.0f;
        return;
    }
    const int half_N = N / 2;
    if (N - half_N * 2 == 1) {
        dft_real(t, in, N, out);
        return;
    }
    float *even = in + N;
    for (int i = 0; i < half_N; ++i) even[i] = in[2 * i];
    float *even_fft = out + 2 * N;
    fft_real(t, even, half_N, even_fft);
    float *odd = even;
    for (int i = 0; i < half_N; ++i) odd[i] = in[2 * i + 1];
    float *odd_fft = even_fft + N;
    fft_real(t, odd, half_N, odd_fft);

    const int step = t->n_fft / N;
    const float sign = -1.0f, scale = 1.0f;
    for (int k = 0; k < half_N; k++) {
        const int idx = k * step; /* angle 2 pi k / N */
        const float re = t->cos_vals[idx];
        const float im = sign * t->sin_vals[idx];
        const float re_odd = odd_fft[2 * k + 0];
        const float im_odd = odd_fft[2 * k + 1];
        out[2 * k + 0] = scale * (even_fft[2 * k + 0] + re * re_odd - im * im_odd);
        out[2 * k + 1] = scale * (even_fft[2 * k + 1] + re * im_odd + im * re_odd);
        out[2 * (k + half_N) + 0] = scale * (even_fft[2 * k + 0] - re * re_odd + im * im_odd);
        out[2 * (k + half_N) + 1] = scale * (even_fft[2 * k + 1] - re * im_odd - im * re_odd);
    }
}

/* ---- the frames ------------------------------------------------------------ */

typedef struct mel_job {
    const mel_tables *t;
    const float *x; /* the clip, n samples */
    int64_t n;
    int pad;        /* n_fft / 2: the reflection at each end */
    int hop;
    float *scratch; /* per thread: 2 n_fft (FFT input) + 8 n_fft (output) */
    pl_mel *windows;
} mel_job;

/* Sample p of the reflection-padded clip (n + 2 pad samples), as libmtmd's
 * qwen3a preprocessor builds it: the start mirrored from x[pad .. 1], the
 * end from x[n - 2 ..], with zeros where a short clip has no such sample. */
static float padded_at(const mel_job *j, int64_t p) {
    if (p < j->pad) {
        const int64_t src = j->pad - p;
        return src < j->n ? j->x[src] : 0.0f;
    }
    if (p < j->n + j->pad) return j->x[p - j->pad];
    const int64_t src = j->n - 2 - (p - j->n - j->pad);
    return src >= 0 ? j->x[src] : 0.0f;
}

static void mel_frames(void *ctx, int64_t lo, int64_t hi, int thread) {
    const mel_job *j = ctx;
    const mel_tables *t = j->t;
    const int N = t->n_fft, n_bins = t->n_bins;
    float *fft_in = j->scratch + (size_t)thread * 10 * (size_t)N;
    float *fft_out = fft_in + 2 * (size_t)N;
    for (int64_t i = lo; i < hi; i++) {
        /* the windowed frame: every frame lies whole in the padded clip */
        const int64_t offset = i * j->hop;
        if (offset >= j->pad && offset + N <= j->n + j->pad) {
            const float *s = j->x + (offset - j->pad);
            for (int k = 0; k < N; k++) fft_in[k] = t->hann[k] * s[k];
        } else {
            for (int k = 0; k < N; k++) fft_in[k] = t->hann[k] * padded_at(j, offset + k);
        }
        fft_real(t, fft_in, N, fft_out);
        /* power spectrum, in place (bin k is written after 2k and 2k + 1 are read) */
        for (int k = 0; k < n_bins; k++)
            fft_out[k] = fft_out[2 * k + 0] * fft_out[2 * k + 0] + fft_out[2 * k + 1] * fft_out[2 * k + 1];
        /* The filterbank, into frame i's column of its window: libmtmd's
         * dot product over all bins, four products summed in float and
         * added to a double, then the rest one by one.  A filter is zero
         * outside a few bins, and a zero product (power >= 0, weight 0)
         * adds exactly nothing to a float or double sum, so only the groups
         * of four that hold its nonzero bins (whole, zeros included: the
         * float sum of a group is kept exactly) and its nonzero remainder
         * terms are added -- the same sum, bit for bit, for finite powers. */
        pl_mel *w = &j->windows[i / PL_MEL_QWEN3A_WINDOW];
        const int64_t col = i % PL_MEL_QWEN3A_WINDOW;
        const int k_groups = n_bins > 3 ? (n_bins - 3 + 3) / 4 * 4 : 0; /* where libmtmd's 4-step loop ends */
        for (int m = 0; m < t->n_mel; m++) {
            const float *f = t->filters + (size_t)m * (size_t)n_bins;
            const int nz_lo = t->nz[2 * m], nz_hi = t->nz[2 * m + 1];
            const int g_hi = (nz_hi + 3) / 4 * 4 < k_groups ? (nz_hi + 3) / 4 * 4 : k_groups;
            double sum = 0.0;
            for (int k = nz_lo / 4 * 4; k < g_hi; k += 4)
                sum += fft_out[k + 0] * f[k + 0] + fft_out[k + 1] * f[k + 1] + fft_out[k + 2] * f[k + 2] +
                       fft_out[k + 3] * f[k + 3];
            for (int k = nz_lo > k_groups ? nz_lo : k_groups; k < nz_hi; k++) sum += fft_out[k] * f[k];
            sum = max_d(sum, (double)MEL_FLOOR);
            w->data[(size_t)m * (size_t)w->n_len + (size_t)col] = (float)log10(sum);
        }
    }
}

static pocketllm_status check_params(const pl_mel_params *p) {
    if (!p) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mel: no parameters");
    if (p->sample_rate == 0 || p->hop == 0 || p->n_mel == 0 || p->n_mel > MAX_N_MEL)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mel: bad parameters (rate %u, hop %u, %u mel bins)",
                       p->sample_rate, p->hop, p->n_mel);
    /* an even n_fft: the frame is the FFT length, and the padded clip has
     * exactly n / hop + 1 frames, all of them audio */
    if (p->n_fft < 2 || p->n_fft > MAX_N_FFT || p->n_fft % 2 || p->window == 0 || p->window > p->n_fft)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mel: bad FFT parameters (n_fft %u, window %u)", p->n_fft,
                       p->window);
    return POCKETLLM_OK;
}

pocketllm_status pl_mel_qwen3a(const pl_mel_params *p, const float *samples, size_t n, int n_threads,
                               pl_mel **windows, size_t *n_windows) {
    if (!windows || !n_windows) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mel: no output");
    *windows = NULL;
    *n_windows = 0;
    pocketllm_status st = check_params(p);
    if (st) return st;
    if (n == 0 || !samples) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mel: no audio samples");
    if (n > (size_t)INT64_MAX / 2) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "mel: %zu samples are too many", n);

    const int64_t n_frames = frames_of(n, p->hop);
    const size_t nw = (size_t)((n_frames + PL_MEL_QWEN3A_WINDOW - 1) / PL_MEL_QWEN3A_WINDOW);
    pl_mel *win = calloc(nw, sizeof *win);
    if (!win) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "mel: out of memory for %zu windows", nw);
    for (size_t w = 0; w < nw; w++) {
        win[w].n_mel = p->n_mel;
        win[w].n_len_org = window_org(n_frames, w);
        win[w].n_len = window_len(win[w].n_len_org);
        /* zeros: the padding frames stay 0, as libmtmd leaves them */
        win[w].data = calloc((size_t)win[w].n_mel * (size_t)win[w].n_len, sizeof(float));
        if (!win[w].data) {
            pl_mel_free(win, nw);
            return pl_fail(POCKETLLM_ERR_NO_MEMORY, "mel: out of memory for the mel of %zu samples", n);
        }
    }

    mel_tables t;
    if ((st = tables_init(&t, p))) {
        pl_mel_free(win, nw);
        return st;
    }
    if (n_threads <= 0) n_threads = pl_pool_default_threads();
    /* no more threads than grains of frames */
    const int64_t grains = (n_frames + FRAME_GRAIN - 1) / FRAME_GRAIN;
    if (n_threads > grains) n_threads = (int)grains;
    if (n_threads > 256) n_threads = 256;
    pl_pool *pool = NULL;
    mel_job job = {&t, samples, (int64_t)n, (int)p->n_fft / 2, (int)p->hop, NULL, win};
    job.scratch = malloc(sizeof(float) * 10 * p->n_fft * (size_t)n_threads);
    if (!job.scratch) st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "mel: out of memory for the FFT scratch");
    if (!st) st = pl_pool_new(n_threads, &pool);
    if (!st) {
        pl_pool_run_ranges(pool, mel_frames, &job, n_frames, FRAME_GRAIN);
        pl_pool_free(pool);
    }
    free(job.scratch);
    tables_free(&t);
    if (st) {
        pl_mel_free(win, nw);
        return st;
    }

    /* Whisper's normalisation over the whole clip: clamp to (max - 8), then
     * (v + 4) / 4, in double as libmtmd does; the padding stays 0 */
    double mmax = -1e20;
    for (size_t w = 0; w < nw; w++)
        for (int64_t m = 0; m < win[w].n_mel; m++) {
            const float *row = win[w].data + (size_t)m * (size_t)win[w].n_len;
            for (int64_t c = 0; c < win[w].n_len_org; c++)
                if (row[c] > mmax) mmax = row[c];
        }
    mmax -= 8.0;
    for (size_t w = 0; w < nw; w++)
        for (int64_t m = 0; m < win[w].n_mel; m++) {
            float *row = win[w].data + (size_t)m * (size_t)win[w].n_len;
            for (int64_t c = 0; c < win[w].n_len_org; c++) {
                const double v = row[c];
                row[c] = (float)((max_d(v, mmax) + 4.0) / 4.0);
            }
        }
    *windows = win;
    *n_windows = nw;
    return POCKETLLM_OK;
}
