/*
 * inspect_audio.c -- the audio tower section of `pocketllm inspect` for an
 * mmproj with an audio encoder (Qwen3-ASR's qwen3a): the hyperparameters
 * from the clip.audio.* keys llama.cpp's converter writes
 * (tools/mtmd/clip-impl.h), and the tensor types of each group of a.* / mm.a.*
 * weights -- what `quantize` changed (llama-quantize's rule quantizes the
 * blocks, conv_out and the projector; the conv kernels stay f16, the
 * position table f32).  Needs no weights.
 */
#include "inspect_audio.h"

#include <inttypes.h>
#include <string.h>

int64_t inspect_key_i64(const pocketllm_gguf *g, const char *key) {
    const pocketllm_gguf_value *v = pocketllm_gguf_find(g, key);
    int64_t i;
    uint64_t u;
    if (v && pocketllm_gguf_value_i64(v, &i) == POCKETLLM_OK) return i;
    if (v && pocketllm_gguf_value_u64(v, &u) == POCKETLLM_OK && u <= INT64_MAX) return (int64_t)u;
    return -1;
}

bool inspect_has_audio(const pocketllm_gguf *g) { return inspect_key_i64(g, "clip.has_audio_encoder") > 0; }
bool inspect_has_vision(const pocketllm_gguf *g) { return inspect_key_i64(g, "clip.has_vision_encoder") > 0; }

/* Tensor groups, as a quantization rule sees them. */
enum { G_BLOCKS, G_CONV, G_CONV_OUT, G_POS, G_PROJ, G_OTHER, G_COUNT };
static const char *const group_names[G_COUNT] = {"blocks", "conv2d", "conv_out", "position_embd", "projector",
                                                 "norms+biases"};

/* The group of an audio tensor; -1 for one that is not the audio tower's. */
static int group_of(const char *name) {
    const size_t n = strlen(name);
    const bool weight = n >= 7 && strcmp(name + n - 7, ".weight") == 0;
    if (strncmp(name, "a.", 2) != 0 && strncmp(name, "mm.a.", 5) != 0) return -1;
    if (!weight) return G_OTHER;
    if (strncmp(name, "a.conv2d.", 9) == 0) return G_CONV;
    if (strncmp(name, "a.conv_out.", 11) == 0) return G_CONV_OUT;
    if (strncmp(name, "a.position_embd.", 16) == 0) return G_POS;
    if (strncmp(name, "mm.a.", 5) == 0) return G_PROJ;
    if (strncmp(name, "a.blk.", 6) == 0 && !strstr(name, ".ln")) return G_BLOCKS;
    return G_OTHER;
}

#define N_TYPES_MAX 64

static void count_groups(const pocketllm_gguf *g, uint32_t counts[G_COUNT][N_TYPES_MAX]) {
    memset(counts, 0, sizeof(uint32_t) * G_COUNT * N_TYPES_MAX);
    const uint64_t n_t = pocketllm_gguf_tensor_count(g);
    for (uint64_t i = 0; i < n_t; i++) {
        pocketllm_tensor_info t;
        if (pocketllm_gguf_tensor(g, i, &t) || t.type >= N_TYPES_MAX) continue;
        const int gi = group_of(t.name);
        if (gi >= 0) counts[gi][t.type]++;
    }
}

/* The sizes both outputs list, in order (-1: not in the file). */
enum { N_SIZES = 7 };
static const char *const size_keys[N_SIZES] = {"width", "blocks", "heads", "head_dim", "ff", "mel_bins",
                                               "projection_width"};
static void sizes_of(const pocketllm_gguf *g, int64_t v[N_SIZES]) {
    v[0] = inspect_key_i64(g, "clip.audio.embedding_length");
    v[1] = inspect_key_i64(g, "clip.audio.block_count");
    v[2] = inspect_key_i64(g, "clip.audio.attention.head_count");
    v[3] = v[2] > 0 && v[0] > 0 ? v[0] / v[2] : -1;
    v[4] = inspect_key_i64(g, "clip.audio.feed_forward_length");
    v[5] = inspect_key_i64(g, "clip.audio.num_mel_bins");
    v[6] = inspect_key_i64(g, "clip.audio.projection_dim");
}

static const char *projector_of(const pocketllm_gguf *g) {
    const char *p = pocketllm_gguf_value_str(pocketllm_gguf_find(g, "clip.audio.projector_type"), NULL);
    return p ? p : pocketllm_gguf_value_str(pocketllm_gguf_find(g, "clip.projector_type"), NULL);
}

static double eps_of(const pocketllm_gguf *g) {
    double e = -1;
    const pocketllm_gguf_value *v = pocketllm_gguf_find(g, "clip.audio.attention.layer_norm_epsilon");
    if (v) pocketllm_gguf_value_f64(v, &e);
    return e;
}

void inspect_audio_text(const pocketllm_gguf *g, FILE *f) {
    const char *proj = projector_of(g);
    fprintf(f, "audio tower:\n");
    fprintf(f, "  %-22s %s\n", "projector", proj ? proj : "(not in the file)");
    int64_t s[N_SIZES];
    sizes_of(g, s);
    for (int i = 0; i < N_SIZES; i++) {
        if (s[i] >= 0) fprintf(f, "  %-22s %" PRId64 "\n", size_keys[i], s[i]);
        else fprintf(f, "  %-22s (not in the file)\n", size_keys[i]);
    }
    const double eps = eps_of(g);
    if (eps >= 0) fprintf(f, "  %-22s %g\n", "eps", eps);
    uint32_t counts[G_COUNT][N_TYPES_MAX];
    count_groups(g, counts);
    const uint32_t n_types = pocketllm_type_count() < N_TYPES_MAX ? pocketllm_type_count() : N_TYPES_MAX;
    for (int gi = 0; gi < G_COUNT; gi++) {
        char label[40];
        snprintf(label, sizeof label, "types.%s", group_names[gi]);
        fprintf(f, "  %-22s", label);
        int any = 0;
        for (uint32_t t = 0; t < n_types; t++)
            if (counts[gi][t]) fprintf(f, "%s%s x%u", any++ ? ", " : " ", pocketllm_type_name(t), counts[gi][t]);
        fprintf(f, "%s\n", any ? "" : " (none)");
    }
}

cJSON *inspect_audio_json(const pocketllm_gguf *g) {
    cJSON *o = cJSON_CreateObject();
    const char *proj = projector_of(g);
    if (proj) cJSON_AddStringToObject(o, "projector", proj);
    else cJSON_AddNullToObject(o, "projector");
    int64_t s[N_SIZES];
    sizes_of(g, s);
    for (int i = 0; i < N_SIZES; i++) {
        if (s[i] >= 0) cJSON_AddNumberToObject(o, size_keys[i], (double)s[i]);
        else cJSON_AddNullToObject(o, size_keys[i]);
    }
    const double eps = eps_of(g);
    if (eps >= 0) cJSON_AddNumberToObject(o, "eps", eps);
    else cJSON_AddNullToObject(o, "eps");
    uint32_t counts[G_COUNT][N_TYPES_MAX];
    count_groups(g, counts);
    const uint32_t n_types = pocketllm_type_count() < N_TYPES_MAX ? pocketllm_type_count() : N_TYPES_MAX;
    cJSON *types = cJSON_AddObjectToObject(o, "types");
    for (int gi = 0; gi < G_COUNT; gi++) {
        cJSON *e = cJSON_AddObjectToObject(types, group_names[gi]);
        for (uint32_t t = 0; t < n_types; t++)
            if (counts[gi][t]) cJSON_AddNumberToObject(e, pocketllm_type_name(t), counts[gi][t]);
    }
    return o;
}
