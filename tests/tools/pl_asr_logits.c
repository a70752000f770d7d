/*
 * pl_asr_logits.c -- teacher-forced logits of a prompt with audio clips
 * through the public C API (pocketllm_mmproj_open, pocketllm_audio_load,
 * pocketllm_session_eval_media_list), for test_asr_generate.sh to compare
 * against llama.cpp's (pl_mtmd generate --audio --out-logits):
 *
 *   pl_asr_logits MODEL MMPROJ --prompt P --audio F [--audio F2 ...]
 *                 --ids "1 2 3" --out FILE [--flash-attn on|off] [-t N]
 *
 * The prompt must hold one media marker per clip.  Evaluates the prompt,
 * then the ids one at a time, and writes len(ids) rows of n_vocab f32
 * logits to FILE: row k is what the next id is chosen from after the
 * prompt and ids[0..k-1].  Prints "n_tokens N n_vocab V" (N: the prompt's
 * positions).  Checks on the way: after the prompt, n_past is the count
 * pocketllm_media_list_tokens gave, and pocketllm_mmproj_audio_tokens
 * plus the delimiters account for the audio rows.  Exit 0, or 1 with the
 * reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_arg.h"
#include "pocketllm.h"

#define MAX_CLIPS 8

static int die(const char *what) {
    fprintf(stderr, "pl_asr_logits: %s: %s\n", what, pocketllm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pl_asr_logits MODEL MMPROJ --prompt P --audio F... --ids \"1 2\" --out FILE "
                        "[--flash-attn on|off] [-t N]\n");
        return 2;
    }
    const char *prompt = NULL, *ids_s = NULL, *out = NULL, *clips[MAX_CLIPS];
    int n_clips = 0;
    pocketllm_model_params mdp = pocketllm_model_default_params();
    pocketllm_session_params sp = pocketllm_session_default_params();
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "pl_asr_logits: %s wants a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--prompt")) prompt = v;
        else if (!strcmp(a, "--ids")) ids_s = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--flash-attn")) sp.flash_attn = !strcmp(v, "on");
        else if (!strcmp(a, "-t")) mdp.n_threads = sp.n_threads = atoi(v);
        else if (!strcmp(a, "--audio") && n_clips < MAX_CLIPS) clips[n_clips++] = v;
        else {
            fprintf(stderr, "pl_asr_logits: unknown argument '%s'\n", a);
            return 2;
        }
    }
    if (!prompt || !ids_s || !out || !n_clips) {
        fprintf(stderr, "pl_asr_logits: needs --prompt, --audio, --ids and --out\n");
        return 2;
    }
    pocketllm_model *m = NULL;
    pocketllm_mmproj *mm = NULL;
    pocketllm_session *s = NULL;
    pocketllm_audio *aud[MAX_CLIPS] = {0};
    pocketllm_media media[MAX_CLIPS];
    if (pocketllm_model_open(argv[1], &mdp, &m)) return die("model");
    pocketllm_mmproj_params mp = pocketllm_mmproj_default_params();
    if (pocketllm_mmproj_open(m, argv[2], &mp, &mm)) return die("mmproj");
    uint32_t audio_rows = 0;
    for (int i = 0; i < n_clips; i++) {
        if (pocketllm_audio_load(clips[i], &aud[i])) return die(clips[i]);
        media[i] = (pocketllm_media){NULL, aud[i]};
        uint32_t n = 0;
        if (pocketllm_mmproj_audio_tokens(mm, aud[i], &n)) return die("audio tokens");
        audio_rows += n;
    }
    int32_t ids[4096];
    const size_t n_ids = parse_ids(ids_s, ids, 4096);
    if (n_ids == 0) {
        fprintf(stderr, "pl_asr_logits: --ids has no ids\n");
        return 2;
    }
    const size_t len = strlen(prompt);
    uint32_t n_tok = 0;
    if (pocketllm_media_list_tokens(m, mm, prompt, len, media, (size_t)n_clips, 1, 1, NULL, 0, &n_tok))
        return die("prompt");
    int32_t *layout = malloc((n_tok ? n_tok : 1) * sizeof *layout);
    if (!layout) return 1;
    if (pocketllm_media_list_tokens(m, mm, prompt, len, media, (size_t)n_clips, 1, 1, layout, n_tok, &n_tok))
        return die("prompt ids");
    uint32_t minus = 0;
    for (uint32_t i = 0; i < n_tok; i++) minus += layout[i] < 0;
    free(layout);
    if (minus != audio_rows) {
        fprintf(stderr, "pl_asr_logits: the prompt has %u audio rows, pocketllm_mmproj_audio_tokens says %u\n", minus,
                audio_rows);
        return 1;
    }
    sp.n_ctx = n_tok + (uint32_t)n_ids + 8;
    if (pocketllm_session_new(m, &sp, &s)) return die("session");
    if (pocketllm_session_eval_media_list(s, 0, mm, prompt, len, media, (size_t)n_clips, 1, 1)) return die("eval");
    if (pocketllm_session_n_past(s) != n_tok) {
        fprintf(stderr, "pl_asr_logits: the prompt filled %u positions, pocketllm_media_list_tokens said %u\n",
                pocketllm_session_n_past(s), n_tok);
        return 1;
    }
    const int32_t nv = pocketllm_session_n_vocab(s);
    FILE *f = fopen(out, "wb");
    if (!f) {
        fprintf(stderr, "pl_asr_logits: cannot create %s\n", out);
        return 1;
    }
    for (size_t k = 0; k < n_ids; k++) {
        if (k > 0 && pocketllm_session_eval(s, &ids[k - 1], 1, 0)) return die("eval id");
        if (fwrite(pocketllm_session_logits(s, -1), sizeof(float), (size_t)nv, f) != (size_t)nv) {
            fprintf(stderr, "pl_asr_logits: cannot write %s\n", out);
            return 1;
        }
    }
    if (fclose(f)) return 1;
    printf("n_tokens %u n_vocab %d\n", n_tok, nv);
    pocketllm_session_free(s);
    for (int i = 0; i < n_clips; i++) pocketllm_audio_free(aud[i]);
    pocketllm_mmproj_close(mm);
    pocketllm_model_close(m);
    return 0;
}
