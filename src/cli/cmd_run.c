/*
 * cmd_run.c -- `pocketllm run`: tokenize a prompt as llama_tokenize(
 * add_special, parse_special) does, evaluate it in one batched prefill,
 * then sample token by token, streaming the text, until an end-of-generation
 * token, -n tokens, or the end of the context.  With --image (and the
 * vision tower, --mmproj), the prompt and its images are composed and
 * evaluated by pocketllm_session_eval_media_list, as llama.cpp's mtmd-cli
 * does: a prompt without media markers gets one per image in front of it.
 * --audio FILE (with a Qwen3-ASR mmproj) is a media item the same way;
 * images and clips go to the markers in the order given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "run_common.h"
#include "spec_draft.h"
#include "spec_loop.h"

#define MAX_IMAGES 64

typedef struct run_opts {
    run_common common;
    int64_t n_predict;
    pocketllm_sampler_params sp;
    bool seed_given, print_ids, timings;
    const char *mmproj;
    const char *images[MAX_IMAGES]; /* --image and --audio files, in the order given */
    bool is_audio[MAX_IMAGES];
    int n_images, n_audio;
    int64_t image_min_tokens, image_max_tokens;
    const char *grammar_file, *schema_file; /* constrained decoding */
    int64_t lookup, draft_max, draft_min;   /* --lookup: prompt-lookup speculative decoding */
    const char *draft;                      /* --draft M: speculative decoding with a draft model */
} run_opts;

static int parse(int argc, char **argv, run_opts *o) {
    run_common_defaults(&o->common);
    o->n_predict = 128;
    o->draft_max = 8;
    o->draft_min = 1;
    o->sp = pocketllm_sampler_default_params();
    const char *v, *err = NULL;
    for (int i = 1; i < argc; i++) {
        int64_t n;
        double d;
        int r = run_common_opt(argc, argv, &i, &o->common, "run");
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        if (cli_opt(argc, argv, &i, "-n", &v, &err) || cli_opt(argc, argv, &i, "--n-predict", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1 << 24, &n)) return cli_usage("run", "-n wants a count of 1 or more, not '%s'", v);
            o->n_predict = n;
        } else if (cli_opt(argc, argv, &i, "--temperature", &v, &err) || cli_opt(argc, argv, &i, "--temp", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, 0, 1e6, &d)) return cli_usage("run", "--temperature wants a number >= 0, not '%s'", v);
            o->sp.temperature = (float)d;
        } else if (cli_opt(argc, argv, &i, "--top-k", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 0, 1 << 30, &n)) return cli_usage("run", "--top-k wants a count >= 0 (0 = off), not '%s'", v);
            o->sp.top_k = (int32_t)n;
        } else if (cli_opt(argc, argv, &i, "--top-p", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, 0, 1, &d)) return cli_usage("run", "--top-p wants a number in [0, 1], not '%s'", v);
            o->sp.top_p = (float)d;
        } else if (cli_opt(argc, argv, &i, "--min-p", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, 0, 1, &d)) return cli_usage("run", "--min-p wants a number in [0, 1], not '%s'", v);
            o->sp.min_p = (float)d;
        } else if (cli_opt(argc, argv, &i, "--repeat-penalty", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, 1e-6, 1e6, &d)) return cli_usage("run", "--repeat-penalty wants a number > 0, not '%s'", v);
            o->sp.repeat_penalty = (float)d;
        } else if (cli_opt(argc, argv, &i, "--presence-penalty", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, -1e6, 1e6, &d)) return cli_usage("run", "--presence-penalty wants a number, not '%s'", v);
            o->sp.presence_penalty = (float)d;
        } else if (cli_opt(argc, argv, &i, "--frequency-penalty", &v, &err)) {
            if (err) break;
            if (!cli_parse_f64(v, -1e6, 1e6, &d)) return cli_usage("run", "--frequency-penalty wants a number, not '%s'", v);
            o->sp.frequency_penalty = (float)d;
        } else if (cli_opt(argc, argv, &i, "--repeat-last-n", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, -1, 1 << 24, &n)) return cli_usage("run", "--repeat-last-n wants -1 (all) or a count, not '%s'", v);
            o->sp.penalty_last_n = (int32_t)n;
        } else if (cli_opt(argc, argv, &i, "--seed", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 0, INT64_MAX, &n)) return cli_usage("run", "--seed wants a number >= 0, not '%s'", v);
            o->sp.seed = (uint64_t)n;
            o->seed_given = true;
        } else if (cli_opt(argc, argv, &i, "--mmproj", &v, &err)) {
            if (err) break;
            o->mmproj = v;
        } else if (cli_opt(argc, argv, &i, "--image", &v, &err)) {
            if (err) break;
            if (o->n_images == MAX_IMAGES) return cli_usage("run", "at most %d --image/--audio options", MAX_IMAGES);
            o->images[o->n_images++] = v;
        } else if (cli_opt(argc, argv, &i, "--audio", &v, &err)) {
            if (err) break;
            if (o->n_images == MAX_IMAGES) return cli_usage("run", "at most %d --image/--audio options", MAX_IMAGES);
            o->is_audio[o->n_images] = true;
            o->images[o->n_images++] = v;
            o->n_audio++;
        } else if (cli_opt(argc, argv, &i, "--image-min-tokens", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1 << 20, &n)) return cli_usage("run", "--image-min-tokens wants a count 1..1048576, not '%s'", v);
            o->image_min_tokens = n;
        } else if (cli_opt(argc, argv, &i, "--image-max-tokens", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 1 << 20, &n)) return cli_usage("run", "--image-max-tokens wants a count 1..1048576, not '%s'", v);
            o->image_max_tokens = n;
        } else if (cli_opt(argc, argv, &i, "--grammar", &v, &err)) {
            if (err) break;
            o->grammar_file = v;
        } else if (cli_opt(argc, argv, &i, "--json-schema", &v, &err)) {
            if (err) break;
            o->schema_file = v;
        } else if (cli_opt(argc, argv, &i, "--lookup", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 8, &n)) return cli_usage("run", "--lookup wants the longest n-gram, 1..8, not '%s'", v);
            o->lookup = n;
        } else if (cli_opt(argc, argv, &i, "--draft", &v, &err) || cli_opt(argc, argv, &i, "-md", &v, &err)) {
            if (err) break;
            o->draft = v;
        } else if (cli_opt(argc, argv, &i, "--draft-max", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 64, &n)) return cli_usage("run", "--draft-max wants 1..64, not '%s'", v);
            o->draft_max = n;
        } else if (cli_opt(argc, argv, &i, "--draft-min", &v, &err)) {
            if (err) break;
            if (!cli_parse_i64(v, 1, 64, &n)) return cli_usage("run", "--draft-min wants 1..64, not '%s'", v);
            o->draft_min = n;
        } else if (!strcmp(argv[i], "--print-ids")) {
            o->print_ids = true;
        } else if (!strcmp(argv[i], "--timings")) {
            o->timings = true;
        } else {
            return cli_usage("run", "unknown argument '%s'", argv[i]);
        }
    }
    if (err) return cli_usage("run", "an option %s", err);
    if (o->grammar_file && o->schema_file) return cli_usage("run", "--grammar and --json-schema are one constraint each: give one");
    if (o->n_audio && !o->mmproj) return cli_usage("run", "--audio needs the audio tower: --mmproj FILE");
    if (o->n_images && !o->mmproj) return cli_usage("run", "--image needs the vision tower: --mmproj FILE");
    if (o->n_audio && !o->common.prompt) return cli_usage("run", "--audio needs --prompt (not --ids)");
    if (o->n_images && !o->common.prompt) return cli_usage("run", "--image needs --prompt (not --ids)");
    if (o->lookup && o->draft) return cli_usage("run", "--lookup and --draft are two ways to draft: give one");
    if (o->draft && o->n_images) return cli_usage("run", "--draft does not go with --image / --audio yet");
    if (o->draft_min > o->draft_max) return cli_usage("run", "--draft-min is larger than --draft-max");
    return run_common_check(&o->common, "run");
}

/* The prompt and its images: the tower, the decoded images, the text with
 * one marker per image in front when it has none (mtmd-cli's rule), and
 * its ids with each image token as -1, evaluated into the session. */
typedef struct media_run {
    pocketllm_mmproj *mm;
    pocketllm_image *img[MAX_IMAGES];
    pocketllm_audio *aud[MAX_IMAGES];
    pocketllm_media media[MAX_IMAGES];
    char *text;
    int32_t *ids;
    uint32_t n_ids;
} media_run;

static void media_free(media_run *mr) {
    for (int i = 0; i < MAX_IMAGES; i++) {
        pocketllm_image_free(mr->img[i]);
        pocketllm_audio_free(mr->aud[i]);
    }
    pocketllm_mmproj_close(mr->mm);
    free(mr->text);
    free(mr->ids);
}

static int media_eval(const run_opts *o, run_state *rs, media_run *mr) {
    pocketllm_mmproj_params mp = pocketllm_mmproj_default_params();
    mp.image_min_tokens = (uint32_t)o->image_min_tokens;
    mp.image_max_tokens = (uint32_t)o->image_max_tokens;
    pocketllm_status st = pocketllm_mmproj_open(rs->model, o->mmproj, &mp, &mr->mm);
    if (st) return cli_lib_error("run", st);
    for (int i = 0; i < o->n_images; i++) {
        if (o->is_audio[i] ? (st = pocketllm_audio_load(o->images[i], &mr->aud[i]))
                           : (st = pocketllm_image_load(o->images[i], &mr->img[i]))) {
            const char *e = pocketllm_last_error();
            /* (the decoders' messages may name the file already) */
            return strstr(e, o->images[i]) ? cli_error("run", "%s", e) : cli_error("run", "%s: %s", o->images[i], e);
        }
        mr->media[i].image = mr->img[i];
        mr->media[i].audio = mr->aud[i];
    }
    const char *marker = pocketllm_media_marker();
    const bool has_marker = strstr(o->common.prompt, marker) != NULL;
    const size_t ml = strlen(marker), pl = strlen(o->common.prompt);
    mr->text = malloc(pl + (has_marker ? 0 : (size_t)o->n_images * ml) + 1);
    if (!mr->text) return cli_lib_error("run", POCKETLLM_ERR_NO_MEMORY);
    size_t at = 0;
    for (int i = 0; !has_marker && i < o->n_images; i++, at += ml) memcpy(mr->text + at, marker, ml);
    memcpy(mr->text + at, o->common.prompt, pl + 1);
    const size_t len = at + pl;
    const pocketllm_media *ml_ = mr->media;
    const size_t nm = (size_t)o->n_images;
    size_t cap = 0;
    st = pocketllm_media_list_tokens(rs->model, mr->mm, mr->text, len, ml_, nm, 1, 1, NULL, 0, &mr->n_ids);
    if (!st) {
        cap = mr->n_ids;
        mr->ids = malloc((cap ? cap : 1) * sizeof *mr->ids);
        st = mr->ids ? pocketllm_media_list_tokens(rs->model, mr->mm, mr->text, len, ml_, nm, 1, 1, mr->ids, cap, &mr->n_ids)
                     : POCKETLLM_ERR_NO_MEMORY;
    }
    if (!st) st = pocketllm_session_eval_media_list(rs->session, 0, mr->mm, mr->text, len, ml_, nm, 1, 1);
    return st ? cli_lib_error("run", st) : 0;
}

static void print_ids(const int32_t *ids, size_t n) {
    for (size_t i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
    putchar('\n');
}

/* Write the text of one generated id (held back until whole UTF-8). */
static pocketllm_status emit(pocketllm_detokenizer *d, int32_t id) {
    char buf[512];
    size_t len;
    pocketllm_status st = pocketllm_detokenizer_push(d, id, buf, sizeof buf, &len);
    if (st == POCKETLLM_ERR_INVALID_ARGUMENT && len > sizeof buf) {
        char *big = malloc(len);
        if (!big) return st;
        st = pocketllm_detokenizer_push(d, id, big, len, &len);
        if (!st) fwrite(big, 1, len, stdout);
        free(big);
        fflush(stdout);
        return st;
    }
    if (!st) fwrite(buf, 1, len, stdout);
    fflush(stdout);
    return st;
}

/* The --grammar or --json-schema constraint, read from its file; an exit
 * code (the reason printed) on failure. */
static int open_grammar(const run_opts *o, const pocketllm_model *model, pocketllm_grammar **out) {
    const char *path = o->grammar_file ? o->grammar_file : o->schema_file;
    size_t len = 0;
    char *text = cli_slurp("run", path, &len);
    if (!text) return CLI_FAIL;
    pocketllm_status st = o->grammar_file ? pocketllm_grammar_new(model, text, "root", out)
                                          : pocketllm_grammar_from_json_schema(model, text, len, out);
    free(text);
    if (st) return cli_error("run", "%s: %s", path, pocketllm_last_error());
    return CLI_OK;
}

/* The output of a speculative run, for spec_loop's take(). */
typedef struct spec_out {
    const run_opts *o;
    const run_state *rs;
    pocketllm_detokenizer *detok;
    pocketllm_grammar *grammar;
    int32_t *gen;
    size_t n_gen;
} spec_out;

/* One id into the output: recorded and its text written; false when it
 * ends the generation (an end-of-generation id, or -n reached). */
static bool spec_take(void *user, int32_t id, pocketllm_status *st) {
    spec_out *so = user;
    so->gen[so->n_gen++] = id;
    const bool eog = pocketllm_token_is_eog(so->rs->model, id);
    if (!eog && so->detok && (*st = emit(so->detok, id))) return false;
    /* a whole match that nothing can extend ends it, as in the plain loop */
    return !eog && so->n_gen < (size_t)so->o->n_predict && !(so->grammar && pocketllm_grammar_done(so->grammar));
}

static size_t spec_room(void *user) {
    const spec_out *so = user;
    return (size_t)so->o->n_predict - so->n_gen;
}

/* The generation loop with speculative decoding (spec_loop.c) from the
 * prompt's end: gen receives the ids (the ending end-of-generation id
 * included); *context_full as in the plain loop. */
static pocketllm_status spec_generate(const run_opts *o, run_state *rs, spec_draft *dm, pocketllm_sampler *smp,
                                      pocketllm_grammar *grammar, pocketllm_detokenizer *detok, const int32_t *prompt,
                                      size_t n_prompt, int32_t *gen, size_t *n_gen, bool *context_full, spec_loop *L) {
    spec_out so = {o, rs, detok, grammar, gen, 0};
    memset(L, 0, sizeof *L);
    L->s = rs->session;
    L->smp = smp;
    L->n_vocab = rs->n_vocab;
    L->sampled = o->sp.temperature > 0;
    L->dm = dm;
    L->lookup = (int)o->lookup;
    L->draft_max = (size_t)o->draft_max;
    L->draft_min = (size_t)o->draft_min;
    L->grammar = grammar;
    L->cap = n_prompt + (size_t)o->n_predict + 1;
    L->hist = malloc(L->cap * sizeof *L->hist);
    if (!L->hist) return POCKETLLM_ERR_NO_MEMORY;
    memcpy(L->hist, prompt, n_prompt * sizeof *L->hist);
    L->n_hist = n_prompt;
    L->take = spec_take;
    L->room = spec_room;
    L->user = &so;
    pocketllm_status st = spec_loop_run(L);
    free(L->hist);
    L->hist = NULL;
    *n_gen = so.n_gen;
    *context_full = L->context_full;
    return st;
}

int cmd_run(int argc, char **argv) {
    run_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    if (!o.seed_given) o.sp.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

    run_state rs;
    media_run mr;
    memset(&mr, 0, sizeof mr);
    if ((rc = run_common_open(&o.common, &rs, "run"))) return rc;
    spec_draft dm;
    memset(&dm, 0, sizeof dm);
    /* the draft samples only where the acceptance rule reads its
     * distributions; under a constraint each row is the target's own draw
     * (spec_loop.h), which a draft's most likely id matches more often
     * than an independent draw of it does */
    const bool draft_samples = o.sp.temperature > 0 && !o.grammar_file && !o.schema_file;
    if (o.draft && (rc = spec_draft_open(o.draft, &o.common, rs.model, pocketllm_session_n_ctx(rs.session),
                                         draft_samples ? &o.sp : NULL, &dm, "run"))) {
        run_common_close(&rs);
        return rc;
    }
    pocketllm_sampler *smp = NULL;
    pocketllm_detokenizer *detok = NULL;
    pocketllm_grammar *grammar = NULL;
    int32_t *gen = malloc((size_t)o.n_predict * sizeof *gen);
    size_t n_gen = 0;
    pocketllm_status st = gen ? POCKETLLM_OK : POCKETLLM_ERR_NO_MEMORY;
    if (!st) st = pocketllm_sampler_new(&o.sp, &smp);
    if (!st && !o.print_ids) st = pocketllm_detokenizer_new(rs.model, 0, &detok);
    if (st) {
        rc = cli_lib_error("run", st);
        goto done;
    }
    if ((o.grammar_file || o.schema_file) && (rc = open_grammar(&o, rs.model, &grammar))) goto done;
    double t0 = cli_now();
    /* with the tower, markers in a prompt always mean images (as in libmtmd) */
    const bool media = o.mmproj && o.common.prompt;
    if (media) {
        if ((rc = media_eval(&o, &rs, &mr))) goto done;
        /* the sampler sees the prompt's text ids (an image token has none) */
        for (uint32_t i = 0; i < mr.n_ids; i++)
            if (mr.ids[i] >= 0) pocketllm_sampler_accept(smp, mr.ids[i]);
    } else {
        for (size_t i = 0; i < rs.n_prompt; i++) pocketllm_sampler_accept(smp, rs.prompt[i]);
        if ((st = pocketllm_session_eval(rs.session, rs.prompt, rs.n_prompt, 0))) {
            rc = cli_lib_error("run", st);
            goto done;
        }
    }
    const size_t n_prompt = media ? mr.n_ids : rs.n_prompt;
    double t1 = cli_now();
    const int32_t n_vocab = rs.n_vocab;
    bool context_full = false;
    spec_loop ss;
    memset(&ss, 0, sizeof ss);
    if (o.lookup || o.draft) {
        st = spec_generate(&o, &rs, &dm, smp, grammar, detok, media ? mr.ids : rs.prompt, n_prompt, gen, &n_gen,
                           &context_full, &ss);
        if (st) {
            rc = cli_lib_error("run", st);
            goto done;
        }
    }
    for (; !o.lookup && !o.draft;) {
        int32_t id;
        const int32_t budget = grammar ? (int32_t)(o.n_predict - (int64_t)n_gen) : -1;
        if ((st = pocketllm_sampler_sample_grammar(smp, grammar, pocketllm_session_logits(rs.session, -1), n_vocab,
                                                   budget, &id)) ||
            (grammar && (st = pocketllm_grammar_accept(grammar, id)))) {
            rc = cli_lib_error("run", st);
            goto done;
        }
        gen[n_gen++] = id;
        const bool eog = pocketllm_token_is_eog(rs.model, id);
        if (!eog && detok && (st = emit(detok, id))) {
            rc = cli_lib_error("run", st);
            goto done;
        }
        if (eog || n_gen == (size_t)o.n_predict) break;
        if (grammar && pocketllm_grammar_done(grammar)) break; /* a whole match that nothing can extend */
        if (pocketllm_session_n_past(rs.session) >= pocketllm_session_n_ctx(rs.session)) {
            context_full = true;
            break;
        }
        pocketllm_sampler_accept(smp, id);
        if ((st = pocketllm_session_eval(rs.session, &id, 1, 0))) {
            rc = cli_lib_error("run", st);
            goto done;
        }
    }
    double t2 = cli_now();
    if (detok) {
        char buf[64];
        size_t len;
        if (!pocketllm_detokenizer_flush(detok, buf, sizeof buf, &len)) fwrite(buf, 1, len, stdout);
        putchar('\n');
    }
    if (o.print_ids) {
        if (media) print_ids(mr.ids, mr.n_ids);
        else print_ids(rs.prompt, rs.n_prompt);
        print_ids(gen, n_gen);
    }
    fflush(stdout);
    if (context_full)
        fprintf(stderr, "pocketllm run: stopped after %zu tokens: the context of %u positions is full (raise --ctx)\n",
                n_gen, pocketllm_session_n_ctx(rs.session));
    if (o.timings)
        fprintf(stderr, "pocketllm run: prompt %zu tokens in %.3f s (%.1f tok/s), generated %zu in %.3f s (%.1f tok/s)\n",
                n_prompt, t1 - t0, (double)n_prompt / (t1 - t0 > 0 ? t1 - t0 : 1e-9), n_gen, t2 - t1,
                (double)n_gen / (t2 - t1 > 0 ? t2 - t1 : 1e-9));
    if (o.timings && (o.lookup || o.draft))
        fprintf(stderr, "pocketllm run: %s drafted %llu tokens, %llu kept (%.1f%%), %llu passes for %zu tokens\n",
                o.lookup ? "lookup" : "the draft model", (unsigned long long)ss.drafted, (unsigned long long)ss.accepted,
                ss.drafted ? 100.0 * (double)ss.accepted / (double)ss.drafted : 0.0, (unsigned long long)ss.passes,
                n_gen);
    rc = CLI_OK;
done:
    spec_draft_close(&dm);
    media_free(&mr);
    pocketllm_grammar_free(grammar);
    free(gen);
    pocketllm_detokenizer_free(detok);
    pocketllm_sampler_free(smp);
    run_common_close(&rs);
    return rc;
}
