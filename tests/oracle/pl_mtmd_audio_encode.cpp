/*
 * pl_mtmd_audio_encode.cpp -- the audio tower verb of pl_mtmd (pl_mtmd.cpp
 * dispatches to it): libmtmd's encoding of an audio file, the reference
 * for src/audio/audio_tower_*.c.
 *
 *   pl_mtmd audio-encode TEXT.gguf MMPROJ.gguf AUDIO --out FILE [-t N] [--out-mel MEL_FILE]
 *       decodes AUDIO with mtmd_helper_bitmap_init_from_file, tokenizes
 *       the prompt "<marker>" with it (mtmd_tokenize: the preprocessor
 *       cuts the clip into mel windows, one audio chunk each), encodes
 *       every audio chunk (mtmd_encode_chunk, flash attention off) and
 *       writes all their embeddings, raw f32, chunk after chunk, to FILE.
 *       Prints "chunks N", per chunk "tokens T", then "n_embd E".
 *       --out-mel writes the mel windows the tower was fed (raw f32, n_mel
 *       rows of n_len, window after window) and prints per window
 *       "mel LEN ORG": libmtmd keeps them inside its chunks (mtmd.cpp's
 *       private structs), so they are made again by the same
 *       preprocessor (mtmd_audio_preprocessor_qwen3a, deterministic) on
 *       the same samples, on a weightless clip context of the file, and
 *       checked against the chunks' token counts.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

int pl_mtmd_audio_encode(int argc, char **argv);

/* The mel windows of n samples as libmtmd's qwen3a preprocessor makes them. */
static std::vector<mtmd_audio_mel> mel_windows(const char *mmproj, const float *samples, size_t n) {
    clip_init_result r = clip_init(mmproj, weightless_clip_params());
    if (!r.ctx_a) die("clip_init found no audio encoder in %s", mmproj);
    if (clip_get_projector_type(r.ctx_a) != PROJECTOR_TYPE_QWEN3A)
        die("audio-encode --out-mel knows the qwen3a projector only; %s has another", mmproj);
    std::vector<mtmd_audio_mel> mels;
    {
        mtmd_audio_preprocessor_qwen3a prep(r.ctx_a);
        prep.initialize();
        if (!prep.preprocess(samples, n, mels)) die("libmtmd's qwen3a preprocessor refused %zu samples", n);
    }
    if (r.ctx_v) clip_free(r.ctx_v);
    clip_free(r.ctx_a);
    if (r.ctx_gen_a) clip_free(r.ctx_gen_a);
    return mels;
}

int pl_mtmd_audio_encode(int argc, char **argv) {
    if (argc < 5)
        die("usage: pl_mtmd audio-encode TEXT.gguf MMPROJ.gguf AUDIO --out FILE [-t N] [--out-mel MEL_FILE]");
    const char *out = nullptr, *out_mel = nullptr;
    int threads = 2;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--out-mel") && i + 1 < argc) out_mel = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else die("unknown argument '%s'", argv[i]);
    }
    if (!out) die("audio-encode needs --out FILE");
    if (threads < 1) threads = 1;

    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, threads, false);
    if (!mtmd_support_audio(mc)) die("%s has no audio encoder", argv[3]);

    mtmd_bitmap *bm = load_media(mc, argv[4]);
    if (!mtmd_bitmap_is_audio(bm)) die("libmtmd did not decode %s as audio", argv[4]);

    std::string prompt = mtmd_default_marker();
    mtmd_input_text in = {prompt.c_str(), prompt.size(), true, true};
    mtmd_input_chunks *chunks = mtmd_input_chunks_init();
    int32_t rc = mtmd_tokenize(mc, chunks, &in, &bm, 1);
    if (rc) die("mtmd_tokenize returned %d", rc);
    const int n_embd = llama_model_n_embd_inp(text);
    FILE *f = fopen(out, "wb");
    if (!f) die("cannot create %s: %s", out, strerror(errno));
    std::vector<size_t> tokens;
    for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
        const mtmd_input_chunk *c = mtmd_input_chunks_get(chunks, i);
        if (mtmd_input_chunk_get_type(c) != MTMD_INPUT_CHUNK_TYPE_AUDIO) continue;
        if (mtmd_encode_chunk(mc, c)) die("mtmd_encode_chunk failed on chunk %zu", i);
        const size_t n_tok = mtmd_input_chunk_get_n_tokens(c);
        const float *embd = mtmd_get_output_embd(mc);
        if (fwrite(embd, sizeof(float), n_tok * (size_t)n_embd, f) != n_tok * (size_t)n_embd) die("cannot write %s", out);
        tokens.push_back(n_tok);
    }
    if (fclose(f)) die("cannot write %s", out);
    if (tokens.empty()) die("mtmd_tokenize gave no audio chunk");
    printf("chunks %zu\n", tokens.size());
    for (size_t t : tokens) printf("tokens %zu\n", t);
    printf("n_embd %d\n", n_embd);

    if (out_mel) {
        const size_t n = mtmd_bitmap_get_n_bytes(bm) / sizeof(float);
        std::vector<mtmd_audio_mel> mels = mel_windows(argv[3], (const float *)mtmd_bitmap_get_data(bm), n);
        if (mels.size() != tokens.size()) die("%zu mel windows for %zu audio chunks", mels.size(), tokens.size());
        FILE *g = fopen(out_mel, "wb");
        if (!g) die("cannot create %s: %s", out_mel, strerror(errno));
        for (size_t w = 0; w < mels.size(); w++) {
            const mtmd_audio_mel &m = mels[w];
            if (m.data.size() != (size_t)m.n_mel * (size_t)m.n_len) die("a window is not n_mel x n_len floats");
            if ((size_t)(m.n_len / 100 * 13) != tokens[w])
                die("mel window %zu has %lld frames but its chunk %zu tokens", w, (long long)m.n_len, tokens[w]);
            if (fwrite(m.data.data(), sizeof(float), m.data.size(), g) != m.data.size()) die("cannot write %s", out_mel);
            printf("mel %lld %lld\n", (long long)m.n_len, (long long)m.n_len_org);
        }
        if (fclose(g)) die("cannot write %s", out_mel);
    }
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bm);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}
