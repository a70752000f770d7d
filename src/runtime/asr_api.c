/*
 * asr_api.c -- pocketllm_transcribe: a recording to a transcript with a
 * Qwen3-ASR pair.  The recording is cut at quiet points into pieces of at
 * most max_piece_seconds (audio/audio_split.h); each piece is transcribed on
 * the emptied sequence (its prompt from asr.h, the audio through the media
 * composition, greedy or sampled generation up to pl_asr_token_budget, stop
 * at an end-of-generation id), and the pieces' texts are joined with a
 * space.  Only one piece's copy of the samples is held besides the caller's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio_api_internal.h"
#include "audio/audio_split.h"
#include "base/error.h"
#include "runtime/asr.h"
#include "runtime/session_hooks.h"

pocketllm_transcribe_params pocketllm_transcribe_default_params(void) {
    pocketllm_transcribe_params p;
    memset(&p, 0, sizeof p);
    return p;
}

void pocketllm_transcript_free(pocketllm_transcript *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n_segments; i++) free(t->segments[i].text);
    free(t->segments);
    free(t->text);
    free(t);
}

/* The generated ids as text with the special tokens written out (the
 * parse removes them; <asr_text> must be seen). */
static pocketllm_status detok(const pocketllm_model *m, const int32_t *ids, size_t n, char **out, size_t *len) {
    size_t cap = 16 * n + 16, got = 0;
    for (int tries = 0; tries < 2; tries++) {
        char *b = malloc(cap + 1);
        if (!b) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        pocketllm_status st = pocketllm_detokenize(m, ids, n, 0, 1, b, cap, &got);
        if (!st) {
            b[got] = '\0';
            *out = b;
            *len = got;
            return POCKETLLM_OK;
        }
        free(b);
        if (st != POCKETLLM_ERR_INVALID_ARGUMENT || got <= cap) return st;
        cap = got;
    }
    return pl_fail(POCKETLLM_ERR_INTERNAL, "detokenize: the text does not fit");
}

typedef struct piece_out {
    char *text;
    char lang[32];
    uint32_t n_tokens;
    int cut;
} piece_out;

/* One piece: evaluate the prompt with the piece's audio at the emptied
 * sequence, generate until an end-of-generation id or the budget. */
static pocketllm_status transcribe_piece(pocketllm_session *s, uint32_t seq, pocketllm_mmproj *mm, const char *prompt,
                                         const float *samples, size_t n, const pocketllm_transcribe_params *p,
                                         pocketllm_sampler *smp, piece_out *out) {
    const pocketllm_model *m = pl_session_model(s);
    pocketllm_audio *clip = NULL;
    pocketllm_status st = pocketllm_audio_from_pcm(samples, n, 1, 16000, &clip);
    if (st) return st;
    pocketllm_session_seq_truncate(s, seq, 0);
    const pocketllm_media media = {NULL, clip};
    st = pocketllm_session_eval_media_list(s, seq, mm, prompt, strlen(prompt), &media, 1, 1, 1);
    pocketllm_audio_free(clip);
    if (st) return st;
    const uint32_t budget = pl_asr_token_budget((double)n / 16000.0);
    int32_t *ids = malloc(budget * sizeof *ids);
    if (!ids) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    pocketllm_sampler_reset(smp);
    const int32_t n_vocab = pocketllm_session_n_vocab(s);
    uint32_t k = 0;
    out->cut = 1;
    while (k < budget) {
        int32_t id;
        if ((st = pocketllm_sampler_sample(smp, pocketllm_session_logits(s, -1), n_vocab, &id))) break;
        if (pocketllm_token_is_eog(m, id)) {
            out->cut = 0;
            break;
        }
        pocketllm_sampler_accept(smp, id);
        ids[k++] = id;
        if (k == budget) break;
        if (pocketllm_session_seq_n_past(s, seq) >= pocketllm_session_n_ctx(s)) {
            st = pl_fail(POCKETLLM_ERR_CONTEXT_FULL, "the context (%u) filled while transcribing; use a larger --ctx",
                         pocketllm_session_n_ctx(s));
            break;
        }
        if ((st = pl_session_eval_text(s, seq, &id, 1, 0))) break;
    }
    out->n_tokens = k;
    char *gen = NULL;
    size_t glen = 0;
    if (!st) st = detok(m, ids, k, &gen, &glen);
    free(ids);
    if (!st) st = pl_asr_parse(gen, glen, p->language, &out->text, out->lang, sizeof out->lang);
    free(gen);
    return st;
}

/* Append piece text to the joined transcript (a space between non-empty
 * pieces). */
static pocketllm_status join(char **all, size_t *len, const char *t) {
    const size_t n = strlen(t);
    if (!n) return POCKETLLM_OK;
    char *g = realloc(*all, *len + n + 2);
    if (!g) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    if (*len) g[(*len)++] = ' ';
    memcpy(g + *len, t, n + 1);
    *len += n;
    *all = g;
    return POCKETLLM_OK;
}

pocketllm_status pocketllm_transcribe(pocketllm_session *s, uint32_t seq, pocketllm_mmproj *mm,
                                      const pocketllm_audio *audio, const pocketllm_transcribe_params *params,
                                      pocketllm_transcript **out) {
    if (!out) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "transcribe: no output pointer");
    *out = NULL;
    if (!s || !mm || !audio) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "transcribe: NULL argument");
    if (seq >= pocketllm_session_n_seq(s)) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "session: no sequence %u", seq);
    const pocketllm_transcribe_params p = params ? *params : pocketllm_transcribe_default_params();
    pocketllm_mmproj_info info;
    pocketllm_status st = pocketllm_mmproj_get_info(mm, &info);
    if (st) return st;
    if (!info.has_audio)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "the mmproj has no audio tower (projector %s): transcription needs a Qwen3-ASR mmproj",
                       info.projector);
    if (!(p.max_piece_seconds >= 0) || p.max_piece_seconds > 30.0 || (p.max_piece_seconds > 0 && p.max_piece_seconds < 1))
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "max_piece_seconds must be 1..30 (0: 30), not %g",
                       p.max_piece_seconds);
    if (!(p.temperature >= 0) || p.temperature > 100)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "the temperature must be 0..100, not %g", (double)p.temperature);
    const pl_audio_pcm *pcm = pl_audio_of(audio);
    if (!pcm || !pcm->n || !pcm->samples) return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "transcribe: the audio is empty");
    if (pcm->rate != 16000)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT, "transcribe: the audio is at %u Hz, not 16000", pcm->rate);
    const double total = (double)pcm->n / pcm->rate;
    if (total > PL_ASR_MAX_SECONDS)
        return pl_fail(POCKETLLM_ERR_INVALID_ARGUMENT,
                       "the recording is %.1f s long; Qwen3-ASR transcribes at most %.0f minutes at once", total,
                       PL_ASR_MAX_SECONDS / 60);
    const double piece = p.max_piece_seconds > 0 ? p.max_piece_seconds : 30.0;

    char *prompt = NULL;
    size_t *cuts = NULL, n_cuts = 0;
    pocketllm_sampler *smp = NULL;
    pocketllm_transcript *t = calloc(1, sizeof *t);
    if (!t) return pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
    pocketllm_sampler_params sp = pocketllm_sampler_default_params();
    sp.temperature = p.temperature;
    sp.seed = p.seed;
    sp.repeat_penalty = 1.0f; /* the transcript may repeat what was said */
    if ((st = pl_asr_prompt(pl_session_model(s), p.language, p.context, &prompt)) ||
        (st = pl_audio_split(pcm->samples, pcm->n, pcm->rate, piece, 0, &cuts, &n_cuts)) ||
        (st = pocketllm_sampler_new(&sp, &smp)))
        goto fail;
    t->segments = calloc(n_cuts + 1, sizeof *t->segments);
    if (!t->segments) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    size_t text_len = 0;
    for (size_t i = 0; i <= n_cuts; i++) {
        const size_t lo = i ? cuts[i - 1] : 0, hi = i < n_cuts ? cuts[i] : pcm->n;
        if (hi <= lo || hi > pcm->n) {
            st = pl_fail(POCKETLLM_ERR_INTERNAL, "transcribe: piece %zu is empty", i + 1);
            goto fail;
        }
        piece_out po = {0};
        st = transcribe_piece(s, seq, mm, prompt, pcm->samples + lo, hi - lo, &p, smp, &po);
        if (st) {
            free(po.text);
            if (n_cuts) pl_error_prefix("transcribe: a piece of the recording");
            goto fail;
        }
        pocketllm_transcript_segment *g = &t->segments[t->n_segments++];
        g->start = (double)lo / pcm->rate;
        g->end = (double)hi / pcm->rate;
        g->text = po.text;
        t->n_tokens += po.n_tokens;
        t->n_cut += po.cut ? 1u : 0u;
        if (!t->language[0] && po.lang[0]) snprintf(t->language, sizeof t->language, "%s", po.lang);
        if ((st = join(&t->text, &text_len, po.text))) goto fail;
        if (p.progress) p.progress(p.user, g->end, total);
    }
    if (!t->text && !(t->text = calloc(1, 1))) {
        st = pl_fail(POCKETLLM_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    if (p.language && !t->language[0]) snprintf(t->language, sizeof t->language, "%s", p.language);
    pocketllm_session_seq_truncate(s, seq, 0);
    free(prompt);
    free(cuts);
    pocketllm_sampler_free(smp);
    *out = t;
    return POCKETLLM_OK;
fail:
    pocketllm_session_seq_truncate(s, seq, 0);
    free(prompt);
    free(cuts);
    pocketllm_sampler_free(smp);
    pocketllm_transcript_free(t);
    return st;
}
