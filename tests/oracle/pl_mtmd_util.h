/*
 * pl_mtmd_util.h -- what pl_mtmd's verbs (pl_mtmd.cpp and the audio ones,
 * pl_mtmd_audio*.cpp) share: llama.cpp / libmtmd set up on the CPU with
 * quiet logs, the text model and the mtmd context loaded or a one-line
 * failure, a media file read through libmtmd's helper, the parameters of
 * a weightless clip context (to reach a projector's preprocessor), the
 * bench verbs' options, and the timing helpers.  Include after oracle_util.h (it uses die()).
 */
#ifndef PL_MTMD_UTIL_H
#define PL_MTMD_UTIL_H

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "clip.h"
#include "llama.h"
#include "mtmd-helper.h"
#include "mtmd.h"

/* Quiet logs (errors only, unless PL_ORACLE_VERBOSE), then the backends. */
static inline void init_backends(void) {
    llama_log_set(quiet_log, nullptr);
    mtmd_log_set(quiet_log, nullptr);
    mtmd_helper_log_set(quiet_log, nullptr);
    llama_backend_init();
    load_backends();
}

static inline llama_model *load_text(const char *path) {
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model *m = llama_model_load_from_file(path, mp);
    if (!m) die("llama.cpp could not load the text model %s", path);
    return m;
}

static inline mtmd_context *load_mtmd(const char *mmproj, const llama_model *text, int threads, bool fa,
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

/* A media file (image or audio) as libmtmd's helper decodes it, or die. */
static inline mtmd_bitmap *load_media(mtmd_context *mc, const char *path) {
    mtmd_helper_bitmap_wrapper bw = mtmd_helper_bitmap_init_from_file(mc, path, false, mtmd_helper_init_opt_default());
    if (!bw.bitmap) die("libmtmd could not read the media file %s", path);
    return bw.bitmap;
}

/* A clip context of no weights (only hyperparameters and the
 * preprocessor's state) on the CPU, with these image token limits. */
static inline clip_context_params weightless_clip_params(int min_tokens = -1, int max_tokens = -1) {
    clip_context_params p = {};
    p.use_gpu = false;
    p.flash_attn_type = CLIP_FLASH_ATTN_TYPE_DISABLED;
    p.image_min_tokens = min_tokens;
    p.image_max_tokens = max_tokens;
    p.warmup = false;
    p.no_alloc = true;
    return p;
}

/* The bench verbs' options after TEXT MMPROJ MEDIA (argv[5] on): -t N
 * threads (at least 1), -r N rounds (1..1000), --fa on|off; die on others. */
static inline void bench_args(int argc, char **argv, int *threads, int *reps, bool *fa) {
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc) *threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) *reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fa") && i + 1 < argc) *fa = !strcmp(argv[++i], "on");
        else die("unknown argument '%s'", argv[i]);
    }
    if (*threads < 1) *threads = 1;
    if (*reps < 1 || *reps > 1000) die("-r wants 1..1000");
}

static inline double now_ms(void) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

#endif
