/*
 * spec_loop.h -- the generation loop of speculative decoding, shared by
 * `run` and `chat`: after each token, ids drafted by prompt lookup
 * (--lookup) or by a draft model (--draft) follow it in one pass of the
 * target with every row's logits kept; row j decides the token after the
 * j-th draft, so the drafts are kept while each is what that row decides
 * -- for greedy, what plain decoding picks; sampled, by speculative
 * sampling's acceptance rule, which leaves every token distributed as
 * plain sampling's -- the first row that decides otherwise gives the next
 * token, and the caches are cut back to what was kept.  The sampler sees
 * the kept ids in order, as in the plain loop, so penalties act the same.
 */
#ifndef PL_CLI_SPEC_LOOP_H
#define PL_CLI_SPEC_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"
#include "spec_draft.h"

typedef struct spec_loop {
    /* the caller's */
    pocketllm_session *s;     /* the target, its last logits those of the prompt's end */
    pocketllm_sampler *smp;   /* the target's sampler, the prompt accepted */
    int32_t n_vocab;
    bool sampled;             /* the sampler samples (temperature > 0): the acceptance rule */
    spec_draft *dm;           /* the draft model (dm->s set), or NULL / unset: prompt lookup */
    int lookup;               /* prompt lookup's longest n-gram (with no draft model) */
    size_t draft_max, draft_min;
    /* a constraint, or NULL: every row is sampled under it by the
     * target's sampler and the id drawn accepted into it, as the plain
     * loop does, and a draft is kept only when it is that id.  Sampled,
     * this replaces the acceptance rule (which would need the masked
     * distributions of every draft, so a copy of the grammar per row):
     * each row is drawn once, in order, from the same sampler, so the
     * output is plain sampling's, draw for draw, from the same seed --
     * the rate kept is lower than the rule's for a sampled draft model */
    pocketllm_grammar *grammar;
    /* the ids the session holds (malloc'd; grown with realloc as ids are
     * taken): prompt lookup drafts from them, the draft model follows them.
     * On return they are what the session holds, plus the last id taken
     * when that one was not evaluated. */
    int32_t *hist;
    size_t n_hist, cap;
    /* one id of the output, in order: record it, show it; false ends the
     * generation with it (an end-of-generation id, a length reached, a
     * stop asked for; *st set when showing failed) */
    bool (*take)(void *user, int32_t id, pocketllm_status *st);
    /* how many more ids take() may be given (SIZE_MAX: no limit) */
    size_t (*room)(void *user);
    void *user;
    /* out */
    uint64_t drafted, accepted, passes;
    bool context_full;        /* the context filled before the output ended */
} spec_loop;

/* Sample the first id from the session's last logits and run the loop to
 * the generation's end. */
pocketllm_status spec_loop_run(spec_loop *L);

#endif
