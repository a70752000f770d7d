/*
 * pl_vlm_logits.c -- teacher-forced logits of a prompt with images through
 * the public C API (pocketllm_mmproj_open, pocketllm_image_load or
 * pocketllm_image_from_rgb, pocketllm_session_eval_media), for the shell
 * tests to compare against llama.cpp's (pl_mtmd generate --out-logits):
 *
 *   pl_vlm_logits MODEL MMPROJ --prompt P [--image F | --rgb FILE W H]...
 *                 --ids "1 2 3" --out FILE [--image-max-tokens N]
 *                 [--image-min-tokens N] [--flash-attn on|off] [--kv f16|f32]
 *                 [--device D] [-t N]
 *
 * A prompt without media markers gets one per image in front (mtmd-cli's
 * rule, as `pocketllm run`).  Evaluates the prompt, then the ids one at a
 * time, and writes len(ids) rows of n_vocab f32 logits to FILE: row k is
 * what the next id is chosen from after the prompt and ids[0..k-1] (the
 * last id is not evaluated).  Prints "n_tokens N n_vocab V" (N: the
 * prompt's positions).
 *
 * Checks on the way, each failing the run with its reason: the refusals
 * of pocketllm_session_eval_media (images without a tower, a marker count
 * that differs from the images) leave the session empty; after the prompt
 * n_past is the count pocketllm_media_prompt_tokens gave; and after
 * truncating back to the prompt, the ids evaluated again give bit for bit
 * the same logits (the next rotary position comes back with the rows); and
 * the same prompt on sequence 1 of a two-sequence session
 * (pocketllm_session_eval_media_seq), then the ids by
 * pocketllm_session_eval_batch, give bit for bit the same logits too.
 * Exit 0, or 1 with the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_arg.h"
#include "pocketllm.h"

#define MAX_IMAGES 16

static int die(const char *what) {
    fprintf(stderr, "pl_vlm_logits: %s: %s\n", what, pocketllm_last_error());
    return 1;
}

static unsigned char *read_file(const char *path, size_t want) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *p = malloc(want ? want : 1);
    size_t got = p ? fread(p, 1, want, f) : 0;
    fclose(f);
    if (got != want) {
        free(p);
        return NULL;
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pl_vlm_logits MODEL MMPROJ --prompt P [--image F | --rgb FILE W H]... --ids \"1 2\" "
                        "--out FILE [options] (see the top of tests/tools/pl_vlm_logits.c)\n");
        return 2;
    }
    const char *prompt = NULL, *ids_s = NULL, *out = NULL, *device = NULL;
    pocketllm_mmproj_params mp = pocketllm_mmproj_default_params();
    pocketllm_session_params sp = pocketllm_session_default_params();
    pocketllm_model_params mdp = pocketllm_model_default_params();
    pocketllm_image *imgs[MAX_IMAGES] = {0};
    const char *img_path[MAX_IMAGES] = {0}, *rgb_path[MAX_IMAGES] = {0};
    uint32_t rgb_w[MAX_IMAGES] = {0}, rgb_h[MAX_IMAGES] = {0};
    int n_img = 0;
    for (int i = 3; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "pl_vlm_logits: %s wants a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--prompt")) prompt = v;
        else if (!strcmp(a, "--ids")) ids_s = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "-t")) mdp.n_threads = atoi(v);
        else if (!strcmp(a, "--image-max-tokens")) mp.image_max_tokens = (uint32_t)atoi(v);
        else if (!strcmp(a, "--image-min-tokens")) mp.image_min_tokens = (uint32_t)atoi(v);
        else if (!strcmp(a, "--flash-attn")) sp.flash_attn = !strcmp(v, "on");
        else if (!strcmp(a, "--kv")) sp.kv_type = !strcmp(v, "f32") ? 0 : 1;
        else if ((!strcmp(a, "--image") || !strcmp(a, "--rgb")) && n_img < MAX_IMAGES) {
            if (!strcmp(a, "--image")) img_path[n_img++] = v;
            else if (i + 3 < argc) {
                rgb_path[n_img] = v;
                rgb_w[n_img] = (uint32_t)atoi(argv[i + 2]);
                rgb_h[n_img++] = (uint32_t)atoi(argv[i + 3]);
                i += 2;
            } else {
                fprintf(stderr, "pl_vlm_logits: --rgb wants FILE W H\n");
                return 2;
            }
        } else {
            fprintf(stderr, "pl_vlm_logits: unknown argument '%s'\n", a);
            return 2;
        }
    }
    if (!prompt || !ids_s || !out) {
        fprintf(stderr, "pl_vlm_logits: needs --prompt, --ids and --out\n");
        return 2;
    }
    mdp.device = device;
    pocketllm_model *m = NULL;
    pocketllm_mmproj *mm = NULL;
    pocketllm_session *s = NULL;
    if (pocketllm_model_open(argv[1], &mdp, &m)) return die("model");
    if (pocketllm_mmproj_open(m, argv[2], &mp, &mm)) return die("mmproj");
    for (int i = 0; i < n_img; i++) {
        if (img_path[i]) {
            if (pocketllm_image_load(img_path[i], &imgs[i])) return die(img_path[i]);
        } else {
            unsigned char *rgb = read_file(rgb_path[i], (size_t)rgb_w[i] * rgb_h[i] * 3);
            if (!rgb) {
                fprintf(stderr, "pl_vlm_logits: cannot read %ux%u RGB from %s\n", rgb_w[i], rgb_h[i], rgb_path[i]);
                return 1;
            }
            pocketllm_status st = pocketllm_image_from_rgb(rgb, rgb_w[i], rgb_h[i], &imgs[i]);
            free(rgb);
            if (st) return die(rgb_path[i]);
        }
    }
    /* the text with one marker per image in front when it has none */
    const char *marker = pocketllm_media_marker();
    size_t ml = strlen(marker), pl = strlen(prompt), at = 0;
    char *text = malloc(pl + (size_t)n_img * ml + 1);
    if (!text) return 1;
    if (!strstr(prompt, marker))
        for (int i = 0; i < n_img; i++, at += ml) memcpy(text + at, marker, ml);
    memcpy(text + at, prompt, pl + 1);
    int32_t ids[4096];
    const size_t n_ids = parse_ids(ids_s, ids, 4096);
    if (n_ids == 0) {
        fprintf(stderr, "pl_vlm_logits: --ids has no ids\n");
        return 2;
    }
    uint32_t n_tok = 0;
    if (pocketllm_media_prompt_tokens(m, mm, text, at + pl, (const pocketllm_image *const *)imgs, (size_t)n_img, 1, 1,
                                      NULL, 0, &n_tok))
        return die("prompt");
    sp.n_ctx = n_tok + 2 * (uint32_t)n_ids + 8;
    if (pocketllm_session_new(m, &sp, &s)) return die("session");
    const pocketllm_image *const *cimgs = (const pocketllm_image *const *)imgs;
    if (n_img > 0) {
        /* the refusals, before anything is evaluated */
        pocketllm_status st = pocketllm_session_eval_media(s, NULL, text, at + pl, cimgs, (size_t)n_img, 1, 1);
        if (st != POCKETLLM_ERR_INVALID_ARGUMENT || !strstr(pocketllm_last_error(), "no vision tower") ||
            pocketllm_session_n_past(s) != 0) {
            fprintf(stderr, "pl_vlm_logits: images without a tower: status %d, '%s', n_past %u\n", st,
                    pocketllm_last_error(), pocketllm_session_n_past(s));
            return 1;
        }
        st = pocketllm_session_eval_media(s, mm, text, at + pl, cimgs, (size_t)n_img - 1, 1, 1);
        if (st != POCKETLLM_ERR_INVALID_ARGUMENT || !strstr(pocketllm_last_error(), "marker") ||
            pocketllm_session_n_past(s) != 0) {
            fprintf(stderr, "pl_vlm_logits: %d markers, %d images: status %d, '%s', n_past %u\n", n_img, n_img - 1, st,
                    pocketllm_last_error(), pocketllm_session_n_past(s));
            return 1;
        }
    }
    if (pocketllm_session_eval_media(s, mm, text, at + pl, cimgs, (size_t)n_img, 1, 1)) return die("eval_media");
    if (pocketllm_session_n_past(s) != n_tok) {
        fprintf(stderr, "pl_vlm_logits: the prompt filled %u positions, pocketllm_media_prompt_tokens said %u\n",
                pocketllm_session_n_past(s), n_tok);
        return 1;
    }
    const int32_t nv = pocketllm_session_n_vocab(s);
    float *rows = malloc(n_ids * (size_t)nv * sizeof *rows);
    if (!rows) return 1;
    for (size_t k = 0; k < n_ids; k++) {
        if (k > 0 && pocketllm_session_eval(s, &ids[k - 1], 1, 0)) return die("eval");
        memcpy(rows + k * (size_t)nv, pocketllm_session_logits(s, -1), (size_t)nv * sizeof *rows);
    }
    /* back to the end of the prompt, and the ids again */
    if (n_ids > 1) {
        if (pocketllm_session_seq_truncate(s, 0, n_tok)) return die("truncate");
        for (size_t k = 1; k < n_ids; k++) {
            if (pocketllm_session_eval(s, &ids[k - 1], 1, 0)) return die("eval after truncate");
            if (memcmp(rows + k * (size_t)nv, pocketllm_session_logits(s, -1), (size_t)nv * sizeof *rows)) {
                fprintf(stderr, "pl_vlm_logits: after truncating to the prompt, step %zu's logits differ\n", k);
                return 1;
            }
        }
    }
    /* sequence 1 of two, with sequence 0 holding other text */
    {
        pocketllm_session *s2 = NULL;
        if (pocketllm_session_new_multi(m, &sp, 2, &s2)) return die("session_new_multi");
        const int32_t other[3] = {ids[0], ids[0], ids[0]};
        if (pocketllm_session_eval(s2, other, 3, 0)) return die("eval on sequence 0");
        if (pocketllm_session_eval_media_seq(s2, 1, mm, text, at + pl, cimgs, (size_t)n_img, 1, 1))
            return die("eval_media_seq");
        if (pocketllm_session_seq_n_past(s2, 1) != n_tok || pocketllm_session_seq_n_past(s2, 0) != 3) {
            fprintf(stderr, "pl_vlm_logits: sequence 1 holds %u positions (want %u), sequence 0 %u (want 3)\n",
                    pocketllm_session_seq_n_past(s2, 1), n_tok, pocketllm_session_seq_n_past(s2, 0));
            return 1;
        }
        for (size_t k = 0; k < n_ids; k++) {
            const float *lg = NULL;
            if (k == 0) lg = pocketllm_session_logits(s2, -1);
            else {
                pocketllm_batch_token bt[2] = {{ids[k - 1], 1, 1}, {ids[0], 0, 0}};
                if (pocketllm_session_eval_batch(s2, bt, 2)) return die("eval_batch");
                lg = pocketllm_session_batch_logits(s2, 0);
            }
            if (!lg || memcmp(rows + k * (size_t)nv, lg, (size_t)nv * sizeof *rows)) {
                fprintf(stderr, "pl_vlm_logits: on sequence 1 of two, step %zu's logits differ\n", k);
                return 1;
            }
        }
        pocketllm_session_free(s2);
    }
    FILE *f = fopen(out, "wb");
    if (!f) {
        fprintf(stderr, "pl_vlm_logits: cannot create %s\n", out);
        return 1;
    }
    if (fwrite(rows, sizeof *rows, n_ids * (size_t)nv, f) != n_ids * (size_t)nv || fclose(f)) return 1;
    free(rows);
    printf("n_tokens %u n_vocab %d\n", n_tok, nv);
    free(text);
    pocketllm_session_free(s);
    for (int i = 0; i < n_img; i++) pocketllm_image_free(imgs[i]);
    pocketllm_mmproj_close(mm);
    pocketllm_model_close(m);
    return 0;
}
