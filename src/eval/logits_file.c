/*
 * logits_file.c -- write and read saved log-probabilities (the layouts are
 * in pocketllm.h).  Readers trust nothing: every count is bounded, the
 * file must be exactly as long as its header says, token ids must be in
 * the vocabulary, and a row is checked when it is used.
 */
#include "eval/logits_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/checked.h"
#include "base/error.h"
#include "eval/logprob.h"

static size_t row_bytes(int type, int64_t n_vocab) {
    return type == POCKETLLM_LOGITS_F32 ? (size_t)n_vocab * 4 : (size_t)pl_logprob_u16_row_len(n_vocab) * 2;
}

static uint32_t rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

pocketllm_status pl_lp_parse(const void *data, size_t size, const char *name, pl_lp_file *f) {
    memset(f, 0, sizeof *f);
    const uint8_t *p = data;
    if ((uintptr_t)p % 4) return pl_fail(POCKETLLM_ERR_INTERNAL, "%s: image is not 4-byte aligned", name);
    if (size < 8) return pl_fail(POCKETLLM_ERR_FORMAT, "%s: too short for a log-probability file (%zu bytes)", name, size);
    size_t off;
    uint64_t ctx, vocab, chunks;
    if (!memcmp(p, PL_LP_MAGIC_F32, 8)) {
        if (size < 24) return pl_fail(POCKETLLM_ERR_FORMAT, "%s: header truncated at byte %zu", name, size);
        if (rd32(p + 8) != 1)
            return pl_fail(POCKETLLM_ERR_UNSUPPORTED, "%s: version %u of the f32 layout (this build reads 1)", name,
                           rd32(p + 8));
        f->type = POCKETLLM_LOGITS_F32;
        ctx = rd32(p + 12), vocab = rd32(p + 16), chunks = rd32(p + 20);
        off = 24;
    } else if (!memcmp(p, PL_LP_MAGIC_U16, 8)) {
        if (size < 20) return pl_fail(POCKETLLM_ERR_FORMAT, "%s: header truncated at byte %zu", name, size);
        f->type = POCKETLLM_LOGITS_U16;
        /* llama.cpp writes these as int32: a negative one reads as huge and is refused below */
        ctx = rd32(p + 8), vocab = rd32(p + 12), chunks = rd32(p + 16);
        off = 20;
    } else {
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: not a saved log-probability file (no PLLOGP32 or _logits_ magic)", name);
    }
    if (ctx < 4 || ctx > PL_LP_MAX_CTX)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: window of %llu tokens is outside 4..%d", name, (unsigned long long)ctx,
                       PL_LP_MAX_CTX);
    if (vocab < 2 || vocab > PL_LP_MAX_VOCAB)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: vocabulary of %llu tokens is outside 2..%d", name,
                       (unsigned long long)vocab, PL_LP_MAX_VOCAB);
    if (chunks < 1) return pl_fail(POCKETLLM_ERR_FORMAT, "%s: no windows", name);
    f->n_ctx = (int64_t)ctx, f->n_vocab = (int64_t)vocab, f->n_chunk = (int64_t)chunks;
    f->rows_per_chunk = pl_lp_rows_per_chunk(f->n_ctx);
    f->row_bytes = row_bytes(f->type, f->n_vocab);
    uint64_t n_tok, tok_bytes, n_rows, rows_bytes, want;
    if (!pl_mul_u64(chunks, ctx, &n_tok) || !pl_mul_u64(n_tok, 4, &tok_bytes) ||
        !pl_mul_u64(chunks, (uint64_t)f->rows_per_chunk, &n_rows) || !pl_mul_u64(n_rows, f->row_bytes, &rows_bytes) ||
        !pl_add_u64(off, tok_bytes, &want) || !pl_add_u64(want, rows_bytes, &want))
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: sizes overflow (%llu windows of %llu)", name,
                       (unsigned long long)chunks, (unsigned long long)ctx);
    if (want != size)
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %zu bytes, but its header (%llu windows of %llu tokens, vocabulary "
                       "%llu) needs %llu", name, size, (unsigned long long)chunks, (unsigned long long)ctx,
                       (unsigned long long)vocab, (unsigned long long)want);
    f->tokens = (const int32_t *)(p + off);
    for (uint64_t i = 0; i < n_tok; i++)
        if (f->tokens[i] < 0 || f->tokens[i] >= f->n_vocab)
            return pl_fail(POCKETLLM_ERR_FORMAT, "%s: token %llu has id %d, outside the vocabulary of %lld", name,
                           (unsigned long long)i, f->tokens[i], (long long)f->n_vocab);
    f->rows = p + off + tok_bytes;
    return POCKETLLM_OK;
}

pocketllm_status pl_lp_open(const char *path, pl_lp_file *f) {
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return pl_fail(POCKETLLM_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return pl_fail(POCKETLLM_ERR_IO, "%s: not a regular file", path);
    }
    if (st.st_size < 8 || (uint64_t)st.st_size > SIZE_MAX / 2) {
        close(fd);
        return pl_fail(POCKETLLM_ERR_FORMAT, "%s: %lld bytes is not a log-probability file", path, (long long)st.st_size);
    }
    size_t len = (size_t)st.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return pl_fail(POCKETLLM_ERR_IO, "cannot map %s: %s", path, strerror(errno));
    pocketllm_status s = pl_lp_parse(map, len, path, f);
    if (s) {
        munmap(map, len);
        memset(f, 0, sizeof *f);
        return s;
    }
    f->map = map;
    f->map_len = len;
    return POCKETLLM_OK;
}

void pl_lp_close(pl_lp_file *f) {
    if (f->map) munmap(f->map, f->map_len);
    memset(f, 0, sizeof *f);
}

const void *pl_lp_row(const pl_lp_file *f, int64_t chunk, int64_t j) {
    const uint8_t *r = f->rows + ((size_t)chunk * (size_t)f->rows_per_chunk + (size_t)j) * f->row_bytes;
    if (f->type == POCKETLLM_LOGITS_U16) {
        float scale, min_lp;
        memcpy(&scale, r, 4);
        memcpy(&min_lp, r + 4, 4);
        /* a row spans at most 16 nats below the log-sum; anything else was not written by a perplexity run */
        if (!(scale >= 0 && scale <= 1.0f) || !(min_lp <= 0 && min_lp > -1e30f)) {
            pl_fail(POCKETLLM_ERR_FORMAT, "window %lld position %lld: scale %g / minimum %g are not a row of "
                    "log-probabilities", (long long)chunk, (long long)j, scale, min_lp);
            return NULL;
        }
        return r;
    }
    const float *lp = (const float *)r;
    for (int64_t i = 0; i < f->n_vocab; i++)
        if (!isfinite(lp[i]) || lp[i] > 1e-3f) {
            pl_fail(POCKETLLM_ERR_FORMAT, "window %lld position %lld: value %g of token %lld is not a log-probability",
                    (long long)chunk, (long long)j, lp[i], (long long)i);
            return NULL;
        }
    return r;
}

/* ---- writing ------------------------------------------------------------- */

static pocketllm_status wr(pl_lp_writer *w, const void *p, size_t n) {
    if (fwrite(p, 1, n, w->f) != n) return pl_fail(POCKETLLM_ERR_IO, "cannot write %s: %s", w->partial, strerror(errno));
    return POCKETLLM_OK;
}

pocketllm_status pl_lp_writer_open(pl_lp_writer *w, const char *path, int type, int64_t n_ctx, int64_t n_vocab,
                                   int64_t n_chunk, const int32_t *tokens) {
    memset(w, 0, sizeof *w);
    if (type != POCKETLLM_LOGITS_F32 && type != POCKETLLM_LOGITS_U16)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "log-probability layout %d: use f32 (1) or u16 (2)", type);
    if (n_ctx < 4 || n_ctx > PL_LP_MAX_CTX || n_vocab < 2 || n_vocab > PL_LP_MAX_VOCAB || n_chunk < 1 ||
        n_chunk > INT32_MAX / n_ctx)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "cannot save %lld windows of %lld tokens, vocabulary %lld",
                       (long long)n_chunk, (long long)n_ctx, (long long)n_vocab);
    size_t plen = strlen(path);
    w->path = malloc(plen + 1);
    w->partial = malloc(plen + 9);
    w->row_bytes = row_bytes(type, n_vocab);
    w->buf = malloc(w->row_bytes);
    if (!w->path || !w->partial || !w->buf) {
        pl_lp_writer_abort(w);
        return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(w->path, path, plen + 1);
    memcpy(w->partial, path, plen);
    memcpy(w->partial + plen, ".partial", 9);
    w->type = type;
    w->n_vocab = n_vocab;
    w->f = fopen(w->partial, "wb");
    if (!w->f) {
        pocketllm_status s = pl_fail(POCKETLLM_ERR_IO, "cannot create %s: %s", w->partial, strerror(errno));
        free(w->path), free(w->partial), free(w->buf);
        memset(w, 0, sizeof *w);
        return s;
    }
    uint32_t h[4];
    pocketllm_status s;
    if (type == POCKETLLM_LOGITS_F32) {
        h[0] = 1, h[1] = (uint32_t)n_ctx, h[2] = (uint32_t)n_vocab, h[3] = (uint32_t)n_chunk;
        s = wr(w, PL_LP_MAGIC_F32, 8);
        if (!s) s = wr(w, h, 16);
    } else {
        h[0] = (uint32_t)n_ctx, h[1] = (uint32_t)n_vocab, h[2] = (uint32_t)n_chunk;
        s = wr(w, PL_LP_MAGIC_U16, 8);
        if (!s) s = wr(w, h, 12);
    }
    if (!s) s = wr(w, tokens, (size_t)(n_chunk * n_ctx) * 4);
    if (s) pl_lp_writer_abort(w);
    return s;
}

pocketllm_status pl_lp_writer_row(pl_lp_writer *w, const float *logits) {
    if (w->type == POCKETLLM_LOGITS_F32) pl_log_softmax(logits, w->n_vocab, w->buf);
    else pl_logprob_u16_encode(logits, w->n_vocab, w->buf);
    return wr(w, w->buf, w->row_bytes);
}

pocketllm_status pl_lp_writer_finish(pl_lp_writer *w) {
    int rc = fclose(w->f);
    w->f = NULL;
    if (rc != 0) {
        pocketllm_status s = pl_fail(POCKETLLM_ERR_IO, "cannot write %s: %s", w->partial, strerror(errno));
        pl_lp_writer_abort(w);
        return s;
    }
    if (rename(w->partial, w->path) != 0) {
        pocketllm_status s = pl_fail(POCKETLLM_ERR_IO, "cannot rename %s to %s: %s", w->partial, w->path, strerror(errno));
        pl_lp_writer_abort(w);
        return s;
    }
    free(w->partial);
    w->partial = NULL;
    pl_lp_writer_abort(w);
    return POCKETLLM_OK;
}

void pl_lp_writer_abort(pl_lp_writer *w) {
    if (w->f) fclose(w->f);
    if (w->partial) remove(w->partial);
    free(w->path), free(w->partial), free(w->buf);
    memset(w, 0, sizeof *w);
}
