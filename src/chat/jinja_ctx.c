/*
 * jinja_ctx.c -- the render context: its arena with a memory budget, text
 * buffers with the output limit, the step counter, the error exit, and the
 * build/render entry points that catch errors raised below them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "chat/jinja_internal.h"

pl_jinja_limits pl_jinja_default_limits(void) {
    pl_jinja_limits l = {
        .max_output = 32u << 20,
        .max_memory = 256u << 20,
        .max_steps = 200000000ull,
        .max_depth = 64,
    };
    return l;
}

pl_jinja_ctx *pl_jinja_ctx_new(const pl_jinja_limits *limits) {
    pl_jx *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->lim = limits ? *limits : pl_jinja_default_limits();
    return x;
}

/* Large text buffers come from malloc, unzeroed (the arena zeroes every
 * allocation), on a list the context frees. */
typedef struct big_block {
    struct big_block *next;
    size_t pad_; /* keeps the payload 16-byte aligned */
} big_block;

#define BIG_BLOCK_MIN (64u * 1024u)

void pl_jinja_ctx_free(pl_jinja_ctx *x) {
    if (!x) return;
    pl_arena_free(&x->arena);
    for (big_block *b = x->big; b;) {
        big_block *n = b->next;
        free(b);
        b = n;
    }
    free(x);
}

void pl_jinja_ctx_set_now(pl_jinja_ctx *x, int64_t unix_seconds) {
    x->has_now = true;
    x->now = unix_seconds;
}

_Noreturn void pl_jx_raise(pl_jx *x, pocketllm_status st, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (x->at) pl_fail(st, "template line %u, column %u: %s", x->at->line, x->at->col, msg);
    else pl_fail(st, "%s", msg);
    longjmp(*x->jmp, (int)st);
}

void *pl_jx_alloc(pl_jx *x, size_t size) {
    if (size > x->lim.max_memory || x->mem_used > x->lim.max_memory - size)
        pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "the template needs more than %zu bytes of memory (limit)",
                    x->lim.max_memory);
    void *p = pl_arena_alloc(&x->arena, size ? size : 1, 16);
    if (!p) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "out of memory");
    x->mem_used += size;
    return p;
}

void *pl_jx_alloc_array(pl_jx *x, size_t n, size_t elem) {
    uint64_t bytes;
    if (!pl_mul_u64(n, elem, &bytes) || bytes > SIZE_MAX)
        pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "an array too large");
    return pl_jx_alloc(x, (size_t)bytes);
}

void pl_jx_step(pl_jx *x) {
    if (++x->steps > x->lim.max_steps)
        pl_jx_raise(x, POCKETLLM_ERR_UNSUPPORTED, "the template ran more than %llu steps (limit)",
                    (unsigned long long)x->lim.max_steps);
    /* every recursion of the interpreter (statements, expressions, printing
     * nested data, comparing it) passes here: stop before the C stack does */
    char here;
    uintptr_t at = (uintptr_t)&here;
    size_t used = at < x->stack_base ? x->stack_base - at : at - x->stack_base;
    if (x->stack_base && used > PL_JINJA_STACK_BUDGET)
        pl_jx_raise(x, POCKETLLM_ERR_UNSUPPORTED, "the template nests too deeply (more than %u KiB of stack)",
                    PL_JINJA_STACK_BUDGET / 1024);
}

static void jbuf_reserve(pl_jx *x, pl_jbuf *b, size_t more) {
    if (more <= b->cap - b->len) return;
    size_t need;
    if (__builtin_add_overflow(b->len, more, &need)) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "text too long");
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "text too long");
        cap *= 2;
    }
    char *p;
    if (cap >= BIG_BLOCK_MIN) {
        if (cap > x->lim.max_memory || x->mem_used > x->lim.max_memory - cap)
            pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "the template needs more than %zu bytes of memory (limit)",
                        x->lim.max_memory);
        big_block *blk = malloc(sizeof *blk + cap);
        if (!blk) pl_jx_raise(x, POCKETLLM_ERR_NO_MEMORY, "out of memory");
        blk->next = x->big;
        x->big = blk;
        x->mem_used += cap;
        p = (char *)(blk + 1);
    } else {
        p = pl_jx_alloc(x, cap);
    }
    if (b->len) memcpy(p, b->p, b->len);
    b->p = p;
    b->cap = cap;
}

void pl_jbuf_reserve(pl_jx *x, pl_jbuf *b, size_t more) { jbuf_reserve(x, b, more); }

void pl_jbuf_put(pl_jx *x, pl_jbuf *b, const char *s, size_t n) {
    if (!n) return;
    jbuf_reserve(x, b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void pl_jbuf_putc(pl_jx *x, pl_jbuf *b, char c) {
    jbuf_reserve(x, b, 1);
    b->p[b->len++] = c;
}

void pl_jbuf_printf(pl_jx *x, pl_jbuf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k < sizeof tmp) {
        pl_jbuf_put(x, b, tmp, (size_t)k);
        return;
    }
    jbuf_reserve(x, b, (size_t)k + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
}

pocketllm_status pl_jinja_build(pl_jinja_ctx *x, void (*fn)(pl_jinja_ctx *x, void *user), void *user) {
    jmp_buf jb;
    jmp_buf *saved = x->jmp;
    x->jmp = &jb;
    x->at = NULL;
    char here;
    x->stack_base = (uintptr_t)&here;
    int rc = setjmp(jb);
    if (rc == 0) fn(x, user);
    x->jmp = saved;
    return rc == 0 ? POCKETLLM_OK : (pocketllm_status)rc;
}
