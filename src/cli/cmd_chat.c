/*
 * cmd_chat.c -- `pocketllm chat`: an interactive conversation in the
 * terminal.  Each turn renders the whole history with the model's chat
 * template (as the server does, src/server/), evaluates what the session
 * does not hold yet, and streams the reply as it is sampled -- reasoning
 * (Qwen3's <think> block) dimmed, the answer plain.  Ctrl-C stops a reply
 * and keeps what was said; Ctrl-C or Ctrl-D at the prompt leaves.  Lines
 * ending in a backslash continue on the next line; /reset forgets the
 * conversation, /exit leaves.  With a vision tower (--mmproj), /image PATH
 * attaches an image to the next message: the message holds one media
 * marker per image in front of its text (as the server joins an image part
 * before a text part), and a turn that adds an image evaluates the whole
 * conversation again through the composition (runtime/media_prompt.h);
 * /audio PATH attaches an audio clip the same way (a Qwen3-ASR mmproj);
 * a turn that adds only text evaluates only the new text.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "srv_model.h"
#include "srv_text.h"
#include "spec_draft.h"
#include "spec_loop.h"
#include "srv_think.h"

#define CMD "chat"
#define CHAT_MAX_IMAGES 64

const char cmd_chat_usage[] =
    "usage: pocketllm chat --model M [--system TEXT] [-n N] [--temperature F] [--top-k K] [--top-p P]\n"
    "                      [--min-p P] [--repeat-penalty F] [--presence-penalty F] [--frequency-penalty F]\n"
    "                      [--seed S] [-t N] [--ctx N] [--batch N] [--kv T] [-ctk T] [-ctv T] [--flash-attn on|off]\n"
    "                      [--template FILE] [--device D] [--device-memory S]\n"
    "                      [--enable-thinking true|false] [--hide-reasoning]\n"
    "                      [--lookup N | --draft M [--draft-max N] [--draft-min N]]\n"
    "                      [--mmproj FILE [--image-min-tokens N] [--image-max-tokens N]]\n\n"
    "Chat with the model in the terminal.  Every turn renders the conversation with the model's\n"
    "chat template (tokenizer.chat_template; --template FILE replaces it) exactly as 'pocketllm\n"
    "serve' does, evaluates only what the session does not hold yet, and streams the reply.  A\n"
    "reply's <think>...</think> block is shown dimmed (on a terminal; elsewhere between\n"
    "[reasoning] and [/reasoning] lines) and kept out of the history as the template does.\n\n"
    "Keys: Enter sends the line (a line ending in '\\' continues on the next one); Ctrl-C during a\n"
    "reply stops it (what was said stays in the history); Ctrl-C or Ctrl-D at the prompt leaves.\n"
    "Commands: /image PATH attaches an image (JPEG, PNG or WebP) to the next message (several\n"
    "may be attached; needs --mmproj), /audio PATH an audio clip (with a Qwen3-ASR mmproj),\n"
    "/reset forgets the conversation, /help lists the commands, /exit leaves.\n\n"
    "  --model M, -m M        the GGUF checkpoint (it needs a chat template, or --template)\n"
    "  --mmproj FILE          the model's vision tower (a Qwen3-VL mmproj GGUF): enables /image;\n"
    "                         a Qwen3-ASR mmproj (audio tower) enables /audio\n"
    "  --image-min-tokens N, --image-max-tokens N   an image's token budget, as llama.cpp's\n"
    "                         (default 8 and 4096)\n"
    "  --system TEXT          a system message at the start of the conversation\n"
    "  -n N                   most tokens of one reply (default: until the context is full)\n"
    "  --temperature F        0 (the default) is greedy; sampling options as for 'pocketllm run':\n"
    "  --top-k K, --top-p P, --min-p P, --repeat-penalty F, --presence-penalty F,\n"
    "  --frequency-penalty F, --repeat-last-n N\n"
    "  --seed S               seed of the sampler (default: from the clock); reply k uses S + k\n"
    "  -t N, --threads N      threads (default: the physical cores)\n"
    "  --ctx N, -c N          context positions for the whole conversation (default: the model's,\n"
    "                         at most 4096)\n"
    "  --batch N, -b N        most tokens per forward pass of a prompt (default 512)\n"
    CLI_KV_HELP
    "  --flash-attn on|off    llama.cpp's flash-attention arithmetic (default off; see 'pocketllm run')\n"
    "  --template FILE        a Jinja chat template instead of the model's\n"
    CLI_DEVICE_HELP
    "  --enable-thinking B    pass enable_thinking=B to the template (Qwen3: false skips thinking)\n"
    "  --hide-reasoning       do not show the reasoning\n"
    "  --lookup N             speculative decoding by prompt lookup (n-grams of up to N tokens of the\n"
    "                         conversation, 1..8), as for 'pocketllm run': the same replies, fewer passes\n"
    "  --draft M, -md M       speculative decoding with a draft model (the model's vocabulary, opened\n"
    "                         on the same device with the same cache settings)\n"
    "  --draft-max N, --draft-min N  most / fewest drafted tokens a pass verifies (default 8 / 1)\n"
    "                         (with --lookup or --draft, the count of drafted and kept tokens is printed on\n"
    "                         stderr when the chat ends; neither goes with --mmproj yet)\n";

typedef struct chat_opts {
    srv_model_params mp;
    const char *system;
    int64_t n_predict; /* -1: until the context is full */
    pocketllm_sampler_params sp;
    bool seed_given, hide_reasoning;
    int enable_thinking;
    uint32_t n_batch, kv_type, kv_type_v;
    int flash_attn; /* --flash-attn: 1, 0, or -1 not given (cli_flash_auto) */
    cli_device device;
    int64_t lookup, draft_max, draft_min; /* speculative decoding (spec_loop.c) */
    const char *draft;
} chat_opts;

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

/* ---- options ----------------------------------------------------------------------- */

typedef struct num_opt {
    const char *name, *alias;
    double lo, hi;
    bool integer;
    const char *want;
} num_opt;

static const num_opt NUMS[] = {
    {"-n", "--n-predict", 1, 1 << 24, true, "a token count of 1 or more"},
    {"--temperature", "--temp", 0, 1e6, false, "a number >= 0"},
    {"--top-k", NULL, 0, 1 << 30, true, "a count >= 0 (0 = off)"},
    {"--top-p", NULL, 0, 1, false, "a number in [0, 1]"},
    {"--min-p", NULL, 0, 1, false, "a number in [0, 1]"},
    {"--repeat-penalty", NULL, 1e-6, 1e6, false, "a number > 0"},
    {"--presence-penalty", NULL, -1e6, 1e6, false, "a number"},
    {"--frequency-penalty", NULL, -1e6, 1e6, false, "a number"},
    {"--repeat-last-n", NULL, -1, 1 << 24, true, "-1 (all) or a count"},
    {"--seed", NULL, 0, 9007199254740992.0, true, "a number >= 0"},
    {"-t", "--threads", 1, 1024, true, "a thread count 1..1024"},
    {"--ctx", "-c", 16, 1 << 24, true, "a position count 16..16777216"},
    {"--batch", "-b", 1, 65536, true, "a token count 1..65536"},
};

static void set_num(chat_opts *o, size_t which, double d) {
    switch (which) {
    case 0: o->n_predict = (int64_t)d; break;
    case 1: o->sp.temperature = (float)d; break;
    case 2: o->sp.top_k = (int32_t)d; break;
    case 3: o->sp.top_p = (float)d; break;
    case 4: o->sp.min_p = (float)d; break;
    case 5: o->sp.repeat_penalty = (float)d; break;
    case 6: o->sp.presence_penalty = (float)d; break;
    case 7: o->sp.frequency_penalty = (float)d; break;
    case 8: o->sp.penalty_last_n = (int32_t)d; break;
    case 9: o->sp.seed = (uint64_t)d, o->seed_given = true; break;
    case 10: o->mp.n_threads = (int)d; break;
    case 11: o->mp.n_ctx = (uint32_t)d; break;
    case 12: o->n_batch = (uint32_t)d; break;
    }
}

static int parse(int argc, char **argv, chat_opts *o) {
    const char *v, *err = NULL;
    int frc = 0;
    for (int i = 1; i < argc; i++) {
        bool matched = false;
        for (size_t k = 0; k < sizeof NUMS / sizeof *NUMS && !matched; k++) {
            const num_opt *n = &NUMS[k];
            if (!cli_opt(argc, argv, &i, n->name, &v, &err) && !(n->alias && cli_opt(argc, argv, &i, n->alias, &v, &err)))
                continue;
            matched = true;
            if (err) return cli_usage(CMD, "%s %s", n->name, err);
            int64_t iv;
            double d;
            if (n->integer ? !cli_parse_i64(v, (int64_t)n->lo, (int64_t)n->hi, &iv) : !cli_parse_f64(v, n->lo, n->hi, &d))
                return cli_usage(CMD, "%s wants %s, not '%s'", n->name, n->want, v);
            set_num(o, k, n->integer ? (double)iv : d);
        }
        if (matched) continue;
        if (cli_opt(argc, argv, &i, "--model", &v, &err) || cli_opt(argc, argv, &i, "-m", &v, &err)) {
            if (err) return cli_usage(CMD, "--model %s", err);
            o->mp.path = v;
        } else if (cli_opt(argc, argv, &i, "--system", &v, &err)) {
            if (err) return cli_usage(CMD, "--system %s", err);
            o->system = v;
        } else if (cli_opt(argc, argv, &i, "--mmproj", &v, &err)) {
            if (err) return cli_usage(CMD, "--mmproj %s", err);
            o->mp.mmproj_path = v;
        } else if (cli_opt(argc, argv, &i, "--image-min-tokens", &v, &err) ||
                   cli_opt(argc, argv, &i, "--image-max-tokens", &v, &err)) {
            const bool min = !strcmp(argv[i - 1], "--image-min-tokens");
            if (err) return cli_usage(CMD, "%s %s", min ? "--image-min-tokens" : "--image-max-tokens", err);
            int64_t n;
            if (!cli_parse_i64(v, 1, 1 << 20, &n))
                return cli_usage(CMD, "%s wants a count 1..1048576, not '%s'", argv[i - 1], v);
            if (min) o->mp.image_min_tokens = (uint32_t)n;
            else o->mp.image_max_tokens = (uint32_t)n;
        } else if (cli_opt(argc, argv, &i, "--template", &v, &err)) {
            if (err) return cli_usage(CMD, "--template %s", err);
            o->mp.template_path = v;
        } else if (cli_opt_flash(argc, argv, &i, CMD, &o->flash_attn, &frc)) {
            if (frc) return frc;
        } else if (cli_opt_device(argc, argv, &i, CMD, &o->device, &frc)) {
            if (frc) return frc;
        } else if (cli_opt_kv(argc, argv, &i, CMD, &o->kv_type, &o->kv_type_v, &frc)) {
            if (frc) return frc;
        } else if (cli_opt(argc, argv, &i, "--enable-thinking", &v, &err)) {
            if (err) return cli_usage(CMD, "--enable-thinking %s", err);
            if (!strcmp(v, "true")) o->enable_thinking = 1;
            else if (!strcmp(v, "false")) o->enable_thinking = 0;
            else return cli_usage(CMD, "--enable-thinking wants true or false, not '%s'", v);
        } else if (!strcmp(argv[i], "--hide-reasoning")) {
            o->hide_reasoning = true;
        } else if (cli_opt(argc, argv, &i, "--draft", &v, &err) || cli_opt(argc, argv, &i, "-md", &v, &err)) {
            if (err) return cli_usage(CMD, "--draft %s", err);
            o->draft = v;
        } else if (cli_opt(argc, argv, &i, "--lookup", &v, &err) || cli_opt(argc, argv, &i, "--draft-max", &v, &err) ||
                   cli_opt(argc, argv, &i, "--draft-min", &v, &err)) {
            const char *name = argv[i - 1];
            const bool lookup = !strcmp(name, "--lookup");
            if (err) return cli_usage(CMD, "%s %s", name, err);
            int64_t n;
            if (!cli_parse_i64(v, 1, lookup ? 8 : 64, &n))
                return cli_usage(CMD, "%s wants %s, not '%s'", name, lookup ? "the longest n-gram, 1..8" : "1..64", v);
            if (lookup) o->lookup = n;
            else if (!strcmp(name, "--draft-max")) o->draft_max = n;
            else o->draft_min = n;
        } else {
            return cli_usage(CMD, "unknown argument '%s'", argv[i]);
        }
    }
    if (!o->mp.path) return cli_usage(CMD, "needs --model M");
    if (o->lookup && o->draft) return cli_usage(CMD, "--lookup and --draft are two ways to draft: give one");
    if ((o->lookup || o->draft) && o->mp.mmproj_path)
        return cli_usage(CMD, "--lookup and --draft do not go with --mmproj yet");
    if (o->draft_min > o->draft_max) return cli_usage(CMD, "--draft-min is larger than --draft-max");
    if ((o->mp.image_min_tokens || o->mp.image_max_tokens) && !o->mp.mmproj_path)
        return cli_usage(CMD, "--image-min-tokens and --image-max-tokens need --mmproj FILE");
    return cli_device_srv_params(CMD, &o->device, &o->mp);
}

/* ---- one turn ---------------------------------------------------------------------- */

typedef struct chat {
    chat_opts *o;
    srv_model m;
    pocketllm_session *s;
    cJSON *history;
    int32_t *held;          /* the ids the session holds, in order (an image's rows: -1) */
    size_t n_held, cap_held;
    pocketllm_image *images[CHAT_MAX_IMAGES]; /* the conversation's media, in marker order: */
    pocketllm_audio *audios[CHAT_MAX_IMAGES]; /* each slot an image or (/audio) a clip */
    pocketllm_media media[CHAT_MAX_IMAGES];
    size_t n_images;
    size_t n_pending;       /* the last of them, attached to the next message */
    bool tty, in_reasoning;
    unsigned turn;
    spec_draft dm;          /* --draft: the draft model (dm.s NULL without) */
    uint64_t drafted, accepted, passes; /* speculative decoding, over the chat */
} chat;

static bool add_message(cJSON *history, const char *role, const char *content, const char *reasoning) {
    cJSON *m = cJSON_CreateObject();
    if (!m) return false;
    cJSON_AddStringToObject(m, "role", role);
    cJSON_AddStringToObject(m, "content", content);
    if (reasoning) cJSON_AddStringToObject(m, "reasoning_content", reasoning);
    cJSON_AddItemToArray(history, m);
    return true;
}

/* The prompt of the whole conversation as ids (NULL with a message). */
static int32_t *render(chat *c, size_t *n, char **prompt_text, bool *add_special) {
    char *json = cJSON_PrintUnformatted(c->history);
    if (!json) return NULL;
    pocketllm_chat_options opt = pocketllm_chat_default_options();
    opt.add_generation_prompt = 1;
    opt.enable_thinking = c->o->enable_thinking;
    opt.bos_token = c->m.bos_text;
    opt.eos_token = c->m.eos_text;
    char *text = NULL;
    size_t len = 0;
    pocketllm_status st = pocketllm_chat_render_json(c->m.tmpl, json, &opt, &text, &len);
    free(json);
    if (st) {
        fprintf(stderr, "pocketllm chat: the template refused the conversation: %s\n", pocketllm_last_error());
        return NULL;
    }
    const size_t cap = (size_t)pocketllm_session_n_ctx(c->s) + 1;
    int32_t *ids = malloc(cap * sizeof *ids);
    size_t need = 0;
    const bool has_bos = c->m.bos_text && *c->m.bos_text && !strncmp(text, c->m.bos_text, strlen(c->m.bos_text));
    if (!ids) {
        st = POCKETLLM_ERR_NO_MEMORY;
    } else if (c->n_images) {
        /* the composition's rows, each image token as -1 */
        uint32_t rows = 0;
        st = pocketllm_media_list_tokens(c->m.model, c->m.mm, text, len, c->media, c->n_images, !has_bos, 1, ids, cap,
                                         &rows);
        need = rows;
    } else {
        st = pocketllm_tokenize(c->m.model, text, len, !has_bos, 1, ids, cap, &need);
    }
    if (st || need >= cap - 1) {
        if (st == POCKETLLM_ERR_INVALID_ARGUMENT || need >= cap - 1)
            fprintf(stderr, "pocketllm chat: the conversation (%zu tokens) no longer fits the context of %u; /reset "
                            "starts over\n", need, pocketllm_session_n_ctx(c->s));
        else
            fprintf(stderr, "pocketllm chat: %s\n", pocketllm_last_error());
        free(ids);
        pocketllm_chat_free(text);
        return NULL;
    }
    *n = need;
    *prompt_text = text;
    *add_special = !has_bos;
    return ids;
}

/* Make the session hold exactly ids[0..n): keep the common start, evaluate
 * the rest in pieces (so that Ctrl-C is heard during a long prompt). */
static pocketllm_status sync_session(chat *c, const int32_t *ids, size_t n) {
    size_t common = 0;
    while (common < n && common < c->n_held && ids[common] == c->held[common]) common++;
    if (common >= n) common = n - 1; /* the last id is evaluated again by the caller, for its logits */
    if (common < c->n_held) {
        /* keep what the new prompt shares with what the session holds */
        pocketllm_status st = pocketllm_session_seq_truncate(c->s, 0, (uint32_t)common);
        if (st) return st;
        c->n_held = common;
    }
    if (n > c->cap_held) {
        int32_t *h = realloc(c->held, n * sizeof *h);
        if (!h) return POCKETLLM_ERR_NO_MEMORY;
        c->held = h;
        c->cap_held = n;
    }
    /* the last id is evaluated by the caller, for its logits */
    for (size_t at = common; at + 1 < n && !interrupted;) {
        size_t k = n - 1 - at < 64 ? n - 1 - at : 64;
        pocketllm_status st = pocketllm_session_eval(c->s, ids + at, k, 0);
        if (st) return st;
        memcpy(c->held + at, ids + at, k * sizeof *ids);
        at += k;
        c->n_held = at;
    }
    return POCKETLLM_OK;
}

/* With images: when every image row of the new prompt is already held (the
 * images' rows match, -1 for -1: the history only grows, so the same rows
 * hold the same image), only text is left and sync_session does it.
 * Otherwise the whole conversation is composed again from the start
 * (the text around an image is tokenized piece by piece, so a tail cannot
 * be composed alone); *logits_ready then says the last token's logits are
 * there. */
static pocketllm_status sync_media(chat *c, const int32_t *ids, size_t n, const char *text, bool add_special,
                                   bool *logits_ready) {
    *logits_ready = false;
    size_t common = 0;
    while (common < n && common < c->n_held && ids[common] == c->held[common]) common++;
    bool image_left = false;
    for (size_t i = common; i < n && !image_left; i++) image_left = ids[i] < 0;
    if (!image_left) return sync_session(c, ids, n);
    if (n > c->cap_held) {
        int32_t *h = realloc(c->held, n * sizeof *h);
        if (!h) return POCKETLLM_ERR_NO_MEMORY;
        c->held = h;
        c->cap_held = n;
    }
    pocketllm_status st = pocketllm_session_seq_truncate(c->s, 0, 0);
    c->n_held = 0;
    if (!st)
        st = pocketllm_session_eval_media_list(c->s, 0, c->m.mm, text, strlen(text), c->media, c->n_images, add_special,
                                               1);
    if (st) return st;
    memcpy(c->held, ids, n * sizeof *ids);
    c->n_held = n;
    *logits_ready = true;
    return POCKETLLM_OK;
}

static void show(chat *c, const srv_buf *r, const srv_buf *t) {
    if (r->n && !c->o->hide_reasoning) {
        if (!c->in_reasoning) fputs(c->tty ? "\x1b[2m" : "[reasoning]\n", stdout);
        c->in_reasoning = true;
        fwrite(r->p, 1, r->n, stdout);
    }
    if (t->n) {
        if (c->in_reasoning) fputs(c->tty ? "\x1b[0m\n" : "\n[/reasoning]\n", stdout);
        c->in_reasoning = false;
        fwrite(t->p, 1, t->n, stdout);
    }
    fflush(stdout);
}

/* Push one id's text through the detokenizer and the reasoning split. */
static pocketllm_status emit(chat *c, pocketllm_detokenizer *d, srv_think *th, int32_t id, bool final) {
    char small[512], *buf = small;
    size_t len = 0;
    pocketllm_status st = POCKETLLM_OK;
    if (id >= 0) {
        st = pocketllm_detokenizer_push(d, id, small, sizeof small, &len);
        if (st == POCKETLLM_ERR_INVALID_ARGUMENT && len > sizeof small && (buf = malloc(len)))
            st = pocketllm_detokenizer_push(d, id, buf, len, &len);
    } else {
        st = pocketllm_detokenizer_flush(d, small, sizeof small, &len);
    }
    srv_buf r = {0}, t = {0};
    if (!st) st = srv_think_push(th, buf, len, final, &r, &t);
    if (!st) show(c, &r, &t);
    if (buf != small) free(buf);
    srv_buf_free(&r);
    srv_buf_free(&t);
    return st;
}

/* What one reply's speculative loop shows and counts (spec_loop's take). */
typedef struct chat_spec {
    chat *c;
    pocketllm_detokenizer *d;
    srv_think *th;
    int64_t n_gen;
} chat_spec;

/* One id of the reply: shown, as the plain loop shows it; false when it
 * ends the reply (an end-of-generation id, -n reached, Ctrl-C). */
static bool spec_take(void *user, int32_t id, pocketllm_status *st) {
    chat_spec *cs = user;
    cs->n_gen++;
    if (pocketllm_token_is_eog(cs->c->m.model, id)) return false;
    if ((*st = emit(cs->c, cs->d, cs->th, id, false))) return false;
    if (cs->c->o->n_predict > 0 && cs->n_gen >= cs->c->o->n_predict) return false;
    return !interrupted;
}

static size_t spec_room(void *user) {
    const chat_spec *cs = user;
    return cs->c->o->n_predict > 0 ? (size_t)(cs->c->o->n_predict - cs->n_gen) : SIZE_MAX;
}

/* The reply by speculative decoding (--lookup, --draft): the ids the
 * session holds are the history drafts come from, and stay c->held. */
static pocketllm_status spec_reply(chat *c, pocketllm_sampler *smp, bool sampled, pocketllm_detokenizer *d,
                                   srv_think *th, bool *full) {
    chat_spec cs = {c, d, th, 0};
    spec_loop L;
    memset(&L, 0, sizeof L);
    L.s = c->s;
    L.smp = smp;
    L.n_vocab = pocketllm_session_n_vocab(c->s);
    L.sampled = sampled;
    L.dm = &c->dm;
    L.lookup = (int)c->o->lookup;
    L.draft_max = (size_t)c->o->draft_max;
    L.draft_min = (size_t)c->o->draft_min;
    L.hist = c->held;
    L.n_hist = c->n_held;
    L.cap = c->cap_held;
    L.take = spec_take;
    L.room = spec_room;
    L.user = &cs;
    pocketllm_status st = spec_loop_run(&L);
    c->held = L.hist;
    c->cap_held = L.cap;
    /* the last id taken is held only when it was evaluated */
    const size_t past = pocketllm_session_n_past(c->s);
    c->n_held = L.n_hist < past ? L.n_hist : past;
    c->drafted += L.drafted, c->accepted += L.accepted, c->passes += L.passes;
    *full = L.context_full;
    return st;
}

/* One reply to the conversation so far; false when the turn could not run. */
static bool reply(chat *c) {
    size_t n = 0;
    char *prompt = NULL;
    bool add_special = true, logits_ready = false;
    int32_t *ids = render(c, &n, &prompt, &add_special);
    if (!ids) return false;
    pocketllm_sampler_params sp = c->o->sp;
    sp.seed += c->turn++;
    pocketllm_sampler *smp = NULL;
    pocketllm_detokenizer *d = NULL;
    srv_think th;
    srv_think_init(&th, c->m.tmpl, prompt);
    pocketllm_status st = pocketllm_sampler_new(&sp, &smp);
    if (!st) st = pocketllm_detokenizer_new(c->m.model, 0, &d);
    if (!st && c->dm.s) {
        /* the draft model holds a start of what the session holds: keep
         * what the new prompt shares with it */
        size_t common = 0;
        while (common < n && common < c->n_held && ids[common] == c->held[common]) common++;
        st = spec_draft_keep(&c->dm, common);
    }
    if (!st) st = c->n_images ? sync_media(c, ids, n, prompt, add_special, &logits_ready) : sync_session(c, ids, n);
    if (!st && !interrupted && !logits_ready) {
        st = pocketllm_session_eval(c->s, ids + n - 1, 1, 0);
        if (!st) c->held[n - 1] = ids[n - 1], c->n_held = n;
    }
    /* the penalties see the prompt's text ids, not the image rows */
    for (size_t i = 0; !st && i < n; i++)
        if (ids[i] >= 0) pocketllm_sampler_accept(smp, ids[i]);
    const int32_t n_vocab = pocketllm_session_n_vocab(c->s);
    int64_t n_gen = 0;
    bool full = false;
    c->in_reasoning = false;
    const bool spec = c->o->lookup || c->o->draft;
    if (!st && !interrupted && spec) st = spec_reply(c, smp, sp.temperature > 0, d, &th, &full);
    while (!st && !interrupted && !spec) {
        int32_t id;
        if ((st = pocketllm_sampler_sample(smp, pocketllm_session_logits(c->s, -1), n_vocab, &id))) break;
        n_gen++;
        if (pocketllm_token_is_eog(c->m.model, id)) break;
        if ((st = emit(c, d, &th, id, false))) break;
        if (c->o->n_predict > 0 && n_gen >= c->o->n_predict) break;
        if (pocketllm_session_n_past(c->s) >= pocketllm_session_n_ctx(c->s)) {
            full = true;
            break;
        }
        pocketllm_sampler_accept(smp, id);
        if ((st = pocketllm_session_eval(c->s, &id, 1, 0))) break;
        if (c->n_held == c->cap_held) {
            size_t cap = c->cap_held * 2 + 16;
            int32_t *h = realloc(c->held, cap * sizeof *h);
            if (!h) {
                st = POCKETLLM_ERR_NO_MEMORY;
                break;
            }
            c->held = h;
            c->cap_held = cap;
        }
        c->held[c->n_held++] = id;
    }
    if (!st) st = emit(c, d, &th, -1, true);
    if (c->in_reasoning) fputs(c->tty ? "\x1b[0m" : "\n[/reasoning]", stdout);
    const bool stopped = interrupted;
    fputs(stopped ? (c->tty ? " \x1b[2m[stopped]\x1b[0m\n" : " [stopped]\n") : "\n", stdout);
    fflush(stdout);
    if (full) fprintf(stderr, "pocketllm chat: the context of %u positions is full; /reset starts over\n", pocketllm_session_n_ctx(c->s));
    if (st) fprintf(stderr, "pocketllm chat: %s\n", pocketllm_last_error());
    /* the reply joins the history as the template will split it */
    bool ok = !st;
    if (ok) {
        pocketllm_chat_split sp2;
        if (pocketllm_chat_split_reasoning(c->m.tmpl, prompt, th.text.p ? th.text.p : "", th.text.n, &sp2) == POCKETLLM_OK) {
            add_message(c->history, "assistant", sp2.content, sp2.has_reasoning ? sp2.reasoning : NULL);
            pocketllm_chat_split_free(&sp2);
        } else {
            ok = false;
        }
    }
    interrupted = 0;
    srv_think_free(&th);
    pocketllm_detokenizer_free(d);
    pocketllm_sampler_free(smp);
    pocketllm_chat_free(prompt);
    free(ids);
    return ok;
}

/* ---- the loop ------------------------------------------------------------------------ */

/* Wait until the terminal has input; false when Ctrl-C comes first.
 * SIGINT stays blocked except inside pselect, so that it cannot land
 * between the check of the flag and the wait (and be missed by a read
 * that then blocks). */
static bool wait_for_input(void) {
    sigset_t block, orig;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &orig);
    bool ready = false;
    while (!interrupted) {
        fd_set rd;
        FD_ZERO(&rd);
        FD_SET(0, &rd);
        int r = pselect(1, &rd, NULL, NULL, NULL, &orig);
        if (r > 0) {
            ready = true;
            break;
        }
        if (r < 0 && errno != EINTR) break;
    }
    sigprocmask(SIG_SETMASK, &orig, NULL);
    return ready && !interrupted;
}

/* One line of input (with '\' continuations); NULL at EOF or Ctrl-C.  On a
 * terminal a line arrives whole, so waiting on the descriptor before
 * reading never leaves buffered input behind. */
static char *read_input(bool tty) {
    srv_buf b = {0};
    char *line = NULL;
    size_t cap = 0;
    for (;;) {
        if (tty) {
            fputs(b.n ? ". " : "> ", stdout);
            fflush(stdout);
        }
        if (tty && !wait_for_input()) {
            free(line);
            srv_buf_free(&b);
            return NULL;
        }
        ssize_t k = getline(&line, &cap, stdin);
        if (k < 0 || interrupted) {
            free(line);
            srv_buf_free(&b);
            return NULL;
        }
        while (k > 0 && (line[k - 1] == '\n' || line[k - 1] == '\r')) line[--k] = '\0';
        const bool more = k > 0 && line[k - 1] == '\\';
        if (more) line[--k] = '\0';
        if (b.n) srv_buf_add(&b, "\n", 1);
        srv_buf_add(&b, line, (size_t)k);
        if (!more) break;
    }
    free(line);
    return srv_buf_take(&b, NULL);
}

static void drop_images(chat *c, size_t keep) {
    while (c->n_images > keep) {
        --c->n_images;
        pocketllm_image_free(c->images[c->n_images]);
        pocketllm_audio_free(c->audios[c->n_images]);
        c->images[c->n_images] = NULL;
        c->audios[c->n_images] = NULL;
        c->media[c->n_images] = (pocketllm_media){NULL, NULL};
    }
    if (c->n_pending > c->n_images) c->n_pending = c->n_images;
}

/* /image PATH: one more image for the next message; false (with a line
 * on stderr) when it cannot be. */
static bool attach_image(chat *c, const char *path) {
    while (*path == ' ' || *path == '\t') path++;
    if (!c->m.mm) {
        fprintf(stderr, "pocketllm chat: /image needs the vision tower: start chat with --mmproj FILE\n");
        return false;
    }
    if (!*path) {
        fprintf(stderr, "pocketllm chat: /image wants a file: /image PATH\n");
        return false;
    }
    if (c->n_images == CHAT_MAX_IMAGES) {
        fprintf(stderr, "pocketllm chat: a conversation holds at most %d images; /reset starts over\n", CHAT_MAX_IMAGES);
        return false;
    }
    pocketllm_image *img = NULL;
    if (pocketllm_image_load(path, &img)) {
        fprintf(stderr, "pocketllm chat: %s\n", pocketllm_last_error());
        return false;
    }
    uint32_t tokens = 0;
    if (pocketllm_mmproj_image_tokens(c->m.mm, img, &tokens, NULL, NULL)) {
        fprintf(stderr, "pocketllm chat: %s: %s\n", path, pocketllm_last_error());
        pocketllm_image_free(img);
        return false;
    }
    c->images[c->n_images] = img;
    c->media[c->n_images++].image = img;
    c->n_pending++;
    printf("(image %zu attached: %ux%u, %u tokens; it goes with your next message)\n", c->n_pending,
           pocketllm_image_width(img), pocketllm_image_height(img), tokens);
    fflush(stdout);
    return true;
}

/* /audio PATH: one more audio clip for the next message (an mmproj with an
 * audio tower, Qwen3-ASR's); false (with a line on stderr) when it cannot be. */
static bool attach_audio(chat *c, const char *path) {
    while (*path == ' ' || *path == '\t') path++;
    pocketllm_mmproj_info info;
    if (!c->m.mm || pocketllm_mmproj_get_info(c->m.mm, &info) || !info.has_audio) {
        fprintf(stderr, "pocketllm chat: /audio needs an audio tower: start chat with --mmproj FILE of a Qwen3-ASR model\n");
        return false;
    }
    if (!*path) {
        fprintf(stderr, "pocketllm chat: /audio wants a file: /audio PATH\n");
        return false;
    }
    if (c->n_images == CHAT_MAX_IMAGES) {
        fprintf(stderr, "pocketllm chat: a conversation holds at most %d media items; /reset starts over\n",
                CHAT_MAX_IMAGES);
        return false;
    }
    pocketllm_audio *a = NULL;
    if (pocketllm_audio_load(path, &a)) {
        const char *e = pocketllm_last_error();
        /* (the decoder's messages name the file already) */
        fprintf(stderr, "pocketllm chat: %s%s%s\n", strstr(e, path) ? "" : path, strstr(e, path) ? "" : ": ", e);
        return false;
    }
    uint32_t tokens = 0;
    if (pocketllm_mmproj_audio_tokens(c->m.mm, a, &tokens)) {
        fprintf(stderr, "pocketllm chat: %s: %s\n", path, pocketllm_last_error());
        pocketllm_audio_free(a);
        return false;
    }
    c->audios[c->n_images] = a;
    c->media[c->n_images++].audio = a;
    c->n_pending++;
    printf("(audio %zu attached: %.1f s, %u tokens; it goes with your next message)\n", c->n_pending,
           pocketllm_audio_seconds(a), tokens);
    fflush(stdout);
    return true;
}

/* The next user message: one media marker per attached image, then the text. */
static char *with_markers(const chat *c, const char *line) {
    srv_buf b = {0};
    for (size_t i = 0; i < c->n_pending; i++) srv_buf_str(&b, pocketllm_media_marker());
    srv_buf_str(&b, line);
    if (b.oom) {
        srv_buf_free(&b);
        return NULL;
    }
    return srv_buf_take(&b, NULL);
}

static bool reset_history(chat *c) {
    drop_images(c, 0);
    c->n_pending = 0;
    cJSON_Delete(c->history);
    c->history = cJSON_CreateArray();
    return c->history && (!c->o->system || add_message(c->history, "system", c->o->system, NULL));
}

int cmd_chat(int argc, char **argv) {
    chat_opts o;
    memset(&o, 0, sizeof o);
    o.n_predict = -1;
    o.sp = pocketllm_sampler_default_params();
    o.enable_thinking = -1;
    o.kv_type = 1;
    o.kv_type_v = POCKETLLM_KV_AS_K;
    o.flash_attn = -1;
    o.mp.n_ctx = 0;
    o.draft_max = 8;
    o.draft_min = 1;
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    if (!o.seed_given) o.sp.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

    chat c;
    memset(&c, 0, sizeof c);
    c.o = &o;
    c.tty = isatty(1);
    char *err = NULL;
    if (srv_model_open(&o.mp, &c.m, &err)) {
        rc = cli_error(CMD, "%s", err ? err : "cannot open the model");
        free(err);
        return rc;
    }
    if (!c.m.tmpl) {
        srv_model_close(&c.m);
        return cli_error(CMD, "the model has no chat template (give one with --template FILE)");
    }
    pocketllm_session_params sp = pocketllm_session_default_params();
    sp.n_ctx = c.m.n_ctx;
    sp.n_batch = o.n_batch;
    sp.kv_type = o.kv_type;
    sp.kv_type_v = o.kv_type_v;
    sp.flash_attn = cli_flash_auto(o.flash_attn, o.kv_type, o.kv_type_v);
    sp.n_threads = o.mp.n_threads;
    if (pocketllm_session_new(c.m.model, &sp, &c.s) || !reset_history(&c)) {
        rc = cli_error(CMD, "%s", pocketllm_last_error());
        pocketllm_session_free(c.s);
        cJSON_Delete(c.history);
        srv_model_close(&c.m);
        return rc;
    }
    if (o.draft) {
        /* the draft's session as the target's: its device, threads and cache */
        run_common rc_draft;
        run_common_defaults(&rc_draft);
        rc_draft.n_threads = o.mp.n_threads;
        rc_draft.n_batch = o.n_batch;
        rc_draft.kv_type = o.kv_type;
        rc_draft.kv_type_v = o.kv_type_v;
        rc_draft.flash_attn = o.flash_attn;
        rc_draft.device = o.device;
        if ((rc = spec_draft_open(o.draft, &rc_draft, c.m.model, pocketllm_session_n_ctx(c.s),
                                  o.sp.temperature > 0 ? &o.sp : NULL, &c.dm, CMD))) {
            cJSON_Delete(c.history);
            pocketllm_session_free(c.s);
            srv_model_close(&c.m);
            return rc;
        }
    }
    /* Ctrl-C interrupts a read or a reply instead of ending the process */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);

    const bool in_tty = isatty(0);
    if (in_tty)
        fprintf(stderr, "pocketllm chat: %s, context %u%s.  Ctrl-C stops a reply; Ctrl-C or Ctrl-D here leaves; /reset "
                        "starts over%s; /help lists the commands.\n", c.m.id, pocketllm_session_n_ctx(c.s),
                cli_device_suffix(c.m.model), c.m.mm ? "; /image PATH attaches an image" : "");
    for (;;) {
        char *line = read_input(in_tty);
        if (!line) {
            if (in_tty) fputc('\n', stdout);
            break;
        }
        if (!strcmp(line, "/exit") || !strcmp(line, "/quit")) {
            free(line);
            break;
        }
        if (!strcmp(line, "/reset")) {
            free(line);
            if (!reset_history(&c)) break;
            fputs("(the conversation is forgotten)\n", stdout);
            continue;
        }
        if (!strcmp(line, "/help")) {
            free(line);
            fputs("/image PATH  attach an image (JPEG, PNG or WebP) to the next message (needs --mmproj)\n"
                  "/audio PATH  attach an audio clip (WAV, FLAC, MP3, Ogg) to the next message (needs a\n"
                  "             Qwen3-ASR --mmproj)\n"
                  "/reset       forget the conversation (and its images)\n"
                  "/exit        leave (Ctrl-D at the prompt too)\n"
                  "a line ending in '\\' continues on the next one; Ctrl-C stops a reply\n", stdout);
            continue;
        }
        if (!strncmp(line, "/audio", 6) && (line[6] == ' ' || line[6] == '\t' || !line[6])) {
            attach_audio(&c, line + 6);
            free(line);
            continue;
        }
        if (!strncmp(line, "/image", 6) && (line[6] == ' ' || line[6] == '\t' || !line[6])) {
            attach_image(&c, line + 6);
            free(line);
            continue;
        }
        if (!*line) {
            free(line);
            continue;
        }
        char *content = c.n_pending ? with_markers(&c, line) : line;
        if (content != line) free(line);
        if (!content) break;
        const size_t before = c.n_images - c.n_pending;
        add_message(c.history, "user", content, NULL);
        free(content);
        const bool done = reply(&c);
        if (!done) {
            /* the turn did not happen: it leaves no trace, its images included */
            cJSON_DeleteItemFromArray(c.history, cJSON_GetArraySize(c.history) - 1);
            drop_images(&c, before);
        }
        c.n_pending = 0;
    }
    fflush(stdout);
    if (o.lookup || o.draft)
        fprintf(stderr, "pocketllm chat: %s drafted %llu tokens, %llu kept (%.1f%%), in %llu passes\n",
                o.lookup ? "lookup" : "the draft model", (unsigned long long)c.drafted,
                (unsigned long long)c.accepted, c.drafted ? 100.0 * (double)c.accepted / (double)c.drafted : 0.0,
                (unsigned long long)c.passes);
    spec_draft_close(&c.dm);
    drop_images(&c, 0);
    free(c.held);
    cJSON_Delete(c.history);
    pocketllm_session_free(c.s);
    srv_model_close(&c.m);
    return CLI_OK;
}
