/*
 * pl_mtmd.cpp -- llama.cpp's multimodal library (libmtmd) as the reference
 * for the vision path, inside the test suite.
 *
 * Linked against libmtmd.a, which scripts/install-mtmd.sh compiles from the
 * llama.cpp v0.4.0 source bundle, and the prebuilt libllama/libggml of the
 * same release (scripts/install-oracle.sh).  Never shipped with PocketLLM.
 * C++ only because the `info` verb asks libmtmd's internal clip_* functions
 * (C++ declarations) what it read from the file; `encode` uses the public C
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
#include "mtmd.h"

#define PL_ORACLE_PROG "pl_mtmd"
#include "oracle_util.h"

static void init_backends(void) {
    llama_log_set(quiet_log, nullptr);
    mtmd_log_set(quiet_log, nullptr);
    mtmd_helper_log_set(quiet_log, nullptr);
    llama_backend_init();
    const char *dir = getenv("PL_ORACLE_LIBDIR");
#ifdef PL_ORACLE_LIBDIR_DEFAULT
    if (!dir) dir = PL_ORACLE_LIBDIR_DEFAULT;
#endif
    if (!dir) die("PL_ORACLE_LIBDIR is not set");
    ggml_backend_load_all_from_path(dir);
}

static llama_model *load_text(const char *path) {
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model *m = llama_model_load_from_file(path, mp);
    if (!m) die("llama.cpp could not load the text model %s", path);
    return m;
}

static mtmd_context *load_mtmd(const char *mmproj, const llama_model *text, int threads, bool fa) {
    mtmd_context_params cp = mtmd_context_params_default();
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

int main(int argc, char **argv) {
    if (argc < 2) die("usage: pl_mtmd info|encode ...");
    if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
    if (!strcmp(argv[1], "encode")) return cmd_encode(argc, argv);
    die("unknown verb '%s' (info, encode)", argv[1]);
}
