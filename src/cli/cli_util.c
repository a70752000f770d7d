/*
 * cli_util.c -- shared helpers of the CLI commands: error reporting with
 * the right exit code, option parsing, number/size parsing, formatting.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

const cli_command *cli_find(const char *name) {
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c;
    return NULL;
}

int cli_help(const char *cmd) {
    const cli_command *c = cli_find(cmd);
    if (!c) return CLI_USAGE;
    fputs(c->usage, stdout);
    return CLI_OK;
}

int cli_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "pocketllm %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'pocketllm %s --help')\n", cmd);
    return CLI_USAGE;
}

int cli_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "pocketllm %s: error: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_lib_error(const char *cmd, pocketllm_status st) {
    const char *msg = pocketllm_last_error();
    return cli_error(cmd, "%s", msg && *msg ? msg : pocketllm_status_string(st));
}

bool cli_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return true;
    }
    return false;
}

bool cli_opt(int argc, char **argv, int *i, const char *name, const char **value, const char **err) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return false;
    if (a[n] == '=') {
        *value = a + n + 1;
        return true;
    }
    if (a[n] != '\0') return false;
    if (*i + 1 >= argc) {
        *err = "needs a value";
        *value = NULL;
        return true;
    }
    *value = argv[++*i];
    return true;
}

bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_opt_flash(int argc, char **argv, int *i, const char *cmd, int *on, int *rc) {
    const char *v = NULL, *err = NULL;
    if (!cli_opt(argc, argv, i, "--flash-attn", &v, &err) && !cli_opt(argc, argv, i, "-fa", &v, &err)) return false;
    *rc = 0;
    if (err) *rc = cli_usage(cmd, "--flash-attn %s", err);
    else if (!strcmp(v, "on")) *on = 1;
    else if (!strcmp(v, "off")) *on = 0;
    else *rc = cli_usage(cmd, "--flash-attn wants on or off, not '%s'", v);
    return true;
}

bool cli_opt_kv(int argc, char **argv, int *i, const char *cmd, uint32_t *k, uint32_t *v, int *rc) {
    const char *val = NULL, *err = NULL, *opt;
    int which; /* 0: both, 1: K, 2: V */
    if (cli_opt(argc, argv, i, "--kv", &val, &err)) opt = "--kv", which = 0;
    else if (cli_opt(argc, argv, i, "-ctk", &val, &err) || cli_opt(argc, argv, i, "--cache-type-k", &val, &err))
        opt = "--cache-type-k", which = 1;
    else if (cli_opt(argc, argv, i, "-ctv", &val, &err) || cli_opt(argc, argv, i, "--cache-type-v", &val, &err))
        opt = "--cache-type-v", which = 2;
    else return false;
    *rc = 0;
    if (err) {
        *rc = cli_usage(cmd, "%s %s", opt, err);
        return true;
    }
    const uint32_t t = pocketllm_kv_type_from_name(val);
    if (t == UINT32_MAX) {
        *rc = cli_usage(cmd, "%s wants one of f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, not '%s'", opt, val);
        return true;
    }
    if (which == 0) *k = t, *v = POCKETLLM_KV_AS_K;
    else if (which == 1) {
        if (*v == POCKETLLM_KV_AS_K) *v = *k; /* V stays as it was */
        *k = t;
    } else *v = t;
    return true;
}

int cli_flash_auto(int flash, uint32_t k, uint32_t v) {
    if (flash >= 0) return flash;
    return pocketllm_type_block_size(v == POCKETLLM_KV_AS_K ? k : v) > 1 ? 1 : 0;
}

bool cli_parse_f64(const char *s, double lo, double hi, double *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_parse_size(const char *s, uint64_t *out) {
    /* K, M, G and T are binary multiples with or without "B"/"iB" */
    static const struct { const char *unit; double mul; } units[] = {
        {"", 1}, {"B", 1}, {"K", 1024.0}, {"KB", 1024.0}, {"KiB", 1024.0},
        {"M", 1048576.0}, {"MB", 1048576.0}, {"MiB", 1048576.0},
        {"G", 1073741824.0}, {"GB", 1073741824.0}, {"GiB", 1073741824.0},
        {"T", 1099511627776.0}, {"TB", 1099511627776.0}, {"TiB", 1099511627776.0}};
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0) return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(end, units[i].unit) != 0) continue;
        double bytes = v * units[i].mul;
        if (bytes >= 18446744073709551615.0) return false;
        *out = (uint64_t)bytes;
        return true;
    }
    return false;
}

const char *cli_fmt_bytes(uint64_t bytes, char *buf, size_t len) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else snprintf(buf, len, "%.2f %s", v, units[u]);
    return buf;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000;
    else return 0;
    if (n < len) return 0;
    unsigned cp = c & (0xff >> (len + 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

char *cli_utf8_clean(const char *s, size_t n) {
    if (n > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(n * 3 + 1);
    if (!out) return NULL;
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_valid_len(p + i, n - i);
        if (k == 0) {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else {
            memcpy(out + o, p + i, k);
            o += k;
            i += k;
        }
    }
    out[o] = '\0';
    return out;
}

void cli_print_escaped(void *file, const char *s, size_t n, size_t max) {
    FILE *f = file;
    size_t lim = n < max ? n : max;
    for (size_t i = 0; i < lim; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\\') fputs("\\\\", f);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\x%02x", c);
        else fputc(c, f);
    }
    if (n > max) fputs("...", f);
}

#define MAX_INPUT (64u << 20)

/* A whole file ("-" = stdin), NUL-terminated; NULL with a message printed. */
char *cli_slurp(const char *cmd, const char *path, size_t *len) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        cli_error(cmd, "cannot open '%s'", path);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        if (n + 1 >= cap) {
            if (cap >= MAX_INPUT) {
                cli_error(cmd, "'%s' is larger than %u bytes", path, MAX_INPUT);
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) break;
    }
    if (f != stdin) fclose(f);
    if (!buf) return NULL;
    if (memchr(buf, '\0', n)) {
        cli_error(cmd, "'%s' contains a NUL byte", path);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

static int cmp_median(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_median);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
