/*
 * inspect_moe.c -- the mixture-of-experts part of `pocketllm inspect`: the
 * expert count, the count routed per token and the FFN widths; the 3-D
 * expert tensors grouped by kind, type and shape with the bytes of one
 * expert; and the file's parameters and bytes split into those every token
 * reads (attention, router, shared expert, embeddings, norms) and the
 * experts', with what one token reads.  The per-token figure is the rule
 * `pocketllm bench` bounds decode with (src/bench/bench.c): a token reads
 * n_used of n_expert equal slices of each expert tensor, and of a token
 * embedding table beside a separate output matrix only its one row.
 * Needs no weights, only the tensor directory and the keys.
 */
#include "inspect_moe.h"

#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "inspect_audio.h"

static const char EXPS[] = "_exps.weight";

bool inspect_moe_is_experts(const pocketllm_tensor_info *t) {
    const size_t n = strlen(t->name), k = sizeof EXPS - 1;
    return t->n_dims == 3 && t->ne[2] > 0 && n > k && strcmp(t->name + n - k, EXPS) == 0;
}

bool inspect_moe_present(const pocketllm_gguf *g) {
    const uint64_t n_t = pocketllm_gguf_tensor_count(g);
    for (uint64_t i = 0; i < n_t; i++) {
        pocketllm_tensor_info t;
        if (pocketllm_gguf_tensor(g, i, &t) == POCKETLLM_OK && inspect_moe_is_experts(&t)) return true;
    }
    return false;
}

static int64_t arch_key(const pocketllm_gguf *g, const char *arch, const char *key) {
    char k[160];
    snprintf(k, sizeof k, "%s.%s", arch ? arch : "", key);
    return inspect_key_i64(g, k);
}

/* Dimension `dim` of the first tensor named blk.*.<kind>.weight, else -1. */
static int64_t dim_of(const pocketllm_gguf *g, const char *kind, int dim) {
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".%s.weight", kind);
    const size_t k = strlen(suffix);
    const uint64_t n_t = pocketllm_gguf_tensor_count(g);
    for (uint64_t i = 0; i < n_t; i++) {
        pocketllm_tensor_info t;
        if (pocketllm_gguf_tensor(g, i, &t)) continue;
        const size_t n = strlen(t.name);
        if (t.n_dims > (uint32_t)dim && n > k && strcmp(t.name + n - k, suffix) == 0) return t.ne[dim];
    }
    return -1;
}

/* The experts' sizes: from the keys llama.cpp reads; a width the keys do
 * not give is taken from the tensors (-1: unknown; shared 0: none). */
typedef struct moe_sizes {
    int64_t n_expert, n_used, ff_exp, ff_shexp;
} moe_sizes;

static moe_sizes sizes_of(const pocketllm_gguf *g, const char *arch) {
    moe_sizes s = {arch_key(g, arch, "expert_count"), arch_key(g, arch, "expert_used_count"),
                   arch_key(g, arch, "expert_feed_forward_length"),
                   arch_key(g, arch, "expert_shared_feed_forward_length")};
    if (s.n_expert < 0) s.n_expert = dim_of(g, "ffn_up_exps", 2);
    if (s.ff_exp < 0) s.ff_exp = dim_of(g, "ffn_up_exps", 1);
    const int64_t sh = dim_of(g, "ffn_up_shexp", 1);
    if (sh < 0) s.ff_shexp = 0;
    else if (s.ff_shexp < 0) s.ff_shexp = sh;
    return s;
}

/* Parameters and bytes: always read, the experts', one token's. */
typedef struct moe_totals {
    uint64_t dense_params, dense_bytes, exp_params, exp_bytes, tok_params, tok_bytes;
    bool tok_known;   /* the used count is known and fits every expert tensor */
    bool lookup_only; /* a token embedding table read one row per token */
} moe_totals;

static moe_totals totals_of(const pocketllm_gguf *g, int64_t n_used) {
    moe_totals r = {0};
    r.tok_known = n_used > 0;
    r.lookup_only = pocketllm_gguf_find_tensor(g, "output.weight") >= 0;
    const uint64_t n_t = pocketllm_gguf_tensor_count(g);
    for (uint64_t i = 0; i < n_t; i++) {
        pocketllm_tensor_info t;
        if (pocketllm_gguf_tensor(g, i, &t)) continue;
        const uint64_t params = (uint64_t)t.ne[0] * (uint64_t)t.ne[1] * (uint64_t)t.ne[2] * (uint64_t)t.ne[3];
        if (inspect_moe_is_experts(&t)) {
            const uint64_t ne = (uint64_t)t.ne[2];
            r.exp_params += params, r.exp_bytes += t.n_bytes;
            if (n_used > t.ne[2]) {
                r.tok_known = false;
            } else if (n_used > 0) {
                r.tok_params += params / ne * (uint64_t)n_used;
                r.tok_bytes += t.n_bytes / ne * (uint64_t)n_used;
            }
            continue;
        }
        r.dense_params += params, r.dense_bytes += t.n_bytes;
        if (r.lookup_only && strcmp(t.name, "token_embd.weight") == 0) continue;
        r.tok_params += params, r.tok_bytes += t.n_bytes;
    }
    return r;
}

/* The expert tensors grouped by kind (ffn_gate_exps ...), type and shape. */
#define MAX_GROUPS 64
typedef struct moe_group {
    char kind[64];
    uint32_t type, count;
    int64_t ne[3];
    uint64_t bytes_per_expert;
} moe_group;

static int groups_of(const pocketllm_gguf *g, moe_group *gr) {
    int n = 0;
    const uint64_t n_t = pocketllm_gguf_tensor_count(g);
    for (uint64_t i = 0; i < n_t; i++) {
        pocketllm_tensor_info t;
        if (pocketllm_gguf_tensor(g, i, &t) || !inspect_moe_is_experts(&t)) continue;
        /* blk.N.<kind>.weight: the kind without the layer */
        const char *dot = strncmp(t.name, "blk.", 4) == 0 ? strchr(t.name + 4, '.') : NULL;
        const char *kind = dot ? dot + 1 : t.name;
        const size_t len = strlen(kind) - (sizeof ".weight" - 1);
        int k = 0;
        for (; k < n; k++)
            if (strlen(gr[k].kind) == len && strncmp(gr[k].kind, kind, len) == 0 && gr[k].type == t.type &&
                gr[k].ne[0] == t.ne[0] && gr[k].ne[1] == t.ne[1] && gr[k].ne[2] == t.ne[2])
                break;
        if (k == n) {
            if (n == MAX_GROUPS) continue;
            moe_group *e = &gr[n++];
            snprintf(e->kind, sizeof e->kind, "%.*s", (int)len, kind);
            e->type = t.type, e->count = 0;
            memcpy(e->ne, t.ne, sizeof e->ne);
            e->bytes_per_expert = t.n_bytes / (uint64_t)t.ne[2];
        }
        gr[k].count++;
    }
    return n;
}

/* A size, or "?" where the file does not say. */
static const char *size_text(int64_t v, char *buf, size_t len) {
    if (v < 0) return "?";
    snprintf(buf, len, "%" PRId64, v);
    return buf;
}

void inspect_moe_arch_text(const pocketllm_gguf *g, const char *arch, FILE *f) {
    const moe_sizes s = sizes_of(g, arch);
    char a[24], b[24], c[24];
    fprintf(f, " (mixture of experts: %s experts, %s used per token, expert FFN %s", size_text(s.n_expert, a, sizeof a),
            size_text(s.n_used, b, sizeof b), size_text(s.ff_exp, c, sizeof c));
    if (s.ff_shexp > 0) fprintf(f, ", shared expert FFN %" PRId64 ")", s.ff_shexp);
    else fprintf(f, ", no shared expert)");
}

static void total_line(FILE *f, const char *label, uint64_t params, uint64_t bytes, const char *what) {
    char b[32];
    fprintf(f, "  %-13s %14" PRIu64 " parameters %14" PRIu64 " bytes (%s)%s%s\n", label, params, bytes,
            cli_fmt_bytes(bytes, b, sizeof b), what ? "  " : "", what ? what : "");
}

void inspect_moe_text(const pocketllm_gguf *g, const char *arch, FILE *f) {
    const moe_sizes s = sizes_of(g, arch);
    moe_group gr[MAX_GROUPS];
    const int n = groups_of(g, gr);
    fprintf(f, "experts:\n");
    for (int k = 0; k < n; k++) {
        char shape[64], b[32];
        snprintf(shape, sizeof shape, "%" PRId64 " x %" PRId64 " x %" PRId64, gr[k].ne[0], gr[k].ne[1], gr[k].ne[2]);
        fprintf(f, "  %-13s %-18s %-7s x%-4u %10" PRIu64 " bytes per expert (%s)\n", gr[k].kind, shape,
                pocketllm_type_name(gr[k].type), gr[k].count, gr[k].bytes_per_expert,
                cli_fmt_bytes(gr[k].bytes_per_expert, b, sizeof b));
    }
    const moe_totals t = totals_of(g, s.n_used);
    total_line(f, "always read", t.dense_params, t.dense_bytes, "attention, router, shared expert, embeddings, norms");
    total_line(f, "experts", t.exp_params, t.exp_bytes, NULL);
    if (!t.tok_known) {
        fprintf(f, "  %-13s unknown (expert_used_count is missing or larger than the experts)\n", "one token");
        return;
    }
    char what[160];
    char a[24];
    snprintf(what, sizeof what, "always read + %" PRId64 "/%s of the experts%s", s.n_used,
             size_text(s.n_expert, a, sizeof a), t.lookup_only ? "; of token_embd only its row" : "");
    total_line(f, "one token", t.tok_params, t.tok_bytes, what);
}

static void add_total(cJSON *o, const char *key, uint64_t params, uint64_t bytes) {
    cJSON *e = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(e, "parameters", (double)params);
    cJSON_AddNumberToObject(e, "bytes", (double)bytes);
}

static void add_size(cJSON *o, const char *key, int64_t v) {
    if (v >= 0) cJSON_AddNumberToObject(o, key, (double)v);
    else cJSON_AddNullToObject(o, key);
}

cJSON *inspect_moe_json(const pocketllm_gguf *g, const char *arch) {
    const moe_sizes s = sizes_of(g, arch);
    cJSON *o = cJSON_CreateObject();
    add_size(o, "expert_count", s.n_expert);
    add_size(o, "expert_used_count", s.n_used);
    add_size(o, "expert_ffn", s.ff_exp);
    add_size(o, "shared_expert_ffn", s.ff_shexp);
    moe_group gr[MAX_GROUPS];
    const int n = groups_of(g, gr);
    cJSON *ta = cJSON_AddArrayToObject(o, "expert_tensors");
    for (int k = 0; k < n; k++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "kind", gr[k].kind);
        cJSON_AddStringToObject(e, "type", pocketllm_type_name(gr[k].type));
        cJSON *shape = cJSON_AddArrayToObject(e, "shape");
        for (int d = 0; d < 3; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)gr[k].ne[d]));
        cJSON_AddNumberToObject(e, "tensors", gr[k].count);
        cJSON_AddNumberToObject(e, "bytes_per_expert", (double)gr[k].bytes_per_expert);
        cJSON_AddItemToArray(ta, e);
    }
    const moe_totals t = totals_of(g, s.n_used);
    add_total(o, "always_read", t.dense_params, t.dense_bytes);
    add_total(o, "experts", t.exp_params, t.exp_bytes);
    if (t.tok_known) add_total(o, "per_token", t.tok_params, t.tok_bytes);
    else cJSON_AddNullToObject(o, "per_token");
    cJSON_AddBoolToObject(o, "token_embd_looked_up", t.lookup_only);
    return o;
}
