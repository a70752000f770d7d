/*
 * srv_sched.c -- the continuous-batching scheduler of srv_sched.h.
 *
 * One thread owns the engine.  Each step it drops cancelled jobs, moves
 * queued jobs into free sequences (first come, first served), builds one
 * batch -- the next token of every decoding job first, then prompt chunks
 * of prefilling jobs up to n_batch tokens -- and evaluates it in one
 * forward pass.  Every job whose last token asked for logits then samples,
 * detokenizes, applies its stop strings, and hands its output to its task
 * under the lock.  Per-sequence results do not depend on what else is in
 * the batch (the engine's rows are computed independently), so a greedy
 * answer is the same alone or beside others.
 *
 * A prompt with images or audio is not chunked into the batch: at the
 * step after its job takes a sequence, it is composed and evaluated on that
 * sequence alone (pocketllm_session_eval_media_list: the towers run there,
 * the other sequences wait for that step), and from its first sampled token
 * on the job decodes in the batch like any other.
 *
 * A transcription (POST /v1/audio/transcriptions) is one job that takes a
 * free sequence like a choice does, and at the next step runs
 * pocketllm_transcribe on it -- the whole recording, piece by piece, to its
 * transcript -- in the scheduler's thread.  That call owns the session
 * until it returns: the other sequences make no progress while it runs
 * (their clients' streams get keep-alives, nothing else).  A recording of
 * N seconds stalls them for about the time the CLI's `pocketllm
 * transcribe` takes on it.  Interleaving its pieces with the others'
 * steps would need the piece-level steps (the split, the ASR prompt, the
 * parse) outside the engine's ABI, which keeps them in one place
 * (runtime/asr.h); the server stays on the ABI.  A client that goes away
 * meanwhile is noticed when the call returns.
 *
 * With --lookup, each decoding sequence's next token is followed in the
 * batch by up to draft_max ids drafted by prompt lookup from what the
 * sequence holds; every one of those rows asks for logits.  The job then
 * samples row after row as it would sample step after step -- the same
 * sampler, penalties, grammar, bias, stop strings and log-probabilities --
 * and goes on while the token it drew is the draft the next row was
 * computed after; the first that differs is its next token, and the rows
 * after it are cut from the cache.  A row's logits are those of a plain
 * step (the engine's rows do not depend on their batch) and each row is
 * sampled once, in order, so the output -- greedy or sampled, with its
 * seed -- is plain decoding's, token for token; the acceptance rate is
 * counted for /health and /metrics.
 *
 * With --draft, the drafts come from a draft model instead: it has a
 * session of its own with a sequence per slot, which follows what the
 * slot's sequence holds (draft_sync: the ids it holds that the target's
 * rows do not are forgotten, those it lacks evaluated -- the whole prompt
 * the first time, in chunks of the batch).  Before each step, the draft
 * model evaluates each decoding job's next token and picks its most likely
 * next id, then goes on one id per pass for up to draft_max ids, the jobs'
 * rows batched together (model_drafts).  The draft's ids are certain
 * proposals, as prompt lookup's are, so the verification above is the
 * same and the output is plain decoding's, token for token, greedy or
 * sampled.  A job with images or audio in its prompt drafts nothing (the
 * draft model has no towers).
 *
 * An embeddings request (POST /v1/embeddings) is one job too: it takes a
 * free sequence and embeds one of its inputs per step there
 * (pocketllm_embed), so the session is only ever used by this thread, and
 * the other sequences get a step between two inputs (embed_jobs).
 */
#include "srv_sched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srv_embed.h"
#include "srv_logprobs.h"
#include "srv_metrics.h"
#include "srv_stop.h"

struct srv_task {
    srv_request req;
    size_t n_choices;
    srv_update pending;      /* output not yet polled (under the lock) */
    uint32_t n_done;         /* choices finished */
    uint32_t jobs_alive;     /* jobs the scheduler still holds */
    uint32_t jobs_queued;    /* jobs not yet given a sequence */
    bool cancelled, released, news;
    pthread_cond_t cond;
    pocketllm_transcript *transcript; /* a transcription's result (under the lock) */
    srv_embd *embd;          /* an embeddings request (srv_embed.h): one job, no prompt */
    double t_submit;         /* when it was queued (srv_metrics_now), for the time to first token */
};

typedef struct job {
    srv_task *t;
    size_t choice;
    const srv_prompt *prompt;    /* NULL for a transcription (t->req.asr) */
    pocketllm_transcript *transcript; /* a transcription's result, until delivered */
    uint32_t slot;
    pocketllm_sampler *smp;
    pocketllm_grammar *grammar;  /* this choice's copy of the request's constraint, NULL: none */
    pocketllm_detokenizer *detok;
    srv_stop stop;
    size_t n_fed;            /* prompt tokens evaluated */
    int32_t next_id;         /* sampled, to be evaluated next step */
    bool has_next;
    uint32_t n_gen;
    double t_last;           /* when its last token was sampled (metrics) */
    int64_t max_gen;
    srv_choice_update stage; /* output of this step, moved to the task under the lock */
    int32_t draft[SRV_MAX_DRAFT]; /* --lookup: the ids after next_id in this step's batch */
    size_t n_draft;
    size_t n_ready;          /* --draft: ids the draft model proposed for this step */
    size_t draft_want;       /* --draft: how many it may propose */
    size_t draft_base;       /* the sequence's rows before next_id's */
    size_t cut_to;           /* rows the sequence keeps after this pass's drafts (0: all) */
    bool finished, failed;
    char err[256];           /* why it failed, when the engine said */
    struct job *next;        /* queue link */
} job;

struct srv_sched {
    const srv_model *m;
    srv_sched_params p;
    pocketllm_session *sess; /* one KV cache, a sequence per slot */
    pthread_t thread;
    bool thread_started, stopping;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    job *q_head, *q_tail;
    uint32_t queued_tasks;
    job **slots;             /* parallel entries, NULL = free */
    /* per sequence, the ids its cache rows hold (a free sequence keeps its
     * last request's): a new request takes the free sequence that shares
     * the longest start with its prompt, and that start is not evaluated
     * again -- a prompt cache matched by exact token prefix */
    int32_t **held;
    size_t *n_held;
    uint32_t n_active;
    uint64_t n_passes, n_tokens; /* counters for /health (lock held) */
    uint64_t n_drafted, n_accepted; /* --lookup's drafts verified and kept (lock held) */
    uint32_t most_seqs;
    pocketllm_batch_token *batch; /* n_batch + parallel tokens */
    job **batch_job;
    float *biased;           /* logits with logit_bias applied */
    /* --draft: the draft model's session (a sequence per slot), the ids
     * each of its sequences holds, and its batch */
    pocketllm_session *dsess;
    int32_t **dheld;
    size_t *n_dheld;
    pocketllm_batch_token *dbatch;
    job **dbatch_job;
    size_t dcap;
    uint64_t seed_state;
};

/* ---- updates ----------------------------------------------------------------- */

void srv_update_init(srv_update *u, size_t n_choices) {
    memset(u, 0, sizeof *u);
    u->c = calloc(n_choices ? n_choices : 1, sizeof *u->c);
    u->n_choices = u->c ? n_choices : 0;
}

void srv_update_clear(srv_update *u) {
    for (size_t i = 0; i < u->n_choices; i++) {
        srv_buf_clear(&u->c[i].text);
        u->c[i].n_lp = 0;
    }
}

void srv_update_free(srv_update *u) {
    for (size_t i = 0; i < u->n_choices; i++) {
        srv_buf_free(&u->c[i].text);
        free(u->c[i].lp);
    }
    free(u->c);
    memset(u, 0, sizeof *u);
}

/* Move src's text and tokens to the end of dst. */
static void move_choice(srv_choice_update *dst, srv_choice_update *src) {
    if (src->text.n) srv_buf_add(&dst->text, src->text.p, src->text.n);
    srv_buf_clear(&src->text);
    if (src->n_lp) {
        if (dst->n_lp + src->n_lp > dst->cap_lp) {
            size_t cap = dst->cap_lp ? dst->cap_lp : 16;
            while (cap < dst->n_lp + src->n_lp) cap *= 2;
            srv_logprob *lp = realloc(dst->lp, cap * sizeof *lp);
            if (lp) {
                dst->lp = lp;
                dst->cap_lp = cap;
            }
        }
        if (dst->n_lp + src->n_lp <= dst->cap_lp) {
            memcpy(dst->lp + dst->n_lp, src->lp, src->n_lp * sizeof *src->lp);
            dst->n_lp += src->n_lp;
        }
        src->n_lp = 0;
    }
    if (src->finished) {
        dst->finished = true;
        dst->finish = src->finish;
    }
    dst->n_gen = src->n_gen;
}

/* ---- tasks and jobs ---------------------------------------------------------- */

static void task_free(srv_task *t) {
    srv_request_free(&t->req);
    srv_embd_free(t->embd);
    pocketllm_transcript_free(t->transcript);
    srv_update_free(&t->pending);
    pthread_cond_destroy(&t->cond);
    free(t);
}

/* Free t when neither the connection nor a job holds it (lock held). */
static void task_maybe_free(srv_task *t) {
    if (t->released && t->jobs_alive == 0) task_free(t);
}

static void job_free(srv_sched *s, job *j) {
    pocketllm_sampler_free(j->smp);
    pocketllm_grammar_free(j->grammar);
    pocketllm_detokenizer_free(j->detok);
    pocketllm_transcript_free(j->transcript);
    srv_stop_free(&j->stop);
    srv_buf_free(&j->stage.text);
    free(j->stage.lp);
    srv_task *t = j->t;
    t->jobs_alive--;
    free(j);
    task_maybe_free(t);
    (void)s;
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* How many ids at the start of the prompt sequence `slot` already holds.
 * An image's rows are held as -1 and never match: reuse stops at the
 * first image, so no prompt is ever served another image's rows. */
static size_t shared_start(const srv_sched *s, uint32_t slot, const srv_prompt *p) {
    size_t k = 0;
    if (!p) return 0; /* a transcription */
    while (k < s->n_held[slot] && k < p->n && p->ids[k] >= 0 && s->held[slot][k] == p->ids[k]) k++;
    return k;
}

/* Record that the next id of sequence `slot` is `id` (its cache row is
 * being written by this step). */
static void hold(srv_sched *s, uint32_t slot, int32_t id) {
    if (s->n_held[slot] < s->m->n_ctx) s->held[slot][s->n_held[slot]++] = id;
}

/* Give a queued job sequence `slot` (lock held). */
static bool job_start(srv_sched *s, job *j, uint32_t slot) {
    const srv_request *r = &j->t->req;
    if (!j->prompt) {
        /* a transcription or embeddings: pocketllm_transcribe and
         * pocketllm_embed empty the sequence before and after, so it holds
         * nothing reusable */
        j->slot = slot;
        s->n_held[slot] = 0;
        return true;
    }
    pocketllm_sampler_params sp = r->sp;
    /* choice k of a prompt draws with seed + k: each prompt's choices are
     * what they would be if it came alone */
    const uint64_t k = j->choice % r->n;
    sp.seed = r->seed_given ? r->sp.seed + k : splitmix(&s->seed_state);
    if (pocketllm_sampler_new(&sp, &j->smp) || pocketllm_detokenizer_new(s->m->model, 0, &j->detok)) return false;
    if (r->grammar && pocketllm_grammar_clone(r->grammar, &j->grammar)) return false;
    srv_stop_init(&j->stop, r->stop, r->n_stop);
    j->slot = slot;
    const int64_t room = (int64_t)s->m->n_ctx - (int64_t)j->prompt->n;
    j->max_gen = r->max_tokens > 0 && r->max_tokens < room ? r->max_tokens : room;
    /* keep the cached start of the prompt; its last id is evaluated again
     * in any case, for its logits */
    size_t common = shared_start(s, slot, j->prompt);
    if (common >= j->prompt->n) common = j->prompt->n - 1;
    /* the composition evaluates a prompt with media whole (its text is
     * tokenized piece by piece around the images and clips) */
    if (j->prompt->n_media) common = 0;
    if (pocketllm_session_seq_truncate(s->sess, slot, (uint32_t)common)) common = 0;
    s->n_held[slot] = common;
    j->n_fed = common;
    srv_metrics_prompt(s->p.metrics, j->prompt->n, common);
    return true;
}

/* ---- the step ---------------------------------------------------------------- */

static void stage_finish(job *j, const char *why) {
    j->finished = true;
    j->stage.finished = true;
    j->stage.finish = why;
}

/* Release the detokenizer's and the stop filter's held text. */
static void flush_text(job *j) {
    char buf[64];
    size_t len = 0;
    if (pocketllm_detokenizer_flush(j->detok, buf, sizeof buf, &len) == POCKETLLM_OK && len)
        srv_stop_push(&j->stop, buf, len, &j->stage.text);
    srv_stop_flush(&j->stop, &j->stage.text);
}

static bool push_piece(job *j, int32_t id) {
    char small[256];
    size_t len = 0;
    pocketllm_status st = pocketllm_detokenizer_push(j->detok, id, small, sizeof small, &len);
    if (st == POCKETLLM_ERR_INVALID_ARGUMENT && len > sizeof small) {
        char *big = malloc(len);
        if (!big) return false;
        st = pocketllm_detokenizer_push(j->detok, id, big, len, &len);
        if (!st) srv_stop_push(&j->stop, big, len, &j->stage.text);
        free(big);
        return st == POCKETLLM_OK;
    }
    if (st) return false;
    srv_stop_push(&j->stop, small, len, &j->stage.text);
    return true;
}

/* One new token for j from the logits of its last evaluated token. */
static void job_sample(srv_sched *s, job *j, const float *logits) {
    const srv_request *r = &j->t->req;
    const int32_t n_vocab = pocketllm_session_n_vocab(s->sess);
    if (r->n_bias) {
        memcpy(s->biased, logits, (size_t)n_vocab * sizeof *logits);
        for (size_t i = 0; i < r->n_bias; i++) s->biased[r->bias_id[i]] += r->bias[i];
        logits = s->biased;
    }
    int32_t id;
    /* under a constraint the budget is the tokens this choice may still
     * make, so the reply is completed within them when it can be */
    const int32_t budget = j->grammar ? (int32_t)(j->max_gen - (int64_t)j->n_gen) : -1;
    if (pocketllm_sampler_sample_grammar(j->smp, j->grammar, logits, n_vocab, budget, &id) ||
        (j->grammar && pocketllm_grammar_accept(j->grammar, id))) {
        snprintf(j->err, sizeof j->err, "%s", pocketllm_last_error());
        j->failed = true;
        return;
    }
    j->n_gen++;
    j->stage.n_gen = j->n_gen;
    const double now = srv_metrics_now();
    srv_metrics_token(s->p.metrics, now - (j->n_gen == 1 ? j->t->t_submit : j->t_last), j->n_gen == 1);
    j->t_last = now;
    if (pocketllm_token_is_eog(s->m->model, id)) {
        flush_text(j);
        stage_finish(j, "stop");
        return;
    }
    if (r->logprobs) {
        srv_choice_update *st = &j->stage;
        if (st->n_lp == st->cap_lp) {
            size_t cap = st->cap_lp ? st->cap_lp * 2 : 4;
            srv_logprob *lp = realloc(st->lp, cap * sizeof *lp);
            if (lp) st->lp = lp, st->cap_lp = cap;
        }
        if (st->n_lp < st->cap_lp) srv_logprobs_compute(logits, n_vocab, id, r->top_logprobs, &st->lp[st->n_lp++]);
    }
    if (!push_piece(j, id)) {
        j->failed = true;
        return;
    }
    if (j->stop.matched) {
        stage_finish(j, "stop");
        return;
    }
    if (j->grammar && pocketllm_grammar_done(j->grammar)) {
        /* a whole match nothing can extend: the end-of-generation token is
         * the only one left, so end here without spending a pass on it
         * (also when this was the last token the budget allowed) */
        flush_text(j);
        stage_finish(j, "stop");
        return;
    }
    if ((int64_t)j->n_gen >= j->max_gen) {
        flush_text(j);
        stage_finish(j, "length");
        return;
    }
    pocketllm_sampler_accept(j->smp, id);
    j->next_id = id;
    j->has_next = true;
}

/* The most ids j may draft after its next token: --draft-max, the tokens
 * the reply may still make past the next one, and the positions its
 * sequence has left once the next token's row (`next_held`: already
 * counted in n_held) is in. */
static size_t draft_limit(const srv_sched *s, const job *j, bool next_held) {
    size_t max = s->p.draft_max;
    const int64_t gen_room = j->max_gen - (int64_t)j->n_gen - 1;
    const size_t used = s->n_held[j->slot] + (next_held ? 0 : 1);
    const size_t ctx_room = s->m->n_ctx > used ? s->m->n_ctx - used : 0;
    if (gen_room < (int64_t)max) max = gen_room > 0 ? (size_t)gen_room : 0;
    return ctx_room < max ? ctx_room : max;
}

/* --lookup: draft the ids after j's next one (already held) from what its
 * sequence holds, as many as the reply, the context and --draft-max allow;
 * none past an image's rows. */
static size_t draft_ids(const srv_sched *s, job *j) {
    const uint32_t slot = j->slot;
    const size_t max = draft_limit(s, j, true);
    if (!max) return 0;
    size_t k = pocketllm_lookup_draft(s->held[slot], s->n_held[slot], 1, (int)s->p.lookup, j->draft, max);
    for (size_t i = 0; i < k; i++)
        if (j->draft[i] < 0) k = i;
    return k < s->p.draft_min ? 0 : k;
}

/* --draft: the most ids j may draft this step (its next token not held
 * yet), 0 when it drafts nothing. */
static size_t draft_room(const srv_sched *s, const job *j) {
    if (!j->prompt || j->prompt->n_media) return 0;
    const size_t max = draft_limit(s, j, false);
    return max < s->p.draft_min ? 0 : max;
}

static int32_t argmax(const float *x, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* Put one row in the draft's batch and record what its sequence holds. */
static void draft_row(srv_sched *s, size_t *n, int32_t id, uint32_t slot, job *logits_for) {
    s->dbatch[*n] = (pocketllm_batch_token){id, slot, logits_for != NULL};
    s->dbatch_job[(*n)++] = logits_for;
    /* (draft_room keeps every sequence within its positions) */
    if (s->n_dheld[slot] < s->m->n_ctx) s->dheld[slot][s->n_dheld[slot]++] = id;
}

/* Bring the draft's sequence of j's slot to what the slot holds, plus j's
 * next token with its logits, as far as the batch has room (n rows used);
 * false when the catching up takes more than this step's room (a long
 * prompt: the rest at the next steps, drafting then). */
static bool draft_sync(srv_sched *s, job *j, size_t *n) {
    const uint32_t slot = j->slot;
    const int32_t *h = s->held[slot], *d = s->dheld[slot];
    const size_t nh = s->n_held[slot];
    size_t c = 0;
    while (c < s->n_dheld[slot] && c < nh && d[c] == h[c]) c++;
    if (c < s->n_dheld[slot]) {
        /* (a cut that fails leaves the sequence emptied, from scratch) */
        if (pocketllm_session_seq_truncate(s->dsess, slot, (uint32_t)c)) {
            pocketllm_session_seq_truncate(s->dsess, slot, 0);
            c = 0;
        }
        s->n_dheld[slot] = c;
    }
    size_t room = s->dcap - *n;
    while (c < nh && room > 1) {
        draft_row(s, n, h[c++], slot, NULL);
        room--;
    }
    if (c < nh || !room) return false;
    draft_row(s, n, j->next_id, slot, j);
    return true;
}

/* Evaluate the draft's batch of n rows and give each job whose row it is
 * its next drafted id.  False when the pass failed: nothing is drafted,
 * and the draft's sequences are emptied (what they hold is not known). */
static bool draft_pass(srv_sched *s, size_t n) {
    if (pocketllm_session_eval_batch(s->dsess, s->dbatch, n)) {
        for (uint32_t i = 0; i < s->p.parallel; i++) {
            pocketllm_session_seq_truncate(s->dsess, i, 0);
            s->n_dheld[i] = 0;
            if (s->slots[i]) s->slots[i]->n_ready = 0;
        }
        return false;
    }
    const int32_t nv = pocketllm_session_n_vocab(s->dsess);
    for (size_t r = 0; r < n; r++) {
        job *j = s->dbatch_job[r];
        if (j) j->draft[j->n_ready++] = argmax(pocketllm_session_batch_logits(s->dsess, r), nv);
    }
    return true;
}

/* --draft: each decoding job's drafts for this step, in j->draft[0 ..
 * n_ready): the draft model's most likely ids after its next token, one
 * batched pass of the draft model per id; a job stops drafting at an
 * end-of-generation id.  Fewer than --draft-min: none. */
static void model_drafts(srv_sched *s) {
    size_t n = 0;
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (!j) continue;
        j->n_ready = 0;
        j->draft_want = j->has_next && !j->failed && !j->finished ? draft_room(s, j) : 0;
        if (j->draft_want && !draft_sync(s, j, &n)) j->draft_want = 0;
    }
    if (!n || !draft_pass(s, n)) return;
    for (size_t k = 1; k < s->p.draft_max; k++) {
        n = 0;
        for (uint32_t i = 0; i < s->p.parallel; i++) {
            job *j = s->slots[i];
            if (!j || j->n_ready != k || k >= j->draft_want || pocketllm_token_is_eog(s->m->model, j->draft[k - 1])) continue;
            draft_row(s, &n, j->draft[k - 1], j->slot, j);
        }
        if (!n || !draft_pass(s, n)) break;
    }
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (j && j->n_ready < s->p.draft_min) j->n_ready = 0;
    }
}

/* Fill the batch: decoding jobs' next tokens (each followed by its drafts
 * under --lookup), then prompt chunks. */
static size_t build_batch(srv_sched *s) {
    size_t n = 0;
    const size_t budget = s->p.n_batch;
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (!j || !j->has_next) continue;
        j->draft_base = s->n_held[j->slot];
        s->batch[n] = (pocketllm_batch_token){j->next_id, j->slot, 1};
        hold(s, j->slot, j->next_id);
        s->batch_job[n++] = j;
        j->has_next = false;
        /* (the draft model's ids are in j->draft already) */
        j->n_draft = s->p.lookup ? draft_ids(s, j) : j->n_ready;
        j->n_ready = 0;
        for (size_t d = 0; d < j->n_draft; d++) {
            s->batch[n] = (pocketllm_batch_token){j->draft[d], j->slot, 1};
            hold(s, j->slot, j->draft[d]);
            s->batch_job[n++] = j;
        }
    }
    for (uint32_t i = 0; i < s->p.parallel && n < budget; i++) {
        job *j = s->slots[i];
        if (!j || !j->prompt || j->n_fed >= j->prompt->n || j->prompt->n_media) continue;
        j->n_draft = 0;
        size_t k = j->prompt->n - j->n_fed;
        if (k > budget - n) k = budget - n;
        for (size_t t = 0; t < k; t++) {
            const bool last = j->n_fed + t + 1 == j->prompt->n;
            s->batch[n] = (pocketllm_batch_token){j->prompt->ids[j->n_fed + t], j->slot, last};
            hold(s, j->slot, j->prompt->ids[j->n_fed + t]);
            s->batch_job[n++] = last ? j : NULL;
        }
        j->n_fed += k;
    }
    return n;
}

/* Drop cancelled jobs, queued or running (lock held). */
static void sweep(srv_sched *s) {
    job **pp = &s->q_head, *prev = NULL;
    while (*pp) {
        job *j = *pp;
        if (j->t->cancelled || s->stopping) {
            *pp = j->next;
            if (s->q_tail == j) s->q_tail = prev;
            if (--j->t->jobs_queued == 0) s->queued_tasks--;
            job_free(s, j);
        } else {
            prev = j;
            pp = &j->next;
        }
    }
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (j && (j->t->cancelled || s->stopping)) {
            s->slots[i] = NULL;
            s->n_active--;
            job_free(s, j);
        }
    }
}

/* Move queued jobs into free sequences, first come first served, each to
 * the free sequence that holds the longest start of its prompt (lock
 * held). */
static void admit(srv_sched *s) {
    while (s->q_head && s->n_active < s->p.parallel) {
        job *j = s->q_head;
        uint32_t i = s->p.parallel;
        size_t best = 0;
        for (uint32_t k = 0; k < s->p.parallel; k++) {
            if (s->slots[k]) continue;
            const size_t c = shared_start(s, k, j->prompt);
            if (i == s->p.parallel || c > best) i = k, best = c;
        }
        s->q_head = j->next;
        if (!s->q_head) s->q_tail = NULL;
        j->next = NULL;
        if (--j->t->jobs_queued == 0) s->queued_tasks--;
        j->t->pending.started = true;
        j->t->news = true;
        pthread_cond_broadcast(&j->t->cond);
        if (!job_start(s, j, i)) {
            j->failed = true;
            j->t->pending.failed = true;
            snprintf(j->t->pending.error, sizeof j->t->pending.error, "cannot start a sequence: %s", pocketllm_last_error());
            job_free(s, j);
            continue;
        }
        s->slots[i] = j;
        s->n_active++;
    }
}

/* Hand each job's staged output to its task; retire finished jobs (lock held). */
static void deliver(srv_sched *s, const char *fail_msg) {
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (!j) continue;
        srv_task *t = j->t;
        if (j->failed || fail_msg) {
            t->pending.failed = true;
            snprintf(t->pending.error, sizeof t->pending.error, "%s",
                     fail_msg ? fail_msg : j->err[0] ? j->err : "generation failed");
            /* what the sequence holds is no longer known: nothing */
            s->n_held[i] = 0;
            pocketllm_session_seq_truncate(s->sess, i, 0);
        } else if (j->stage.text.n || j->stage.n_lp || j->stage.finished) {
            if (j->transcript) {
                t->transcript = j->transcript;
                j->transcript = NULL;
            }
            move_choice(&t->pending.c[j->choice], &j->stage);
            if (j->finished && ++t->n_done == t->n_choices) t->pending.done = true;
        } else {
            continue;
        }
        t->news = true;
        pthread_cond_broadcast(&t->cond);
        if (j->finished || j->failed || fail_msg) {
            s->slots[i] = NULL;
            s->n_active--;
            job_free(s, j);
        }
    }
}

/* Evaluate the prompts with images or audio of jobs that have just taken
 * their sequence, each alone on it, and sample their first tokens; returns
 * the rows evaluated. */
static size_t media_prefill(srv_sched *s) {
    size_t rows = 0;
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (!j || !j->prompt || !j->prompt->n_media || j->n_fed || j->failed) continue;
        const srv_prompt *p = j->prompt;
        pocketllm_status st = pocketllm_session_eval_media_list(s->sess, j->slot, s->m->mm, p->text, p->text_len,
                                                                p->media, p->n_media, p->add_special, 1);
        const float *logits = st ? NULL : pocketllm_session_logits(s->sess, -1);
        if (st || !logits || pocketllm_session_seq_n_past(s->sess, j->slot) != p->n) {
            snprintf(j->err, sizeof j->err, "the prompt with media failed: %s",
                     st ? pocketllm_last_error() : "the composition's rows differ from the count");
            j->failed = true;
            continue;
        }
        memcpy(s->held[j->slot], p->ids, p->n * sizeof *p->ids);
        s->n_held[j->slot] = p->n;
        j->n_fed = p->n;
        rows += p->n;
        job_sample(s, j, logits);
    }
    return rows;
}

/* Run the transcriptions that have taken a sequence, one after the other,
 * each to its end (see the top of the file: the other sequences wait);
 * returns the tokens they generated. */
static size_t transcribe_jobs(srv_sched *s) {
    size_t tokens = 0;
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (!j || j->prompt || !j->t->req.asr || j->finished || j->failed) continue;
        const srv_asr *a = j->t->req.asr;
        pocketllm_transcribe_params tp = pocketllm_transcribe_default_params();
        tp.language = a->language[0] ? a->language : NULL;
        tp.context = a->context;
        tp.temperature = a->temperature;
        tp.seed = splitmix(&s->seed_state);
        pocketllm_transcript *tr = NULL;
        pocketllm_status st = pocketllm_transcribe(s->sess, j->slot, s->m->mm, a->audio, &tp, &tr);
        /* (emptied by the call, whatever happened) */
        s->n_held[j->slot] = 0;
        if (st || !tr) {
            snprintf(j->err, sizeof j->err, "the transcription failed: %s", st ? pocketllm_last_error() : "no transcript");
            pocketllm_transcript_free(tr);
            j->failed = true;
            continue;
        }
        tokens += tr->n_tokens;
        j->transcript = tr;
        j->n_gen = tr->n_tokens;
        j->stage.n_gen = tr->n_tokens;
        stage_finish(j, tr->n_cut ? "length" : "stop");
    }
    return tokens;
}

/* Embeddings jobs: each embeds its next input on its sequence
 * (pocketllm_embed, in passes of at most the batch), one input per step,
 * in the scheduler's thread like every other use of the session -- so an
 * embedding never runs beside a pass on the same session, and between two
 * inputs the other sequences get their step (a request of many inputs
 * delays their tokens by one input's passes at a time, never by the whole
 * request).  Returns the tokens evaluated. */
static size_t embed_jobs(srv_sched *s) {
    size_t tokens = 0;
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (!j || !j->t->embd || j->finished || j->failed) continue;
        size_t k = 0;
        const int r = srv_embd_step(j->t->embd, s->sess, j->slot, j->err, sizeof j->err, &k);
        tokens += k;
        if (r < 0) j->failed = true;
        else if (r > 0) stage_finish(j, "stop");
    }
    return tokens;
}

/* The rows of a decoding job that drafted (from batch row i0: its next
 * token's, then one per draft): sampled in order while each drawn token
 * is the draft the next row was computed after; the rows past the last
 * one kept are cut from the sequence.  The drafts kept are added to
 * *accepted.  Returns the row after the job's. */
static size_t verify_drafts(srv_sched *s, job *j, size_t i0, uint64_t *accepted) {
    const size_t k = j->n_draft;
    size_t r = 0;
    for (;; r++) {
        job_sample(s, j, pocketllm_session_batch_logits(s->sess, i0 + r));
        if (j->finished || j->failed || r == k || j->next_id != j->draft[r]) break;
        j->has_next = false; /* that draft's row is in the cache already */
    }
    *accepted += r;
    /* cut once every row of the pass is sampled: a cut ends the batch's logits */
    j->cut_to = r < k ? j->draft_base + 1 + r : 0;
    return i0 + k + 1;
}

/* The cuts verify_drafts left, after the pass's sampling. */
static void cut_drafts(srv_sched *s) {
    for (uint32_t i = 0; i < s->p.parallel; i++) {
        job *j = s->slots[i];
        if (!j || !j->cut_to) continue;
        if (pocketllm_session_seq_truncate(s->sess, j->slot, (uint32_t)j->cut_to)) {
            snprintf(j->err, sizeof j->err, "%s", pocketllm_last_error());
            j->failed = true;
        }
        s->n_held[j->slot] = j->cut_to;
        j->cut_to = 0;
    }
}

static void *sched_main(void *arg) {
    srv_sched *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        sweep(s);
        if (s->stopping) break;
        admit(s);
        if (s->n_active == 0) {
            pthread_cond_wait(&s->wake, &s->mu);
            continue;
        }
        pthread_mutex_unlock(&s->mu);

        const size_t media_rows = (s->m->mm ? media_prefill(s) + transcribe_jobs(s) : 0) + embed_jobs(s);
        if (s->dsess) model_drafts(s);
        const size_t n = build_batch(s);
        uint64_t drafted = 0, accepted = 0;
        const char *fail = NULL;
        char msg[256];
        if (n) {
            pocketllm_status st = pocketllm_session_eval_batch(s->sess, s->batch, n);
            if (st) {
                snprintf(msg, sizeof msg, "the forward pass failed: %s", pocketllm_last_error());
                fail = msg;
            } else {
                for (size_t i = 0; i < n;) {
                    job *j = s->batch_job[i];
                    if (j && j->n_draft) {
                        drafted += j->n_draft;
                        i = verify_drafts(s, j, i, &accepted);
                        continue;
                    }
                    if (j) job_sample(s, j, pocketllm_session_batch_logits(s->sess, i));
                    i++;
                }
                if (drafted) cut_drafts(s);
            }
        }
        uint32_t seqs = 0; /* distinct sequences in the pass (a sequence's tokens are adjacent) */
        for (size_t i = 0; i < n; i++) seqs += i == 0 || s->batch[i].seq != s->batch[i - 1].seq;
        pthread_mutex_lock(&s->mu);
        s->n_tokens += media_rows;
        s->n_drafted += drafted;
        s->n_accepted += accepted;
        if (n) {
            s->n_passes++;
            s->n_tokens += n;
            if (seqs > s->most_seqs) s->most_seqs = seqs;
        }
        deliver(s, fail);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- the public side ------------------------------------------------------------ */

pocketllm_status srv_sched_new(const srv_model *m, const srv_sched_params *p, srv_sched **out, char **err) {
    *out = NULL;
    *err = NULL;
    srv_sched *s = calloc(1, sizeof *s);
    if (!s) return POCKETLLM_ERR_NO_MEMORY;
    s->m = m;
    s->p = *p;
    if (s->p.parallel < 1) s->p.parallel = 1;
    if (s->p.n_batch < 1) s->p.n_batch = 256;
    s->seed_state = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)s << 16);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->wake, NULL);
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = m->n_ctx;
    if (s->p.lookup) s->p.draft_model = NULL;
    const bool spec = s->p.lookup || s->p.draft_model;
    if (spec && s->p.draft_max < 1) s->p.draft_max = 8;
    if (s->p.draft_max > SRV_MAX_DRAFT) s->p.draft_max = SRV_MAX_DRAFT;
    if (!spec) s->p.draft_max = 0;
    /* a step: every decoding token and its drafts, plus prompt chunks */
    const size_t cap = (size_t)s->p.n_batch + (size_t)s->p.parallel * (1 + s->p.draft_max);
    sp.n_batch = (uint32_t)cap;
    sp.kv_type = p->kv_type;
    sp.kv_type_v = p->kv_type_v;
    sp.flash_attn = p->flash_attn;
    sp.n_threads = p->n_threads;
    pocketllm_status st = pocketllm_session_new_multi(m->model, &sp, s->p.parallel, &s->sess);
    if (st) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "cannot make the sessions: %s", pocketllm_last_error());
        *err = strdup(tmp);
        srv_sched_free(s);
        return st;
    }
    if (s->p.draft_model && (st = pocketllm_session_new_multi(s->p.draft_model, &sp, s->p.parallel, &s->dsess))) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "cannot make the draft model's sessions: %s", pocketllm_last_error());
        *err = strdup(tmp);
        srv_sched_free(s);
        return st;
    }
    if (s->dsess) {
        s->dcap = cap;
        s->dheld = calloc(s->p.parallel, sizeof *s->dheld);
        s->n_dheld = calloc(s->p.parallel, sizeof *s->n_dheld);
        s->dbatch = calloc(cap, sizeof *s->dbatch);
        s->dbatch_job = calloc(cap, sizeof *s->dbatch_job);
        bool ok = s->dheld && s->n_dheld && s->dbatch && s->dbatch_job;
        for (uint32_t k = 0; ok && k < s->p.parallel; k++) ok = (s->dheld[k] = malloc((size_t)m->n_ctx * sizeof **s->dheld)) != NULL;
        if (!ok) {
            *err = strdup("out of memory");
            srv_sched_free(s);
            return POCKETLLM_ERR_NO_MEMORY;
        }
    }
    s->slots = calloc(s->p.parallel, sizeof *s->slots);
    s->held = calloc(s->p.parallel, sizeof *s->held);
    s->n_held = calloc(s->p.parallel, sizeof *s->n_held);
    for (uint32_t k = 0; s->held && k < s->p.parallel; k++)
        if (!(s->held[k] = malloc((size_t)m->n_ctx * sizeof **s->held))) {
            *err = strdup("out of memory");
            srv_sched_free(s);
            return POCKETLLM_ERR_NO_MEMORY;
        }
    s->batch = calloc(cap, sizeof *s->batch);
    s->batch_job = calloc(cap, sizeof *s->batch_job);
    s->biased = malloc((size_t)pocketllm_session_n_vocab(s->sess) * sizeof *s->biased);
    if (!s->slots || !s->held || !s->n_held || !s->batch || !s->batch_job || !s->biased || pthread_create(&s->thread, NULL, sched_main, s) != 0) {
        *err = strdup("out of memory");
        srv_sched_free(s);
        return POCKETLLM_ERR_NO_MEMORY;
    }
    s->thread_started = true;
    *out = s;
    return POCKETLLM_OK;
}

void srv_sched_free(srv_sched *s) {
    if (!s) return;
    if (s->thread_started) {
        pthread_mutex_lock(&s->mu);
        s->stopping = true;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    pocketllm_session_free(s->sess);
    pocketllm_session_free(s->dsess);
    for (uint32_t k = 0; s->dheld && k < s->p.parallel; k++) free(s->dheld[k]);
    free(s->dheld);
    free(s->n_dheld);
    free(s->dbatch);
    free(s->dbatch_job);
    free(s->slots);
    for (uint32_t k = 0; s->held && k < s->p.parallel; k++) free(s->held[k]);
    free(s->held);
    free(s->n_held);
    free(s->batch);
    free(s->batch_job);
    free(s->biased);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Queue a request (req taken over) or an embeddings request (em taken
 * over, req empty); on a 503 both stay the caller's. */
static srv_task *submit(srv_sched *s, srv_request *req, srv_embd *em, srv_error *e) {
    /* a transcription or embeddings request is one job with no prompt */
    const size_t n_choices = req->asr || em ? 1 : req->n_prompts * req->n;
    srv_task *t = calloc(1, sizeof *t);
    job **jobs = calloc(n_choices ? n_choices : 1, sizeof *jobs);
    bool ok = t && jobs;
    if (ok) {
        srv_update_init(&t->pending, n_choices);
        ok = t->pending.n_choices == n_choices;
    }
    for (size_t i = 0; ok && i < n_choices; i++) ok = (jobs[i] = calloc(1, sizeof **jobs)) != NULL;
    if (!ok) {
        if (jobs)
            for (size_t i = 0; i < n_choices; i++) free(jobs[i]);
        free(jobs);
        if (t) srv_update_free(&t->pending);
        free(t);
        srv_fail(e, 500, NULL, "out of memory");
        return NULL;
    }
    pthread_cond_init(&t->cond, NULL);
    t->req = *req;
    memset(req, 0, sizeof *req);
    t->embd = em;
    t->t_submit = srv_metrics_now();
    t->n_choices = n_choices;
    for (size_t i = 0; i < n_choices; i++) {
        jobs[i]->t = t;
        jobs[i]->choice = i;
        jobs[i]->prompt = t->req.asr || em ? NULL : &t->req.prompts[i / t->req.n];
    }
    pthread_mutex_lock(&s->mu);
    uint32_t free_slots = s->p.parallel - s->n_active;
    bool must_wait = s->q_head || free_slots < n_choices;
    if (must_wait && s->queued_tasks >= s->p.queue) {
        pthread_mutex_unlock(&s->mu);
        *req = t->req; /* give the request back to the caller */
        t->embd = NULL;
        for (size_t i = 0; i < n_choices; i++) free(jobs[i]);
        free(jobs);
        srv_update_free(&t->pending);
        pthread_cond_destroy(&t->cond);
        free(t);
        srv_fail(e, 503, NULL, "the server is busy: %u requests are running and %u waiting (the most it queues); retry later",
                 s->n_active, s->p.queue);
        return NULL;
    }
    for (size_t i = 0; i < n_choices; i++) {
        if (s->q_tail) s->q_tail->next = jobs[i];
        else s->q_head = jobs[i];
        s->q_tail = jobs[i];
    }
    t->jobs_alive = (uint32_t)n_choices;
    t->jobs_queued = (uint32_t)n_choices;
    s->queued_tasks++;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mu);
    free(jobs);
    return t;
}

srv_task *srv_sched_submit(srv_sched *s, srv_request *req, srv_error *e) { return submit(s, req, NULL, e); }

srv_task *srv_sched_submit_embed(srv_sched *s, srv_embd *em, srv_error *e) {
    srv_request none;
    memset(&none, 0, sizeof none);
    none.n = 1;
    return submit(s, &none, em, e);
}

const srv_request *srv_task_request(const srv_task *t) { return &t->req; }

const srv_embd *srv_task_embd(const srv_task *t) { return t->embd; }

pocketllm_transcript *srv_task_take_transcript(srv_sched *s, srv_task *t) {
    pthread_mutex_lock(&s->mu);
    pocketllm_transcript *tr = t->transcript;
    t->transcript = NULL;
    pthread_mutex_unlock(&s->mu);
    return tr;
}

bool srv_sched_poll(srv_sched *s, srv_task *t, int timeout_ms, srv_update *u) {
    pthread_mutex_lock(&s->mu);
    if (!t->news && timeout_ms > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += timeout_ms / 1000;
        ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        while (!t->news && pthread_cond_timedwait(&t->cond, &s->mu, &ts) == 0) {
        }
    }
    bool news = t->news;
    if (news) {
        for (size_t i = 0; i < t->n_choices && i < u->n_choices; i++) move_choice(&u->c[i], &t->pending.c[i]);
        u->done = t->pending.done;
        u->failed = t->pending.failed;
        u->started = t->pending.started;
        memcpy(u->error, t->pending.error, sizeof u->error);
        t->news = false;
    }
    pthread_mutex_unlock(&s->mu);
    return news;
}

void srv_sched_release(srv_sched *s, srv_task *t) {
    if (!t) return;
    pthread_mutex_lock(&s->mu);
    t->released = true;
    if (!t->pending.done) {
        t->cancelled = true;
        pthread_cond_signal(&s->wake);
    }
    task_maybe_free(t);
    pthread_mutex_unlock(&s->mu);
}

void srv_sched_stats_get(srv_sched *s, srv_sched_stats *st) {
    pthread_mutex_lock(&s->mu);
    st->active = s->n_active;
    st->queued = s->queued_tasks;
    st->parallel = s->p.parallel;
    st->queue_cap = s->p.queue;
    st->passes = s->n_passes;
    st->tokens = s->n_tokens;
    st->most_sequences = s->most_seqs;
    st->lookup = s->p.lookup;
    st->draft_model = s->dsess ? (s->p.draft_name ? s->p.draft_name : "") : NULL;
    st->drafted = s->n_drafted;
    st->accepted = s->n_accepted;
    pthread_mutex_unlock(&s->mu);
}
