/*
 * pl_mtmd.cpp -- llama.cpp's multimodal library (libmtmd) as the reference
 * for the vision path, inside the test suite.
 *
 * Linked against libmtmd.a, which scripts/install-mtmd.sh compiles from the
 * llama.cpp v0.4.0 source bundle, and the prebuilt libllama/libggml of the
 * same release (scripts/install-oracle.sh).  Never shipped with PocketLLM.
 * C++ only because the `info` verb asks libmtmd's internal clip_* functions
 * (C++ declarations) what it read from the file, and `preprocess` runs its
 * internal image preprocessor (mtmd-image.h); `encode` uses the public C
 * API (mtmd.h, mtmd-helper.h) alone.
 *
 *   pl_mtmd info TEXT.gguf MMPROJ.gguf
 *       loads the pair with mtmd_init_from_file, then prints one
 *       "key value" a line: projector, vision, audio, mrope, n_embd (the
 *       vision width), n_layer, n_head, n_ff, image_size, patch_size,
 *       n_merge, projection_dim, mmproj_embd (the width of an output
 *       embedding: the projection and DeepStack features together),
 *       n_deepstack, image_min_pixels, image_max_pixels, text_n_embd_inp.
 *       For an audio-only mmproj (Qwen3-ASR) the keys come from its audio
 *       encoder, without the image ones, plus n_mel_bins, ffn_op,
 *       audio_sample_rate, audio_n_fft, audio_window_len, audio_hop_len,
 *       audio_chunk_len.
 *   pl_mtmd encode TEXT.gguf MMPROJ.gguf IMAGE --out FILE [-t N] [--fa on|off]
 *       tokenizes "<marker>\n" with one image (mtmd_tokenize), encodes the
 *       image chunk (mtmd_encode_chunk), writes its output embeddings as
 *       raw f32 (n_tokens rows of n_embd) to FILE and prints "n_tokens N",
 *       "nx X", "ny Y", "n_pos P", "n_embd E", "chunks C".
 *   pl_mtmd preprocess TEXT.gguf MMPROJ.gguf IMAGE --out-rgb RGB_FILE --out FILE
 *               [--min-tokens N] [--max-tokens N]
 *       decodes IMAGE as libmtmd does (mtmd_helper_bitmap_init_from_file:
 *       stb_image, 3 channels) and writes the bitmap as raw RGB8 to
 *       RGB_FILE; runs the image preprocessor libmtmd picks for the
 *       projector (mtmd_image_preprocessor_dyn_size for Qwen2/2.5/3-VL,
 *       on a clip context loaded without weights, with the same token
 *       limits) and writes its one f32 image -- interleaved RGB floats, the
 *       clip_image_f32 the tower takes -- to FILE.  Prints "width W",
 *       "height H" (the decoded image), "nx X", "ny Y" (the preprocessed
 *       one, pixels), "min_pixels", "max_pixels", and "n_tokens",
 *       "tokens_nx", "tokens_ny" from mtmd_tokenize of the same bitmap in
 *       the full context (n_tokens must be nx / 32 x ny / 32; the grid is
 *       that only for an M-RoPE text model, n_tokens x 1 otherwise).
 *       The token limits go to both contexts as --image-min-tokens /
 *       --image-max-tokens do in llama.cpp's CLI (0: the model's).
 *   pl_mtmd generate TEXT.gguf MMPROJ.gguf --prompt P --image F [--image F2 ...]
 *               -n N [--fa on|off] [--kv f16|f32] [-t N] [--batch N]
 *               [--min-tokens N] [--max-tokens N] [--out-logits FILE]
 *       greedy decoding of a prompt with images as llama.cpp's mtmd-cli
 *       runs it without a chat template: a prompt without a media marker
 *       gets one per image in front; mtmd_tokenize (add_special,
 *       parse_special), mtmd_helper_eval_chunks (n_batch --batch, 512),
 *       then one token at a time, stopping after N or at an
 *       end-of-generation id.  Prints "prompt ID ..." (each image token as
 *       -1), "ids ID ..." (the greedy ids), "margins M ..." (per step the
 *       top-1 minus top-2 logit the id was chosen from) and "ranges R ..."
 *       (per step the largest minus the smallest logit); --out-logits
 *       writes each step's logits (one row of n_vocab f32 per id).
 *   pl_mtmd bench TEXT.gguf MMPROJ.gguf IMAGE [-t N] [-r N] [--fa on|off]
 *       times the image path as `pocketllm bench --mmproj` times ours:
 *       after one untimed round, N rounds (default 5) of mtmd_tokenize
 *       (which preprocesses the bitmap) and mtmd_encode_chunk (the tower)
 *       on the one image, each timed; prints one JSON line: n_tokens, the
 *       preprocessed nx/ny, prep_ms and encode_ms (medians),
 *       encode_runs_ms.  Never used by a pass/fail test.
 *   pl_mtmd audio-mel TEXT.gguf MMPROJ.gguf AUDIO --out FILE [--out-pcm F]
 *       libmtmd's audio decoding and qwen3a log-mel windows
 *       (pl_mtmd_audio.cpp, which documents it).
 *   pl_mtmd audio-bench TEXT.gguf MMPROJ.gguf AUDIO [-t N] [-r N] [--fa on|off]
 *       times file -> embeddings as `pocketllm bench --audio` times ours
 *       (pl_mtmd_audio_bench.cpp, which documents it).
 *
 * Flash attention defaults to off (pinned, printed on stderr); warmup is
 * off.  Logs go to stderr at error level, all of them with
 * PL_ORACLE_VERBOSE=1.
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "clip-impl.h"
#include "clip-model.h"
#include "clip.h"
#include "llama.h"
#include "mtmd-helper.h"
#include "mtmd-image.h"
#include "mtmd.h"

#define PL_ORACLE_PROG "pl_mtmd"
#include "oracle_util.h"
#include "pl_mtmd_util.h"

/* PROMPT (one media marker) with one image, tokenized; *img is the image's
 * chunk (free the chunks with mtmd_input_chunks_free). */
static mtmd_input_chunks *tokenize_image(mtmd_context *mc, const std::string &prompt, const mtmd_bitmap *bm,
                                         const mtmd_input_chunk **img) {
    mtmd_input_text in = {prompt.c_str(), prompt.size(), true, true};
    mtmd_input_chunks *chunks = mtmd_input_chunks_init();
    int32_t rc = mtmd_tokenize(mc, chunks, &in, &bm, 1);
    if (rc) die("mtmd_tokenize returned %d", rc);
    *img = nullptr;
    for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
        const mtmd_input_chunk *c = mtmd_input_chunks_get(chunks, i);
        if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_IMAGE) {
            if (*img) die("more than one image chunk");
            *img = c;
        }
    }
    if (!*img) die("mtmd_tokenize gave no image chunk");
    return chunks;
}

static int cmd_info(int argc, char **argv) {
    if (argc != 4) die("usage: pl_mtmd info TEXT.gguf MMPROJ.gguf");
    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, 1, false);
    /* what the clip loader made of the file: a second, weightless load */
    clip_init_result r = clip_init(argv[3], weightless_clip_params());
    /* an audio-only mmproj (Qwen3-ASR): the same keys from its audio encoder, no image ones */
    clip_ctx *cc = r.ctx_v ? r.ctx_v : r.ctx_a;
    if (!cc) die("clip_init found no vision or audio encoder in %s", argv[3]);
    const clip_hparams *h = clip_get_hparams(cc);
    projector_type pt = clip_get_projector_type(cc);
    auto it = PROJECTOR_TYPE_NAMES.find(pt);
    int mm_embd = clip_n_mmproj_embd(cc);
    printf("projector %s\n", it == PROJECTOR_TYPE_NAMES.end() ? "unknown" : it->second.c_str());
    printf("vision %d\naudio %d\nmrope %d\n", mtmd_support_vision(mc), mtmd_support_audio(mc), mtmd_decode_use_mrope(mc));
    printf("n_embd %d\nn_layer %d\nn_head %d\nn_ff %d\n", h->n_embd, h->n_layer, h->n_head, h->n_ff);
    if (r.ctx_v) printf("image_size %d\npatch_size %d\nn_merge %d\n", h->image_size, h->patch_size, h->n_merge);
    printf("projection_dim %d\nmmproj_embd %d\n", h->projection_dim, mm_embd);
    if (r.ctx_v) {
        printf("n_deepstack %d\n", h->projection_dim > 0 ? mm_embd / h->projection_dim - 1 : -1);
        printf("image_min_pixels %d\nimage_max_pixels %d\n", h->image_min_pixels, h->image_max_pixels);
        printf("image_mean %g %g %g\nimage_std %g %g %g\n", h->image_mean[0], h->image_mean[1], h->image_mean[2],
               h->image_std[0], h->image_std[1], h->image_std[2]);
    } else {
        printf("n_mel_bins %d\nffn_op %s\n", h->n_mel_bins, h->ffn_op == FFN_GELU_ERF ? "gelu_erf" : "other");
        printf("audio_sample_rate %d\naudio_n_fft %d\naudio_window_len %d\naudio_hop_len %d\naudio_chunk_len %d\n",
               h->audio_sample_rate, h->audio_n_fft, h->audio_window_len, h->audio_hop_len, h->audio_chunk_len);
    }
    printf("eps %g\n", h->eps);
    printf("text_n_embd_inp %d\n", llama_model_n_embd_inp(text));
    if (r.ctx_v) clip_free(r.ctx_v);
    if (r.ctx_a) clip_free(r.ctx_a);
    if (r.ctx_gen_a) clip_free(r.ctx_gen_a);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}

static int cmd_encode(int argc, char **argv) {
    if (argc < 5) die("usage: pl_mtmd encode TEXT.gguf MMPROJ.gguf IMAGE --out FILE [-t N] [--fa on|off]");
    const char *out = nullptr;
    int threads = 2;
    bool fa = false;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fa") && i + 1 < argc) fa = !strcmp(argv[++i], "on");
        else die("unknown argument '%s'", argv[i]);
    }
    if (!out) die("encode needs --out FILE");
    if (threads < 1) threads = 1;
    fprintf(stderr, "pl_mtmd: flash attention %s, %d threads\n", fa ? "on" : "off", threads);
    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, threads, fa);
    mtmd_bitmap *bm = load_media(mc, argv[4]);
    const mtmd_input_chunk *img;
    mtmd_input_chunks *chunks = tokenize_image(mc, std::string(mtmd_default_marker()) + "\n", bm, &img);
    const size_t n_chunks = mtmd_input_chunks_size(chunks);
    if (mtmd_encode_chunk(mc, img)) die("mtmd_encode_chunk failed");
    const float *embd = mtmd_get_output_embd(mc);
    size_t n_tok = mtmd_input_chunk_get_n_tokens(img);
    int n_embd = llama_model_n_embd_inp(text);
    const mtmd_image_tokens *it = mtmd_input_chunk_get_tokens_image(img);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    size_t nx = mtmd_image_tokens_get_nx(it), ny = mtmd_image_tokens_get_ny(it);
#pragma GCC diagnostic pop
    FILE *f = fopen(out, "wb");
    if (!f) die("cannot create %s: %s", out, strerror(errno));
    if (fwrite(embd, sizeof(float), n_tok * (size_t)n_embd, f) != n_tok * (size_t)n_embd || fclose(f))
        die("cannot write %s", out);
    printf("n_tokens %zu\nnx %zu\nny %zu\nn_pos %d\nn_embd %d\nchunks %zu\n", n_tok, nx, ny,
           (int)mtmd_input_chunk_get_n_pos(img), n_embd, n_chunks);
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bm);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}

static void write_file(const char *path, const void *data, size_t bytes) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot create %s: %s", path, strerror(errno));
    if (fwrite(data, 1, bytes, f) != bytes || fclose(f)) die("cannot write %s", path);
}

static int cmd_preprocess(int argc, char **argv) {
    if (argc < 5)
        die("usage: pl_mtmd preprocess TEXT.gguf MMPROJ.gguf IMAGE --out-rgb RGB_FILE --out FILE "
            "[--min-tokens N] [--max-tokens N]");
    const char *out = nullptr, *out_rgb = nullptr;
    int min_tokens = -1, max_tokens = -1;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--out-rgb") && i + 1 < argc) out_rgb = argv[++i];
        else if (!strcmp(argv[i], "--min-tokens") && i + 1 < argc) min_tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-tokens") && i + 1 < argc) max_tokens = atoi(argv[++i]);
        else die("unknown argument '%s'", argv[i]);
    }
    if (!out || !out_rgb) die("preprocess needs --out-rgb RGB_FILE and --out FILE");
    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, 1, false, min_tokens, max_tokens);
    /* the image as libmtmd decodes it */
    mtmd_bitmap *bm = load_media(mc, argv[4]);
    const uint32_t w = mtmd_bitmap_get_nx(bm), h = mtmd_bitmap_get_ny(bm);
    const unsigned char *data = mtmd_bitmap_get_data(bm);
    if (mtmd_bitmap_get_n_bytes(bm) != (size_t)w * h * 3) die("the bitmap is not %ux%u RGB8", w, h);
    write_file(out_rgb, data, (size_t)w * h * 3);
    /* the merged-token grid mtmd_tokenize gives it with these limits */
    const mtmd_input_chunk *img_chunk;
    mtmd_input_chunks *chunks = tokenize_image(mc, std::string(mtmd_default_marker()), bm, &img_chunk);
    const mtmd_image_tokens *it = mtmd_input_chunk_get_tokens_image(img_chunk);
    const size_t n_tok = mtmd_input_chunk_get_n_tokens(img_chunk);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const size_t tok_nx = mtmd_image_tokens_get_nx(it), tok_ny = mtmd_image_tokens_get_ny(it);
#pragma GCC diagnostic pop
    /* the preprocessor mtmd_init_from_file picks for the Qwen-VL projectors,
     * on a weightless clip context with the same limits */
    clip_init_result r = clip_init(argv[3], weightless_clip_params(min_tokens, max_tokens));
    if (!r.ctx_v) die("clip_init found no vision encoder in %s", argv[3]);
    projector_type pt = clip_get_projector_type(r.ctx_v);
    if (pt != PROJECTOR_TYPE_QWEN2VL && pt != PROJECTOR_TYPE_QWEN25VL && pt != PROJECTOR_TYPE_QWEN3VL)
        die("preprocess knows the Qwen-VL projectors only (dyn_size preprocessor); %s has another", argv[3]);
    const clip_hparams *hp = clip_get_hparams(r.ctx_v);
    mtmd_image_preprocessor_dyn_size prep(r.ctx_v);
    clip_image_u8 img;
    img.set_size({(int)w, (int)h}, false);
    img.cpy_buf(std::vector<uint8_t>(data, data + (size_t)w * h * 3));
    mtmd_image_preproc_out po = prep.preprocess(img);
    if (po.entries.size() != 1) die("the preprocessor gave %zu images, not one", po.entries.size());
    const clip_image_f32 &f = po.entries[0];
    const std::vector<float> &buf = f.get_ro_buf();
    if (buf.size() != (size_t)f.nx() * f.ny() * 3) die("the preprocessed image is not %dx%d x 3 floats", f.nx(), f.ny());
    write_file(out, buf.data(), buf.size() * sizeof(float));
    printf("width %u\nheight %u\nnx %d\nny %d\nmin_pixels %d\nmax_pixels %d\nn_tokens %zu\ntokens_nx %zu\ntokens_ny %zu\n",
           w, h, f.nx(), f.ny(), hp->image_min_pixels, hp->image_max_pixels, n_tok, tok_nx, tok_ny);
    clip_free(r.ctx_v);
    if (r.ctx_a) clip_free(r.ctx_a);
    if (r.ctx_gen_a) clip_free(r.ctx_gen_a);
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bm);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}

static int cmd_generate(int argc, char **argv) {
    if (argc < 4)
        die("usage: pl_mtmd generate TEXT.gguf MMPROJ.gguf --prompt P --image F|--audio F [...] -n N [--fa on|off] "
            "[--kv f16|f32] [-t N] [--batch N] [--min-tokens N] [--max-tokens N]");
    const char *prompt = nullptr, *out_logits = nullptr;
    std::vector<const char *> images;
    int n_predict = 16, threads = 1, batch = 512, min_tokens = -1, max_tokens = -1;
    bool fa = false;
    ggml_type kv = GGML_TYPE_F16;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--prompt") && i + 1 < argc) prompt = argv[++i];
        else if (!strcmp(argv[i], "--image") && i + 1 < argc) images.push_back(argv[++i]);
        /* an audio clip is a media file like an image (mtmd_helper_bitmap_init_from_file
         * tells them apart); both kinds take the markers in the order given */
        else if (!strcmp(argv[i], "--audio") && i + 1 < argc) images.push_back(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) n_predict = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fa") && i + 1 < argc) fa = !strcmp(argv[++i], "on");
        else if (!strcmp(argv[i], "--kv") && i + 1 < argc) kv = !strcmp(argv[++i], "f32") ? GGML_TYPE_F32 : GGML_TYPE_F16;
        else if (!strcmp(argv[i], "--min-tokens") && i + 1 < argc) min_tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-tokens") && i + 1 < argc) max_tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out-logits") && i + 1 < argc) out_logits = argv[++i];
        else die("unknown argument '%s'", argv[i]);
    }
    if (!prompt) die("generate needs --prompt P");
    FILE *lf = out_logits ? fopen(out_logits, "wb") : nullptr;
    if (out_logits && !lf) die("cannot create %s: %s", out_logits, strerror(errno));
    if (threads < 1) threads = 1;
    if (batch < 1) batch = 1;
    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, threads, fa, min_tokens, max_tokens);
    std::vector<mtmd_bitmap *> bms;
    for (const char *f : images) bms.push_back(load_media(mc, f));
    /* mtmd-cli's rule for a single-turn prompt without markers */
    std::string p = prompt;
    if (p.find(mtmd_default_marker()) == std::string::npos)
        for (size_t i = 0; i < images.size(); i++) p = std::string(mtmd_default_marker()) + p;
    mtmd_input_text in = {p.c_str(), p.size(), true, true};
    mtmd_input_chunks *chunks = mtmd_input_chunks_init();
    std::vector<const mtmd_bitmap *> cbms(bms.begin(), bms.end());
    int32_t rc = mtmd_tokenize(mc, chunks, &in, cbms.data(), cbms.size());
    if (rc) die("mtmd_tokenize returned %d", rc);
    printf("prompt");
    size_t n_prompt = 0;
    for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
        const mtmd_input_chunk *c = mtmd_input_chunks_get(chunks, i);
        if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
            size_t n;
            const llama_token *t = mtmd_input_chunk_get_tokens_text(c, &n);
            for (size_t j = 0; j < n; j++) printf(" %d", t[j]);
            n_prompt += n;
        } else {
            size_t n = mtmd_input_chunk_get_n_tokens(c);
            for (size_t j = 0; j < n; j++) printf(" -1");
            n_prompt += n;
        }
    }
    printf("\n");
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(n_prompt + (size_t)n_predict + 8);
    cp.n_batch = (uint32_t)batch;
    cp.n_ubatch = (uint32_t)batch;
    cp.n_seq_max = 1;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = kv;
    cp.type_v = kv;
    cp.no_perf = true;
    llama_context *lc = llama_init_from_model(text, cp);
    if (!lc) die("llama.cpp cannot make a context of %u", cp.n_ctx);
    fprintf(stderr, "pl_mtmd: generate, flash attention %s, kv %s, %d threads, n_batch %d, %zu images\n",
            fa ? "on" : "off", ggml_type_name(kv), threads, batch, images.size());
    llama_pos n_past = 0;
    if (mtmd_helper_eval_chunks(mc, lc, chunks, 0, 0, batch, true, &n_past)) die("mtmd_helper_eval_chunks failed");
    const llama_vocab *v = llama_model_get_vocab(text);
    const int nv = llama_vocab_n_tokens(v);
    std::vector<int> ids;
    std::vector<double> margins, ranges;
    for (int k = 0; k < n_predict; k++) {
        const float *lg = llama_get_logits_ith(lc, -1);
        if (lf && fwrite(lg, sizeof(float), (size_t)nv, lf) != (size_t)nv) die("cannot write %s", out_logits);
        int best = 0;
        for (int j = 1; j < nv; j++)
            if (lg[j] > lg[best]) best = j;
        float second = -INFINITY, lo = lg[0], hi = lg[0];
        for (int j = 0; j < nv; j++) {
            if (j != best && lg[j] > second) second = lg[j];
            if (lg[j] < lo) lo = lg[j];
            if (lg[j] > hi) hi = lg[j];
        }
        ids.push_back(best);
        margins.push_back((double)lg[best] - (double)second);
        ranges.push_back((double)hi - (double)lo);
        if (llama_vocab_is_eog(v, best)) break;
        llama_token next = best;
        llama_batch b = llama_batch_init(1, 0, 1);
        b.n_tokens = 1;
        b.token[0] = next;
        b.pos[0] = n_past++;
        b.n_seq_id[0] = 1;
        b.seq_id[0][0] = 0;
        b.logits[0] = 1;
        int r = llama_decode(lc, b);
        llama_batch_free(b);
        if (r) die("llama_decode failed (%d)", r);
    }
    printf("ids");
    for (int id : ids) printf(" %d", id);
    printf("\nmargins");
    for (double m : margins) printf(" %.6g", m);
    printf("\nranges");
    for (double r : ranges) printf(" %.6g", r);
    printf("\n");
    if (lf && fclose(lf)) die("cannot write %s", out_logits);
    llama_free(lc);
    mtmd_input_chunks_free(chunks);
    for (mtmd_bitmap *b : bms) mtmd_bitmap_free(b);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}

static int cmd_bench(int argc, char **argv) {
    if (argc < 5) die("usage: pl_mtmd bench TEXT.gguf MMPROJ.gguf IMAGE [-t N] [-r N] [--fa on|off]");
    int threads = 2, reps = 5;
    bool fa = false;
    bench_args(argc, argv, &threads, &reps, &fa);
    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, threads, fa);
    mtmd_bitmap *bm = load_media(mc, argv[4]);
    const std::string prompt = std::string(mtmd_default_marker()) + "\n";
    std::vector<double> prep, enc;
    size_t n_tok = 0, nx = 0, ny = 0;
    for (int r = -1; r < reps; r++) {
        const mtmd_input_chunk *img;
        const double t0 = now_ms();
        mtmd_input_chunks *chunks = tokenize_image(mc, prompt, bm, &img);
        const double t1 = now_ms();
        if (mtmd_encode_chunk(mc, img)) die("mtmd_encode_chunk failed");
        const double t2 = now_ms();
        n_tok = mtmd_input_chunk_get_n_tokens(img);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        nx = mtmd_image_tokens_get_nx(mtmd_input_chunk_get_tokens_image(img));
        ny = mtmd_image_tokens_get_ny(mtmd_input_chunk_get_tokens_image(img));
#pragma GCC diagnostic pop
        if (r >= 0) {
            prep.push_back(t1 - t0);
            enc.push_back(t2 - t1);
        }
        mtmd_input_chunks_free(chunks);
    }
    printf("{\"engine\": \"libmtmd\", \"threads\": %d, \"flash_attn\": %s, \"n_tokens\": %zu, \"nx\": %zu, "
           "\"ny\": %zu, \"prep_ms\": %.4f, \"encode_ms\": %.4f, \"encode_runs_ms\": [",
           threads, fa ? "true" : "false", n_tok, nx, ny, median(prep), median(enc));
    for (size_t i = 0; i < enc.size(); i++) printf("%s%.4f", i ? ", " : "", enc[i]);
    printf("]}\n");
    mtmd_bitmap_free(bm);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}

int pl_mtmd_audio_mel(int argc, char **argv); /* pl_mtmd_audio.cpp */
int pl_mtmd_audio_encode(int argc, char **argv); /* pl_mtmd_audio_encode.cpp */
int pl_mtmd_audio_bench(int argc, char **argv); /* pl_mtmd_audio_bench.cpp */

int main(int argc, char **argv) {
    if (argc < 2) die("usage: pl_mtmd info|encode|preprocess|generate ...");
    if (!strcmp(argv[1], "generate")) return cmd_generate(argc, argv);
    if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
    if (!strcmp(argv[1], "encode")) return cmd_encode(argc, argv);
    if (!strcmp(argv[1], "preprocess")) return cmd_preprocess(argc, argv);
    if (!strcmp(argv[1], "bench")) return cmd_bench(argc, argv);
    if (!strcmp(argv[1], "audio-mel")) return pl_mtmd_audio_mel(argc, argv);
    if (!strcmp(argv[1], "audio-encode")) return pl_mtmd_audio_encode(argc, argv);
    if (!strcmp(argv[1], "audio-bench")) return pl_mtmd_audio_bench(argc, argv);
    die("unknown verb '%s' (info, encode, preprocess, generate, bench)", argv[1]);
}
