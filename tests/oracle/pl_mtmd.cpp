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
 *
 * Flash attention defaults to off (pinned, printed on stderr); warmup is
 * off.  Logs go to stderr at error level, all of them with
 * PL_ORACLE_VERBOSE=1.
 */
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

static void init_backends(void) {
    llama_log_set(quiet_log, nullptr);
    mtmd_log_set(quiet_log, nullptr);
    mtmd_helper_log_set(quiet_log, nullptr);
    llama_backend_init();
    load_backends();
}

static llama_model *load_text(const char *path) {
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model *m = llama_model_load_from_file(path, mp);
    if (!m) die("llama.cpp could not load the text model %s", path);
    return m;
}

static mtmd_context *load_mtmd(const char *mmproj, const llama_model *text, int threads, bool fa,
                               int min_tokens = -1, int max_tokens = -1) {
    mtmd_context_params cp = mtmd_context_params_default();
    if (min_tokens > 0) cp.image_min_tokens = min_tokens;
    if (max_tokens > 0) cp.image_max_tokens = max_tokens;
    cp.use_gpu = false;
    cp.print_timings = false;
    cp.n_threads = threads;
    cp.warmup = false;
    cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    mtmd_context *c = mtmd_init_from_file(mmproj, text, cp);
    if (!c) die("libmtmd could not load %s with the text model (mtmd_init_from_file failed; PL_ORACLE_VERBOSE=1 shows why)", mmproj);
    return c;
}

static int cmd_info(int argc, char **argv) {
    if (argc != 4) die("usage: pl_mtmd info TEXT.gguf MMPROJ.gguf");
    init_backends();
    llama_model *text = load_text(argv[2]);
    mtmd_context *mc = load_mtmd(argv[3], text, 1, false);
    /* what the clip loader made of the file: a second, weightless load */
    clip_context_params p = {};
    p.use_gpu = false;
    p.flash_attn_type = CLIP_FLASH_ATTN_TYPE_DISABLED;
    p.image_min_tokens = -1;
    p.image_max_tokens = -1;
    p.warmup = false;
    p.no_alloc = true;
    clip_init_result r = clip_init(argv[3], p);
    if (!r.ctx_v) die("clip_init found no vision encoder in %s", argv[3]);
    const clip_hparams *h = clip_get_hparams(r.ctx_v);
    projector_type pt = clip_get_projector_type(r.ctx_v);
    auto it = PROJECTOR_TYPE_NAMES.find(pt);
    int mm_embd = clip_n_mmproj_embd(r.ctx_v);
    printf("projector %s\n", it == PROJECTOR_TYPE_NAMES.end() ? "unknown" : it->second.c_str());
    printf("vision %d\naudio %d\nmrope %d\n", mtmd_support_vision(mc), mtmd_support_audio(mc), mtmd_decode_use_mrope(mc));
    printf("n_embd %d\nn_layer %d\nn_head %d\nn_ff %d\n", h->n_embd, h->n_layer, h->n_head, h->n_ff);
    printf("image_size %d\npatch_size %d\nn_merge %d\n", h->image_size, h->patch_size, h->n_merge);
    printf("projection_dim %d\nmmproj_embd %d\n", h->projection_dim, mm_embd);
    printf("n_deepstack %d\n", h->projection_dim > 0 ? mm_embd / h->projection_dim - 1 : -1);
    printf("image_min_pixels %d\nimage_max_pixels %d\n", h->image_min_pixels, h->image_max_pixels);
    printf("image_mean %g %g %g\nimage_std %g %g %g\n", h->image_mean[0], h->image_mean[1], h->image_mean[2],
           h->image_std[0], h->image_std[1], h->image_std[2]);
    printf("eps %g\n", h->eps);
    printf("text_n_embd_inp %d\n", llama_model_n_embd_inp(text));
    clip_free(r.ctx_v);
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
    mtmd_helper_bitmap_wrapper bw = mtmd_helper_bitmap_init_from_file(mc, argv[4], false, mtmd_helper_init_opt_default());
    if (!bw.bitmap) die("libmtmd could not read the image %s", argv[4]);
    std::string prompt = std::string(mtmd_default_marker()) + "\n";
    mtmd_input_text in = {prompt.c_str(), prompt.size(), true, true};
    mtmd_input_chunks *chunks = mtmd_input_chunks_init();
    const mtmd_bitmap *bm = bw.bitmap;
    int32_t rc = mtmd_tokenize(mc, chunks, &in, &bm, 1);
    if (rc) die("mtmd_tokenize returned %d", rc);
    const mtmd_input_chunk *img = nullptr;
    size_t n_chunks = mtmd_input_chunks_size(chunks);
    for (size_t i = 0; i < n_chunks; i++) {
        const mtmd_input_chunk *c = mtmd_input_chunks_get(chunks, i);
        if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_IMAGE) {
            if (img) die("more than one image chunk");
            img = c;
        }
    }
    if (!img) die("mtmd_tokenize gave no image chunk");
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
    mtmd_bitmap_free(bw.bitmap);
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
    mtmd_helper_bitmap_wrapper bw = mtmd_helper_bitmap_init_from_file(mc, argv[4], false, mtmd_helper_init_opt_default());
    if (!bw.bitmap) die("libmtmd could not read the image %s", argv[4]);
    const uint32_t w = mtmd_bitmap_get_nx(bw.bitmap), h = mtmd_bitmap_get_ny(bw.bitmap);
    const unsigned char *data = mtmd_bitmap_get_data(bw.bitmap);
    if (mtmd_bitmap_get_n_bytes(bw.bitmap) != (size_t)w * h * 3) die("the bitmap is not %ux%u RGB8", w, h);
    write_file(out_rgb, data, (size_t)w * h * 3);
    /* the merged-token grid mtmd_tokenize gives it with these limits */
    std::string prompt = std::string(mtmd_default_marker());
    mtmd_input_text in = {prompt.c_str(), prompt.size(), true, true};
    mtmd_input_chunks *chunks = mtmd_input_chunks_init();
    const mtmd_bitmap *bm = bw.bitmap;
    int32_t rc = mtmd_tokenize(mc, chunks, &in, &bm, 1);
    if (rc) die("mtmd_tokenize returned %d", rc);
    size_t tok_nx = 0, tok_ny = 0, n_tok = 0;
    for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
        const mtmd_input_chunk *c = mtmd_input_chunks_get(chunks, i);
        if (mtmd_input_chunk_get_type(c) != MTMD_INPUT_CHUNK_TYPE_IMAGE) continue;
        const mtmd_image_tokens *it = mtmd_input_chunk_get_tokens_image(c);
        n_tok = mtmd_input_chunk_get_n_tokens(c);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        tok_nx = mtmd_image_tokens_get_nx(it);
        tok_ny = mtmd_image_tokens_get_ny(it);
#pragma GCC diagnostic pop
    }
    /* the preprocessor mtmd_init_from_file picks for the Qwen-VL projectors,
     * on a weightless clip context with the same limits */
    clip_context_params p = {};
    p.use_gpu = false;
    p.flash_attn_type = CLIP_FLASH_ATTN_TYPE_DISABLED;
    p.image_min_tokens = min_tokens;
    p.image_max_tokens = max_tokens;
    p.warmup = false;
    p.no_alloc = true;
    clip_init_result r = clip_init(argv[3], p);
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
    mtmd_bitmap_free(bw.bitmap);
    mtmd_free(mc);
    llama_model_free(text);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: pl_mtmd info|encode|preprocess ...");
    if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
    if (!strcmp(argv[1], "encode")) return cmd_encode(argc, argv);
    if (!strcmp(argv[1], "preprocess")) return cmd_preprocess(argc, argv);
    die("unknown verb '%s' (info, encode, preprocess)", argv[1]);
}
