/*
 * inspect_mmproj.c -- the vision tower section of `pocketllm inspect` for an
 * mmproj file (general.architecture "clip"): the hyperparameters a user
 * asks about (projector, width, depth, heads, patch and merge, DeepStack
 * taps, normalisation) read from the GGUF keys llama.cpp's converter
 * writes (tools/mtmd/clip-impl.h), and which tensor types each group of
 * weights has -- what `quantize` changed.  Needs no weights.
 */
#include "inspect_mmproj.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "inspect_audio.h"

#define MAX_DEEPSTACK 64

typedef struct mmproj_info {
    const char *projector;
    int64_t n_embd, n_layer, n_head, head_dim, n_ff, patch, merge, image_size, proj_dim;
    double eps;
    double mean[3], std[3];
    int has_mean, has_std;
    int32_t deepstack[MAX_DEEPSTACK];
    int n_deepstack;
} mmproj_info;

/* Tensor groups, as a quantization rule sees them. */
enum { G_BLOCKS, G_DEEPSTACK, G_MERGER, G_PATCH, G_POS, G_OTHER, G_COUNT };
static const char *const group_names[G_COUNT] = {"blocks", "deepstack", "merger", "patch_embd", "position_embd",
                                                 "norms+biases"};

static int key_f64_array3(const pocketllm_gguf *g, const char *key, double out[3]) {
    const pocketllm_gguf_value *v = pocketllm_gguf_find(g, key);
    if (!v || pocketllm_gguf_value_type(v) != POCKETLLM_GGUF_ARRAY || pocketllm_gguf_array_len(v) != 3) return 0;
    for (uint64_t i = 0; i < 3; i++)
        if (pocketllm_gguf_value_f64(pocketllm_gguf_array_get(v, i), &out[i]) != POCKETLLM_OK) return 0;
    return 1;
}

static void read_info(const pocketllm_gguf *g, mmproj_info *m) {
    memset(m, 0, sizeof *m);
    /* a file with several modalities names the vision projector apart */
    m->projector = pocketllm_gguf_value_str(pocketllm_gguf_find(g, "clip.vision.projector_type"), NULL);
    if (!m->projector) m->projector = pocketllm_gguf_value_str(pocketllm_gguf_find(g, "clip.projector_type"), NULL);
    m->n_embd = inspect_key_i64(g, "clip.vision.embedding_length");
    m->n_layer = inspect_key_i64(g, "clip.vision.block_count");
    m->n_head = inspect_key_i64(g, "clip.vision.attention.head_count");
    m->head_dim = inspect_key_i64(g, "clip.vision.attention.head_dim");
    if (m->head_dim < 0 && m->n_head > 0 && m->n_embd > 0) m->head_dim = m->n_embd / m->n_head;
    m->n_ff = inspect_key_i64(g, "clip.vision.feed_forward_length");
    m->patch = inspect_key_i64(g, "clip.vision.patch_size");
    m->merge = inspect_key_i64(g, "clip.vision.spatial_merge_size");
    m->image_size = inspect_key_i64(g, "clip.vision.image_size");
    m->proj_dim = inspect_key_i64(g, "clip.vision.projection_dim");
    m->eps = -1;
    const pocketllm_gguf_value *e = pocketllm_gguf_find(g, "clip.vision.attention.layer_norm_epsilon");
    if (e) pocketllm_gguf_value_f64(e, &m->eps);
    m->has_mean = key_f64_array3(g, "clip.vision.image_mean", m->mean);
    m->has_std = key_f64_array3(g, "clip.vision.image_std", m->std);
    const pocketllm_gguf_value *d = pocketllm_gguf_find(g, "clip.vision.is_deepstack_layers");
    uint64_t n = d && pocketllm_gguf_value_type(d) == POCKETLLM_GGUF_ARRAY ? pocketllm_gguf_array_len(d) : 0;
    for (uint64_t i = 0; i < n && m->n_deepstack < MAX_DEEPSTACK; i++) {
        uint64_t b = 0;
        if (pocketllm_gguf_value_u64(pocketllm_gguf_array_get(d, i), &b) == POCKETLLM_OK && b)
            m->deepstack[m->n_deepstack++] = (int32_t)i;
    }
}

static int group_of(const char *name) {
    size_t n = strlen(name);
    bool weight = n >= 7 && strcmp(name + n - 7, ".weight") == 0;
    if (strstr(name, ".patch_embd.")) return G_PATCH;
    if (strstr(name, ".position_embd.")) return G_POS;
    if (!weight) return G_OTHER;
    if (strncmp(name, "v.blk.", 6) == 0 && !strstr(name, ".ln")) return G_BLOCKS;
    if (strncmp(name, "v.deepstack.", 12) == 0 && strstr(name, ".fc")) return G_DEEPSTACK;
    if (strncmp(name, "mm.", 3) == 0) return G_MERGER;
    return G_OTHER;
}

/* "q8_0 x24, f16 x2" for one group (counts[type]). */
static void types_text(const uint32_t *counts, uint32_t n_types, char *buf, size_t len) {
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t t = 0; t < n_types && o < len; t++)
        if (counts[t])
            o += (size_t)snprintf(buf + o, len - o, "%s%s x%u", o ? ", " : "", pocketllm_type_name(t), counts[t]);
    if (!o) snprintf(buf, len, "(none)");
}

#define N_TYPES_MAX 64

static void count_groups(const pocketllm_gguf *g, uint32_t counts[G_COUNT][N_TYPES_MAX]) {
    memset(counts, 0, sizeof(uint32_t) * G_COUNT * N_TYPES_MAX);
    uint64_t n_t = pocketllm_gguf_tensor_count(g);
    for (uint64_t i = 0; i < n_t; i++) {
        pocketllm_tensor_info t;
        if (pocketllm_gguf_tensor(g, i, &t) || t.type >= N_TYPES_MAX) continue;
        counts[group_of(t.name)][t.type]++;
    }
}

/* The tower's sizes in the order both outputs list them (-1: not in the
 * file). */
enum { N_SIZES = 8 };
static const char *const size_keys[N_SIZES] = {"width", "blocks", "heads", "head_dim", "ff", "patch", "merge",
                                               "image_size"};
static void sizes_of(const mmproj_info *m, int64_t v[N_SIZES]) {
    const int64_t s[N_SIZES] = {m->n_embd, m->n_layer, m->n_head, m->head_dim, m->n_ff, m->patch, m->merge,
                                m->image_size};
    memcpy(v, s, sizeof s);
}

static void print_i64(FILE *f, const char *label, int64_t v) {
    if (v >= 0) fprintf(f, "  %-22s %" PRId64 "\n", label, v);
    else fprintf(f, "  %-22s (not in the file)\n", label);
}

void inspect_mmproj_text(const pocketllm_gguf *g, FILE *f) {
    mmproj_info m;
    read_info(g, &m);
    fprintf(f, "vision tower:\n");
    fprintf(f, "  %-22s %s\n", "projector", m.projector ? m.projector : "(not in the file)");
    int64_t sizes[N_SIZES];
    sizes_of(&m, sizes);
    for (int i = 0; i < N_SIZES; i++) print_i64(f, size_keys[i], sizes[i]);
    if (m.image_size > 0 && m.patch > 0)
        fprintf(f, "  %-22s %" PRId64 " x %" PRId64 "\n", "position_table", m.image_size / m.patch,
                m.image_size / m.patch);
    print_i64(f, "projection_width", m.proj_dim);
    fprintf(f, "  %-22s %d", "deepstack_layers", m.n_deepstack);
    for (int i = 0; i < m.n_deepstack; i++) fprintf(f, "%s%d", i ? "," : " (", m.deepstack[i]);
    fprintf(f, "%s\n", m.n_deepstack ? ")" : "");
    if (m.proj_dim > 0) fprintf(f, "  %-22s %" PRId64 "\n", "token_width", m.proj_dim * (1 + m.n_deepstack));
    if (m.eps >= 0) fprintf(f, "  %-22s %g\n", "eps", m.eps);
    if (m.has_mean) fprintf(f, "  %-22s %g %g %g\n", "image_mean", m.mean[0], m.mean[1], m.mean[2]);
    if (m.has_std) fprintf(f, "  %-22s %g %g %g\n", "image_std", m.std[0], m.std[1], m.std[2]);
    uint32_t counts[G_COUNT][N_TYPES_MAX];
    count_groups(g, counts);
    uint32_t n_types = pocketllm_type_count() < N_TYPES_MAX ? pocketllm_type_count() : N_TYPES_MAX;
    for (int gi = 0; gi < G_COUNT; gi++) {
        char buf[256], label[40];
        types_text(counts[gi], n_types, buf, sizeof buf);
        snprintf(label, sizeof label, "types.%s", group_names[gi]);
        fprintf(f, "  %-22s %s\n", label, buf);
    }
}

static void add_i64(cJSON *o, const char *key, int64_t v) {
    if (v >= 0) cJSON_AddNumberToObject(o, key, (double)v);
    else cJSON_AddNullToObject(o, key);
}

cJSON *inspect_mmproj_json(const pocketllm_gguf *g) {
    mmproj_info m;
    read_info(g, &m);
    cJSON *o = cJSON_CreateObject();
    if (m.projector) cJSON_AddStringToObject(o, "projector", m.projector);
    else cJSON_AddNullToObject(o, "projector");
    int64_t sizes[N_SIZES];
    sizes_of(&m, sizes);
    for (int i = 0; i < N_SIZES; i++) add_i64(o, size_keys[i], sizes[i]);
    add_i64(o, "projection_width", m.proj_dim);
    cJSON *ds = cJSON_AddArrayToObject(o, "deepstack_layers");
    for (int i = 0; i < m.n_deepstack; i++) cJSON_AddItemToArray(ds, cJSON_CreateNumber(m.deepstack[i]));
    add_i64(o, "token_width", m.proj_dim > 0 ? m.proj_dim * (1 + m.n_deepstack) : -1);
    if (m.eps >= 0) cJSON_AddNumberToObject(o, "eps", m.eps);
    else cJSON_AddNullToObject(o, "eps");
    if (m.has_mean) cJSON_AddItemToObject(o, "image_mean", cJSON_CreateDoubleArray(m.mean, 3));
    if (m.has_std) cJSON_AddItemToObject(o, "image_std", cJSON_CreateDoubleArray(m.std, 3));
    uint32_t counts[G_COUNT][N_TYPES_MAX];
    count_groups(g, counts);
    uint32_t n_types = pocketllm_type_count() < N_TYPES_MAX ? pocketllm_type_count() : N_TYPES_MAX;
    cJSON *types = cJSON_AddObjectToObject(o, "types");
    for (int gi = 0; gi < G_COUNT; gi++) {
        cJSON *e = cJSON_AddObjectToObject(types, group_names[gi]);
        for (uint32_t t = 0; t < n_types; t++)
            if (counts[gi][t]) cJSON_AddNumberToObject(e, pocketllm_type_name(t), counts[gi][t]);
    }
    return o;
}
