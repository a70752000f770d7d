/*
 * session_hooks.h -- what other modules inside the library may reach of a
 * session beyond the public API: its compute instance, so that an
 * evaluation (eval/imatrix.c) can observe the passes it runs; the
 * evaluation of text and of an image's embeddings on any sequence at
 * explicit rotary positions, for the composition of a prompt with images
 * (runtime/media_prompt.c); and a pass that hands out the final norm's
 * hidden states, for embeddings (runtime/embed.c).
 */
#ifndef PL_SESSION_HOOKS_H
#define PL_SESSION_HOOKS_H

#include "backend/compute.h"
#include "pocketllm.h"

/* The compute instance every pass of the session runs on. */
pl_compute *pl_session_compute(pocketllm_session *s);

struct pocketllm_model;

/* pocketllm_session_eval on sequence seq (of a multi-sequence session): n
 * ids at its next rows and positions; the logits (the last token's, or
 * all) are pocketllm_session_logits'. */
pocketllm_status pl_session_eval_text(pocketllm_session *s, uint32_t seq, const int32_t *ids, size_t n, int all_logits);

/* Embeddings (runtime/embed.c): one pass of n <= n_batch ids at the next
 * rows of sequence seq, and the hidden states after the final norm of its
 * last n_out tokens into out (host memory, [n_out][n_embd]) instead of
 * logits.  On failure the sequence keeps its rows. */
pocketllm_status pl_session_eval_hidden(pocketllm_session *s, uint32_t seq, const int32_t *ids, size_t n, size_t n_out,
                                        float *out);

/* n input embeddings (host memory, libmtmd's layout: per token `width` =
 * n_embd x (1 + n_deepstack) floats, the main one then each DeepStack set)
 * at the next n cache rows of sequence seq, with rotary positions pos[a *
 * n + t] (a = time, height, width, extra), in passes of at most n_batch.
 * The sequence's next position becomes next_pos.  Leaves the last token's
 * logits.  On failure the sequence keeps its rows and position. */
pocketllm_status pl_session_eval_embd(pocketllm_session *s, uint32_t seq, const float *embd, size_t n, int64_t width,
                                      const int32_t *pos, int32_t next_pos);

/* The next rotary position of sequence seq (its n_past until an image). */
int32_t pl_session_seq_pos(const pocketllm_session *s, uint32_t seq);
int64_t pl_session_n_batch(const pocketllm_session *s);
const struct pocketllm_model *pl_session_model(const pocketllm_session *s);

#endif
