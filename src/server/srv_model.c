/*
 * srv_model.c -- open the served model: the checkpoint through the engine,
 * the chat template (the GGUF's tokenizer.chat_template or a file), and the
 * BOS/EOS texts that templates such as Llama 3's write themselves; the
 * vision tower (--mmproj) on the model's device, and the folder file://
 * image URLs may read (--allow-image-path).
 */
#include "srv_model.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "srv_text.h"

static char *fmt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_err(const char *fmt, ...) {
    char tmp[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return strdup(tmp);
}

/* The text of the token whose id the key holds, or NULL. */
static char *token_text(const pocketllm_gguf *g, const char *key) {
    const pocketllm_gguf_value *idv = pocketllm_gguf_find(g, key);
    const pocketllm_gguf_value *toks = pocketllm_gguf_find(g, "tokenizer.ggml.tokens");
    uint64_t id;
    if (!idv || !toks || pocketllm_gguf_value_u64(idv, &id) != POCKETLLM_OK) return NULL;
    if (pocketllm_gguf_array_type(toks) != POCKETLLM_GGUF_STRING || id >= pocketllm_gguf_array_len(toks)) return NULL;
    uint64_t len;
    const char *s = pocketllm_gguf_value_str(pocketllm_gguf_array_get(toks, id), &len);
    return s && strlen(s) == len ? strdup(s) : NULL;
}

/* A whole small file, NUL-terminated. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    srv_buf b = {0};
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (b.n + k > (16u << 20) || !srv_buf_add(&b, chunk, k)) {
            srv_buf_free(&b);
            fclose(f);
            return NULL;
        }
    fclose(f);
    return srv_buf_take(&b, len);
}

char *srv_model_name_from_path(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".gguf") == 0) n -= 5;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, base, n);
    s[n] = '\0';
    return s;
}

pocketllm_status srv_model_open(const srv_model_params *p, srv_model *m, char **err) {
    memset(m, 0, sizeof *m);
    *err = NULL;
    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.n_threads = p->n_threads;
    mp.vocab_only = p->vocab_only;
    mp.device = p->device;
    mp.device_memory = p->device_memory;
    mp.progress = p->progress;
    mp.progress_user = p->progress_user;
    pocketllm_status st = pocketllm_model_open(p->path, &mp, &m->model);
    if (st) {
        *err = fmt_err("%s", pocketllm_last_error());
        return st;
    }
    m->n_vocab = pocketllm_model_n_vocab(m->model);
    if (m->n_vocab < 1) {
        *err = fmt_err("%s has no tokenizer", p->path);
        srv_model_close(m);
        return POCKETLLM_ERR_UNSUPPORTED;
    }
    uint32_t train = pocketllm_model_n_ctx_train(m->model);
    m->n_ctx = p->n_ctx ? p->n_ctx : (train && train < 4096 ? train : 4096);

    pocketllm_gguf *g = NULL;
    if ((st = pocketllm_gguf_open(p->path, &g))) {
        *err = fmt_err("%s", pocketllm_last_error());
        srv_model_close(m);
        return st;
    }
    m->bos_text = token_text(g, "tokenizer.ggml.bos_token_id");
    m->eos_text = token_text(g, "tokenizer.ggml.eos_token_id");
    char *source = NULL;
    size_t source_len = 0;
    if (p->template_path) {
        source = read_file(p->template_path, &source_len);
        if (!source) {
            *err = fmt_err("cannot read the chat template '%s'", p->template_path);
            st = POCKETLLM_ERR_IO;
        }
    } else {
        uint64_t len = 0;
        const pocketllm_gguf_value *v = pocketllm_gguf_find(g, "tokenizer.chat_template");
        const char *s = v ? pocketllm_gguf_value_str(v, &len) : NULL;
        if (s) {
            source = malloc((size_t)len + 1);
            if (source) {
                memcpy(source, s, (size_t)len);
                source[len] = '\0';
                source_len = (size_t)len;
            } else {
                st = POCKETLLM_ERR_NO_MEMORY;
                *err = fmt_err("out of memory");
            }
        }
    }
    pocketllm_gguf_close(g);
    if (!st && source && (st = pocketllm_chat_template_new(source, source_len, &m->tmpl)))
        *err = fmt_err("the chat template cannot be used: %s", pocketllm_last_error());
    free(source);
    pocketllm_chat_template_caps(m->tmpl, &m->caps);
    if (!st) {
        m->id = p->name ? strdup(p->name) : srv_model_name_from_path(p->path);
        struct stat sb;
        m->created = stat(p->path, &sb) == 0 ? (int64_t)sb.st_mtime : 0;
        if (!m->id) {
            st = POCKETLLM_ERR_NO_MEMORY;
            *err = fmt_err("out of memory");
        }
    }
    if (!st && p->mmproj_path) {
        pocketllm_mmproj_params pp = pocketllm_mmproj_default_params();
        pp.image_min_tokens = p->image_min_tokens;
        pp.image_max_tokens = p->image_max_tokens;
        if ((st = pocketllm_mmproj_open(m->model, p->mmproj_path, &pp, &m->mm)))
            *err = fmt_err("%s: %s", p->mmproj_path, pocketllm_last_error());
    }
    if (!st && m->mm) {
        /* which towers the file holds decides which parts are taken */
        pocketllm_mmproj_info info;
        if ((st = pocketllm_mmproj_get_info(m->mm, &info))) {
            *err = fmt_err("%s: %s", p->mmproj_path, pocketllm_last_error());
        } else {
            m->has_vision = info.has_vision != 0;
            m->has_audio = info.has_audio != 0;
        }
    }
    if (!st && p->image_dir) {
        char real[PATH_MAX];
        struct stat sb;
        if (!realpath(p->image_dir, real) || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            *err = fmt_err("--allow-image-path '%s' is not a folder", p->image_dir);
            st = POCKETLLM_ERR_IO;
        } else if (!(m->image_dir = strdup(real))) {
            *err = fmt_err("out of memory");
            st = POCKETLLM_ERR_NO_MEMORY;
        }
    }
    if (st) srv_model_close(m);
    return st;
}

void srv_model_close(srv_model *m) {
    pocketllm_mmproj_close(m->mm);
    free(m->image_dir);
    pocketllm_chat_template_free(m->tmpl);
    pocketllm_model_close(m->model);
    free(m->bos_text);
    free(m->eos_text);
    free(m->id);
    memset(m, 0, sizeof *m);
}
