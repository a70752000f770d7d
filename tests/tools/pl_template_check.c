/*
 * pl_template_check.c -- the pocketllm side of the chat-template
 * comparison with jinja2 (tests/oracle/test_template_jinja2.sh), in one
 * process: every template of a folder is parsed through the public API
 * (a refusal is reported with its message), then rendered for every case
 * jinja2_reference.py wrote (REF/<template>/<case>.args holds the
 * `pocketllm template` flags), and compared byte for byte with what jinja2
 * rendered (<case>.out), or checked to fail where jinja2 raised (<case>.err).
 *
 * usage: pl_template_check TEMPLATE_DIR REF_DIR [--must-render STEM]...
 * Prints every mismatch and a summary; exit 1 on any mismatch, on a refused
 * template named by --must-render, or when nothing was compared.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pocketllm.h"

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (!k) break;
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted names in dir ending with suffix (malloc'd array of malloc'd names). */
static char **list_dir(const char *dir, const char *suffix, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    size_t cap = 16;
    char **v = malloc(cap * sizeof *v);
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= sl || strcmp(e->d_name + l - sl, suffix)) continue;
        if (*n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static bool parse_now(const char *s, int64_t *out) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    *out = (int64_t)mktime(&tm);
    return true;
}

/* Render one case from its .args file; 0 rendered, 1 failed (message in
 * err), -1 the case itself is unreadable. */
static int render_case(const pocketllm_chat_template *t, const char *args_path, char **out, size_t *len, char *err,
                       size_t errcap) {
    char *args = slurp(args_path, NULL);
    if (!args) return -1;
    pocketllm_chat_options o = pocketllm_chat_default_options();
    char *msgs = NULL, *tools = NULL, *vars = NULL;
    int rc = -1;
    char *save = NULL;
    for (char *a = strtok_r(args, "\n", &save); a; a = strtok_r(NULL, "\n", &save)) {
        if (!strcmp(a, "--add-generation-prompt")) {
            o.add_generation_prompt = 1;
            continue;
        }
        char *v = strtok_r(NULL, "\n", &save);
        if (!v) goto done;
        if (!strcmp(a, "--messages")) msgs = slurp(v, NULL);
        else if (!strcmp(a, "--tools")) tools = slurp(v, NULL);
        else if (!strcmp(a, "--vars")) vars = slurp(v, NULL);
        else if (!strcmp(a, "--bos")) o.bos_token = v;
        else if (!strcmp(a, "--eos")) o.eos_token = v;
        else if (!strcmp(a, "--enable-thinking")) o.enable_thinking = !strcmp(v, "true");
        else if (!strcmp(a, "--now")) {
            if (!parse_now(v, &o.now)) goto done;
        } else goto done;
    }
    if (!msgs) goto done;
    o.tools_json = tools;
    o.extra_json = vars;
    pocketllm_status st = pocketllm_chat_render_json(t, msgs, &o, out, len);
    if (st != POCKETLLM_OK) snprintf(err, errcap, "%s", pocketllm_last_error());
    rc = st == POCKETLLM_OK ? 0 : 1;
done:
    free(msgs);
    free(tools);
    free(vars);
    free(args);
    return rc;
}

static void show_diff(const char *want, size_t wn, const char *got, size_t gn) {
    size_t i = 0;
    while (i < wn && i < gn && want[i] == got[i]) i++;
    size_t from = i > 40 ? i - 40 : 0;
    fprintf(stderr, "    first difference at byte %zu (jinja2 %zu bytes, pocketllm %zu bytes)\n", i, wn, gn);
    fprintf(stderr, "    jinja2:    ...%.*s\n", (int)((wn - from) < 120 ? wn - from : 120), want + from);
    fprintf(stderr, "    pocketllm: ...%.*s\n", (int)((gn - from) < 120 ? gn - from : 120), got + from);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pl_template_check TEMPLATE_DIR REF_DIR [--must-render STEM]...\n");
        return 2;
    }
    const char *tdir = argv[1], *ref = argv[2];
    size_t nt;
    char **names = list_dir(tdir, ".jinja", &nt);
    if (!names || nt == 0) {
        fprintf(stderr, "FAIL: no templates in %s\n", tdir);
        return 1;
    }
    size_t identical = 0, refused = 0, cases = 0, mismatches = 0, agreed_errors = 0;
    char **refused_names = calloc(nt, sizeof *refused_names);
    for (size_t i = 0; i < nt; i++) {
        char path[4096], stem[1024];
        snprintf(stem, sizeof stem, "%.*s", (int)(strlen(names[i]) - 6), names[i]);
        snprintf(path, sizeof path, "%s/%s", tdir, names[i]);
        size_t slen;
        char *src = slurp(path, &slen);
        if (!src) {
            fprintf(stderr, "FAIL: cannot read %s\n", path);
            return 1;
        }
        pocketllm_chat_template *t;
        if (pocketllm_chat_template_new(src, slen, &t) != POCKETLLM_OK) {
            printf("REFUSED %s: %s\n", stem, pocketllm_last_error());
            refused_names[refused++] = strdup(stem);
            free(src);
            continue;
        }
        free(src);
        char cdir[4096];
        snprintf(cdir, sizeof cdir, "%s/%s", ref, stem);
        size_t nc;
        char **cs = list_dir(cdir, ".args", &nc);
        size_t bad_here = 0;
        for (size_t c = 0; c < nc; c++) {
            char base[8192], args_path[8200], exp_path[8200], err[1024] = "";
            size_t cl = strlen(cs[c]) - 5;
            if (strlen(cdir) + cl + 2 > sizeof base) continue;
            memcpy(base, cdir, strlen(cdir));
            base[strlen(cdir)] = '/';
            memcpy(base + strlen(cdir) + 1, cs[c], cl);
            base[strlen(cdir) + 1 + cl] = '\0';
            snprintf(args_path, sizeof args_path, "%s.args", base);
            char *out = NULL;
            size_t len = 0;
            int rc = render_case(t, args_path, &out, &len, err, sizeof err);
            cases++;
            snprintf(exp_path, sizeof exp_path, "%s.out", base);
            size_t wn;
            char *want = slurp(exp_path, &wn);
            if (rc < 0) {
                fprintf(stderr, "MISMATCH %s/%s: the case files are unreadable\n", stem, cs[c]);
                bad_here++;
            } else if (want) {
                if (rc != 0) {
                    fprintf(stderr, "MISMATCH %s/%s: jinja2 rendered it, pocketllm failed: %s\n", stem, cs[c], err);
                    bad_here++;
                } else if (len != wn || memcmp(out, want, wn)) {
                    fprintf(stderr, "MISMATCH %s/%s: different text\n", stem, cs[c]);
                    show_diff(want, wn, out, len);
                    bad_here++;
                }
            } else {
                snprintf(exp_path, sizeof exp_path, "%s.err", base);
                char *why = slurp(exp_path, NULL);
                if (!why) {
                    fprintf(stderr, "MISMATCH %s/%s: no jinja2 result recorded\n", stem, cs[c]);
                    bad_here++;
                } else if (rc == 0) {
                    fprintf(stderr, "MISMATCH %s/%s: jinja2 raised (%.200s) but pocketllm rendered it\n", stem, cs[c],
                            why);
                    bad_here++;
                } else {
                    agreed_errors++;
                }
                free(why);
            }
            free(want);
            pocketllm_chat_free(out);
            free(cs[c]);
        }
        free(cs);
        if (nc == 0) {
            fprintf(stderr, "MISMATCH %s: no cases in %s\n", stem, cdir);
            bad_here++;
        }
        mismatches += bad_here;
        if (!bad_here) identical++;
        pocketllm_chat_template_free(t);
    }
    int fail = 0;
    for (int a = 3; a < argc; a++) {
        if (strcmp(argv[a], "--must-render") || a + 1 >= argc) continue;
        const char *want = argv[++a];
        bool found = false;
        for (size_t i = 0; i < nt; i++)
            if (!strncmp(names[i], want, strlen(want)) && names[i][strlen(want)] == '.') found = true;
        if (!found) {
            fprintf(stderr, "FAIL: template %s is not in %s\n", want, tdir);
            fail = 1;
        }
        for (size_t r = 0; r < refused; r++)
            if (!strcmp(refused_names[r], want)) {
                fprintf(stderr, "FAIL: %s must render but is refused\n", want);
                fail = 1;
            }
    }
    printf("templates: %zu; identical to jinja2 on every case: %zu; refused: %zu; with a mismatch: %zu\n", nt,
           identical, refused, nt - identical - refused);
    printf("cases: %zu compared, %zu mismatched (%zu where both jinja2 and pocketllm refuse the conversation)\n",
           cases, mismatches, agreed_errors);
    for (size_t i = 0; i < nt; i++) free(names[i]);
    for (size_t r = 0; r < refused; r++) free(refused_names[r]);
    free(refused_names);
    free(names);
    if (cases == 0) {
        fprintf(stderr, "FAIL: nothing was compared\n");
        return 1;
    }
    return (mismatches || fail) ? 1 : 0;
}
