/*
 * jinja.h -- a Jinja interpreter for chat templates, byte-compatible with
 * Python's jinja2 3.1 configured as Hugging Face's apply_chat_template
 * configures it (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
 * loop controls, {% generation %}, HF's tojson, raise_exception,
 * strftime_now).
 *
 * A template is untrusted input: it is only ever rendered -- no attribute
 * of anything but data, no globals beyond those chat templates get, no I/O
 * -- and every render is bounded in output, memory, work and depth.  A
 * construct the interpreter cannot reproduce exactly is refused when the
 * template is parsed, with the construct named.
 *
 * Use: pl_jinja_parse() once; per render, a context (pl_jinja_ctx_new),
 * variables set through pl_jinja_build() (see jinja_internal.h for the
 * value constructors, used from inside the build callback), then
 * pl_jinja_render().
 */
#ifndef PL_JINJA_H
#define PL_JINJA_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

typedef struct pl_jinja_template pl_jinja_template;
typedef struct pl_jinja_ctx pl_jinja_ctx;

typedef struct pl_jinja_limits {
    size_t max_output;   /* bytes of rendered text */
    size_t max_memory;   /* bytes of values and buffers during one render */
    uint64_t max_steps;  /* evaluated nodes and loop iterations */
    uint32_t max_depth;  /* nested macro calls */
} pl_jinja_limits;

/* Limits for interactive use: 32 MiB of text, 256 MiB of memory, 200
 * million steps (a few seconds), macro calls 64 deep. */
pl_jinja_limits pl_jinja_default_limits(void);

/* Parse template source (UTF-8).  A syntax error gives
 * POCKETLLM_ERR_FORMAT, a construct this interpreter does not render
 * POCKETLLM_ERR_UNSUPPORTED; both with "line L, column C: ..." naming it. */
pocketllm_status pl_jinja_parse(const char *src, size_t len, pl_jinja_template **out);
void pl_jinja_template_free(pl_jinja_template *t);

pl_jinja_ctx *pl_jinja_ctx_new(const pl_jinja_limits *limits);
void pl_jinja_ctx_free(pl_jinja_ctx *x);

/* strftime_now() renders this time (seconds since the epoch, local time)
 * instead of the clock. */
void pl_jinja_ctx_set_now(pl_jinja_ctx *x, int64_t unix_seconds);

/* Run fn(x, user) where it may build values and set variables; any error
 * it raises (a malformed JSON text, a limit) comes back as a status. */
pocketllm_status pl_jinja_build(pl_jinja_ctx *x, void (*fn)(pl_jinja_ctx *x, void *user), void *user);

/* Render; *out (malloc'd, NUL-terminated, caller frees) and *len. */
pocketllm_status pl_jinja_render(pl_jinja_ctx *x, const pl_jinja_template *t, char **out, size_t *len);

#endif
