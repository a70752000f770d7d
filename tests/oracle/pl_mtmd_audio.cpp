/*
 * pl_mtmd_audio.cpp -- the audio front end verb of pl_mtmd (pl_mtmd.cpp
 * dispatches to it): libmtmd's decoding and log-mel preprocessing of an
 * audio file, as the reference for src/audio/audio_mel.c.
 *
 *   pl_mtmd audio-mel TEXT.gguf MMPROJ.gguf AUDIO --out FILE [--out-pcm PCM_FILE]
 *       decodes AUDIO as libmtmd does (mtmd_helper_bitmap_init_from_file:
 *       miniaudio, mono, resampled to the projector's rate) and runs the
 *       qwen3a preprocessor (mtmd-audio.h, mtmd_audio_preprocessor_qwen3a)
 *       on a clip context loaded without weights.  Writes every window's
 *       mel (raw f32, n_mel rows of n_len, window after window) to FILE and
 *       with --out-pcm the decoded samples (raw f32).  Prints "samples S",
 *       "rate R", "windows N", "n_mel M", one "len L org O" line per
 *       window, then "ms T" (the preprocessor's time: initialize and
 *       preprocess, its own 4 threads).
 *
 * The full context (a text model and the mmproj's weights) is loaded only
 * because the helper decodes for a context (its audio sample rate).
 */
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "clip-impl.h"
#include "clip-model.h"
#include "clip.h"
#include "llama.h"
#include "mtmd-audio.h"
#include "mtmd-helper.h"
#include "mtmd.h"

#define PL_ORACLE_PROG "pl_mtmd"
#include "oracle_util.h"
#include "pl_mtmd_util.h"

int pl_mtmd_audio_mel(int argc, char **argv);

static void write_raw(const char *path, const void *data, size_t bytes) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot create %s: %s", path, strerror(errno));
    if ((bytes && fwrite(data, 1, bytes, f) != bytes) || fclose(f)) die("cannot write %s", path);
}

int pl_mtmd_audio_mel(int argc, char **argv) {
    if (argc < 5) die("usage: pl_mtmd audio-mel TEXT.gguf MMPROJ.gguf AUDIO --out FILE [--out-pcm PCM_FILE]");
    const char *out = nullptr, *out_pcm = nullptr;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--out-pcm") && i + 1 < argc) out_pcm = argv[++i];
        else die("unknown argument '%s'", argv[i]);
    }
    if (!out) die("audio-mel needs --out FILE");

    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, 1, false);
    if (!mtmd_support_audio(mc)) die("%s has no audio encoder", argv[3]);

    /* the file as libmtmd decodes it */
    mtmd_bitmap *bm = load_media(mc, argv[4]);
    if (!mtmd_bitmap_is_audio(bm)) die("libmtmd did not decode %s as audio", argv[4]);
    const size_t n = mtmd_bitmap_get_n_bytes(bm) / sizeof(float);
    const float *samples = (const float *)mtmd_bitmap_get_data(bm);
    if (out_pcm) write_raw(out_pcm, samples, n * sizeof(float));

    /* its preprocessor, on a weightless clip context of the same file */
    clip_init_result r = clip_init(argv[3], weightless_clip_params());
    if (!r.ctx_a) die("clip_init found no audio encoder in %s", argv[3]);
    if (clip_get_projector_type(r.ctx_a) != PROJECTOR_TYPE_QWEN3A)
        die("audio-mel knows the qwen3a projector only; %s has another", argv[3]);
    std::vector<mtmd_audio_mel> mels;
    const auto t0 = std::chrono::steady_clock::now();
    {
        mtmd_audio_preprocessor_qwen3a prep(r.ctx_a);
        prep.initialize();
        if (!prep.preprocess(samples, n, mels)) die("libmtmd's qwen3a preprocessor refused %zu samples", n);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    FILE *f = fopen(out, "wb");
    if (!f) die("cannot create %s: %s", out, strerror(errno));
    for (const mtmd_audio_mel &m : mels) {
        if (m.data.size() != (size_t)m.n_mel * (size_t)m.n_len) die("a window is not n_mel x n_len floats");
        if (fwrite(m.data.data(), sizeof(float), m.data.size(), f) != m.data.size()) die("cannot write %s", out);
    }
    if (fclose(f)) die("cannot write %s", out);
    printf("samples %zu\nrate %d\nwindows %zu\nn_mel %lld\n", n, mtmd_get_audio_sample_rate(mc), mels.size(),
           mels.empty() ? 0LL : (long long)mels[0].n_mel);
    for (const mtmd_audio_mel &m : mels) printf("len %lld org %lld\n", (long long)m.n_len, (long long)m.n_len_org);
    printf("ms %.1f\n", ms);

    if (r.ctx_v) clip_free(r.ctx_v);
    clip_free(r.ctx_a);
    if (r.ctx_gen_a) clip_free(r.ctx_gen_a);
    mtmd_bitmap_free(bm);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}
