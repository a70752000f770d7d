/*
 * cmd_tokenize.c -- `pocketllm tokenize`: text to the checkpoint's token
 * ids, as llama.cpp's tokenizer gives them; works on vocabulary-only GGUFs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

#define TEXT_MAX ((size_t)1 << 30) /* 1 GiB of text at most */

/* Read a whole file ("-" = standard input). */
static char *read_text(const char *path, size_t *len) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        if (cap > TEXT_MAX) {
            free(buf);
            buf = NULL;
            errno = EFBIG;
            break;
        }
        char *bigger = realloc(buf, cap *= 2);
        if (!bigger) free(buf);
        buf = bigger;
    }
    bool bad = buf && ferror(f);
    if (f != stdin) fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Length of the well-formed UTF-8 character at s[0..n), 0 if none. */
static size_t utf8_char(const unsigned char *s, size_t n) {
    unsigned char b = s[0];
    size_t need = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (!need || need > n) return 0;
    for (size_t i = 1; i < need; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (need == 3 && ((b == 0xe0 && s[1] < 0xa0) || (b == 0xed && s[1] >= 0xa0))) return 0;
    if (need == 4 && ((b == 0xf0 && s[1] < 0x90) || (b == 0xf4 && s[1] >= 0x90))) return 0;
    return need;
}

/* A piece on one line: control characters and bytes that are not part of
 * a UTF-8 character (a token may hold half of one) as \xNN escapes. */
static void print_piece(const char *p, size_t n) {
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_char(s + i, n - i);
        if (k == 1 && s[i] == '\\') fputs("\\\\", stdout);
        else if (k == 1 && s[i] == '\n') fputs("\\n", stdout);
        else if (k == 1 && s[i] == '\t') fputs("\\t", stdout);
        else if (k == 1 && s[i] == '\r') fputs("\\r", stdout);
        else if (k == 1 && s[i] == '\'') fputs("\\'", stdout);
        else if (k == 0 || (k == 1 && (s[i] < 0x20 || s[i] == 0x7f))) printf("\\x%02x", s[i]), k = 1;
        else fwrite(s + i, 1, k, stdout);
        i += k;
    }
}

int cmd_tokenize(int argc, char **argv) {
    const char *model_path = NULL, *text = NULL, *file = NULL, *err = NULL, *v;
    int parse_special = 1, add_special = 1, pieces = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_opt(argc, argv, &i, "--model", &v, &err)) model_path = v;
        else if (cli_opt(argc, argv, &i, "--text", &v, &err)) text = v;
        else if (cli_opt(argc, argv, &i, "--file", &v, &err)) file = v;
        else if (strcmp(argv[i], "--no-special") == 0) parse_special = 0;
        else if (strcmp(argv[i], "--no-bos") == 0) add_special = 0;
        else if (strcmp(argv[i], "--pieces") == 0) pieces = 1;
        else return cli_usage("tokenize", "unknown argument '%s'", argv[i]);
        if (err) return cli_usage("tokenize", "%s", err);
    }
    if (!model_path) return cli_usage("tokenize", "--model is required");
    if (!text == !file) return cli_usage("tokenize", "give exactly one of --text and --file");

    size_t len = 0;
    char *owned = NULL;
    if (file) {
        owned = read_text(file, &len);
        if (!owned) return cli_error("tokenize", "cannot read %s: %s", file, strerror(errno));
        text = owned;
    } else {
        len = strlen(text);
    }

    pocketllm_model_params mp = pocketllm_model_default_params();
    mp.vocab_only = 1;
    pocketllm_model *m = NULL;
    pocketllm_status st = pocketllm_model_open(model_path, &mp, &m);
    if (st) {
        free(owned);
        return cli_lib_error("tokenize", st);
    }
    int rc = CLI_OK;
    if (pocketllm_model_n_vocab(m) == 0) {
        rc = cli_error("tokenize", "%s has no tokenizer (no tokenizer.ggml.model)", model_path);
        goto done;
    }
    size_t cap = len + 16, n = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) {
        rc = cli_error("tokenize", "out of memory");
        goto done;
    }
    st = pocketllm_tokenize(m, text, len, add_special, parse_special, ids, cap, &n);
    if (st && n > cap) { /* more tokens than bytes: BOS/EOS around tiny input */
        int32_t *more = realloc(ids, n * sizeof *ids);
        if (more) ids = more, cap = n;
        st = pocketllm_tokenize(m, text, len, add_special, parse_special, ids, cap, &n);
    }
    if (st) {
        free(ids);
        rc = cli_lib_error("tokenize", st);
        goto done;
    }
    if (!pieces) {
        for (size_t i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
        putchar('\n');
    } else {
        size_t room = 256;
        char *buf = malloc(room);
        for (size_t i = 0; buf && i < n; i++) {
            size_t k = 0;
            st = pocketllm_token_to_piece(m, ids[i], 1, buf, room, &k);
            if (st && k > room) { /* a long piece: make room and ask again */
                char *more = realloc(buf, k);
                if (more) buf = more, room = k;
                st = pocketllm_token_to_piece(m, ids[i], 1, buf, room, &k);
            }
            if (st) {
                rc = cli_lib_error("tokenize", st);
                break;
            }
            printf("%d\t'", ids[i]);
            print_piece(buf, k);
            fputs("'\n", stdout);
        }
        if (!buf) rc = cli_error("tokenize", "out of memory");
        free(buf);
    }
    free(ids);
done:
    pocketllm_model_close(m);
    free(owned);
    return rc;
}
