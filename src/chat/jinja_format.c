/*
 * jinja_format.c -- Python's two string formatting languages as templates
 * reach them: str.format() through the sandbox's formatter ("{}", "{0}",
 * "{name.attr}", "{0[key]}", !r/!s and the common format specs) and the
 * % operator / format filter ("%s", "%d", "%.2f", "%(name)s"...).  Specs
 * beyond those are refused rather than approximated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat/jinja_internal.h"

/* ---- shared: padding and number formatting ------------------------ */

static void put_padded(pl_jx *x, pl_jbuf *out, const char *s, size_t len, size_t ncp, int64_t width, char align,
                       uint32_t fill, size_t sign_len) {
    char fb[4];
    size_t fl = pl_ju8_encode(fill, fb);
    int64_t padn = width > (int64_t)ncp ? width - (int64_t)ncp : 0;
    if (padn > 1 << 20) pl_jx_unsupported(x, "a format width over 1M");
    int64_t left = align == '>' ? padn : align == '^' ? padn / 2 : 0;
    if (align == '=') {
        pl_jbuf_put(x, out, s, sign_len);
        for (int64_t i = 0; i < padn; i++) pl_jbuf_put(x, out, fb, fl);
        pl_jbuf_put(x, out, s + sign_len, len - sign_len);
        return;
    }
    for (int64_t i = 0; i < left; i++) pl_jbuf_put(x, out, fb, fl);
    pl_jbuf_put(x, out, s, len);
    for (int64_t i = 0; i < padn - left; i++) pl_jbuf_put(x, out, fb, fl);
}

/* Digits of an integer with optional thousands separators. */
static void int_digits(char *buf, size_t cap, int64_t v, char type, char sep) {
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char tmp[80];
    int n = 0;
    unsigned base = type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : type == 'b' ? 2 : 10;
    const char *dig = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    int group = base == 10 ? 3 : 4, k = 0;
    do {
        if (sep && k && k % group == 0) tmp[n++] = sep;
        tmp[n++] = dig[u % base];
        u /= base;
        k++;
    } while (u);
    size_t o = 0;
    while (n > 0 && o + 1 < cap) buf[o++] = tmp[--n];
    buf[o] = '\0';
}

/* ---- str.format --------------------------------------------------- */

typedef struct spec {
    uint32_t fill;
    char align; /* 0, '<', '>', '^', '=' */
    char sign;  /* 0, '+', '-', ' ' */
    bool alt, zero;
    int64_t width;
    char grouping; /* 0, ',', '_' */
    int64_t precision; /* -1: none */
    char type;
} spec;

static void parse_spec(pl_jx *x, const char *s, size_t n, spec *sp) {
    memset(sp, 0, sizeof *sp);
    sp->fill = ' ';
    sp->precision = -1;
    size_t i = 0;
    /* [[fill]align] */
    if (n >= 1) {
        uint32_t c0;
        size_t k0 = pl_ju8_decode(s, &c0);
        if (k0 < n && strchr("<>^=", s[k0])) {
            sp->fill = c0;
            sp->align = s[k0];
            i = k0 + 1;
        } else if (strchr("<>^=", s[0])) {
            sp->align = s[0];
            i = 1;
        }
    }
    if (i < n && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) sp->sign = s[i++];
    if (i < n && s[i] == '#') {
        sp->alt = true;
        i++;
    }
    if (i < n && s[i] == '0') {
        sp->zero = true;
        i++;
    }
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (sp->width > 100000000) pl_jx_unsupported(x, "a format width that large");
        sp->width = sp->width * 10 + (s[i++] - '0');
    }
    if (i < n && (s[i] == ',' || s[i] == '_')) sp->grouping = s[i++];
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') pl_jx_fail(x, "Format specifier missing precision");
        sp->precision = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (sp->precision > 1000) pl_jx_unsupported(x, "a format precision that large");
            sp->precision = sp->precision * 10 + (s[i++] - '0');
        }
    }
    if (i < n) sp->type = s[i++];
    if (i != n) pl_jx_fail(x, "Invalid format specifier");
}

/* format(value, spec) for str, int, float, bool, None */
static void format_value(pl_jx *x, pl_jbuf *out, pl_jv v, const char *specs, size_t specn) {
    if (specn == 0) {
        pl_jv_write_str(x, out, v);
        return;
    }
    spec sp;
    parse_spec(x, specs, specn, &sp);
    if (v.kind == JV_STR || v.kind == JV_NONE || v.kind == JV_UNDEF) {
        if (v.kind != JV_STR) pl_jx_fail(x, "unsupported format string passed to %s.__format__", pl_jv_type_name(v));
        if ((sp.type && sp.type != 's') || sp.sign || sp.alt || sp.grouping)
            pl_jx_fail(x, "Unknown format code or option for object of type 'str'");
        const pl_jstr *s = v.v.s;
        size_t len = s->len, ncp = s->ncp;
        if (sp.precision >= 0 && (size_t)sp.precision < ncp) {
            len = pl_jstr_offset(s, (size_t)sp.precision);
            ncp = (size_t)sp.precision;
        }
        char align = sp.align ? sp.align : '<';
        if (sp.zero && !sp.align) {
            align = '<';
            sp.fill = '0';
        }
        if (align == '=') pl_jx_fail(x, "'=' alignment not allowed in string format specifier");
        put_padded(x, out, s->s, len, ncp, sp.width, align, sp.fill, 0);
        return;
    }
    if (!pl_jv_is_num(v)) pl_jx_unsupported(x, "format specs on a %s value", pl_jv_type_name(v));
    char type = sp.type;
    bool is_int = v.kind != JV_FLOAT;
    if (is_int && (type == 0 || type == 'd' || type == 'x' || type == 'X' || type == 'o' || type == 'b' || type == 'n')) {
        if (sp.precision >= 0) pl_jx_fail(x, "Precision not allowed in integer format specifier");
        if (type == 0 && v.kind == JV_BOOL && !sp.width && !sp.sign) {
            pl_jv_write_str(x, out, v);
            return;
        }
        if (type == 'n') type = 'd';
        char digits[96], num[128];
        int_digits(digits, sizeof digits, v.v.i, type ? type : 'd', sp.grouping);
        const char *sg = v.v.i < 0 ? "-" : sp.sign == '+' ? "+" : sp.sign == ' ' ? " " : "";
        const char *pre = !sp.alt ? "" : type == 'x' ? "0x" : type == 'X' ? "0X" : type == 'o' ? "0o" : type == 'b' ? "0b" : "";
        int k = snprintf(num, sizeof num, "%s%s%s", sg, pre, digits);
        char align = sp.align ? sp.align : '>';
        uint32_t fill = sp.fill;
        if (sp.zero && !sp.align) {
            align = '=';
            fill = '0';
        }
        put_padded(x, out, num, (size_t)k, (size_t)k, sp.width, align, fill, strlen(sg) + strlen(pre));
        return;
    }
    if (type == 0 || strchr("eEfFgG%", type) == NULL) {
        if (type == 0 && sp.precision < 0) {
            /* str() of the number, padded */
            pl_jbuf tmp = {0};
            pl_jv_write_str(x, &tmp, v);
            const char *sg = "";
            if (sp.sign == '+' && tmp.len && tmp.p[0] != '-') sg = "+";
            else if (sp.sign == ' ' && tmp.len && tmp.p[0] != '-') sg = " ";
            if (sp.grouping) pl_jx_unsupported(x, "grouping in this format spec");
            pl_jbuf num = {0};
            pl_jbuf_put(x, &num, sg, strlen(sg));
            pl_jbuf_put(x, &num, tmp.p, tmp.len);
            char align = sp.align ? sp.align : '>';
            uint32_t fill = sp.fill;
            if (sp.zero && !sp.align) {
                align = '=';
                fill = '0';
            }
            size_t slen = (num.len && (num.p[0] == '-' || num.p[0] == '+' || num.p[0] == ' ')) ? 1 : 0;
            put_padded(x, out, num.p, num.len, num.len, sp.width, align, fill, slen);
            return;
        }
        pl_jx_unsupported(x, "the format spec '%.*s'", (int)specn, specs);
    }
    if (sp.grouping) pl_jx_unsupported(x, "grouping in float format specs");
    double d = v.kind == JV_FLOAT ? v.v.f : (double)v.v.i;
    int prec = sp.precision >= 0 ? (int)sp.precision : 6;
    char num[512];
    char cfmt[16];
    if (type == '%') {
        d *= 100.0;
        snprintf(cfmt, sizeof cfmt, "%%%s%s.%df%%%%", sp.sign == '+' ? "+" : sp.sign == ' ' ? " " : "", sp.alt ? "#" : "", prec);
    } else {
        snprintf(cfmt, sizeof cfmt, "%%%s%s.%d%c", sp.sign == '+' ? "+" : sp.sign == ' ' ? " " : "", sp.alt ? "#" : "", prec, type);
    }
    if (isinf(d) || isnan(d)) pl_jx_unsupported(x, "formatting inf/nan with a spec");
    int k = snprintf(num, sizeof num, cfmt, d);
    if (k < 0 || (size_t)k >= sizeof num) pl_jx_unsupported(x, "a formatted number that long");
    char align = sp.align ? sp.align : '>';
    uint32_t fill = sp.fill;
    if (sp.zero && !sp.align) {
        align = '=';
        fill = '0';
    }
    size_t slen = (num[0] == '-' || num[0] == '+' || num[0] == ' ') ? 1 : 0;
    put_padded(x, out, num, (size_t)k, (size_t)k, sp.width, align, fill, slen);
}

pl_jv pl_py_str_format(pl_jx *x, pl_jv fmt, pl_jargs *a) {
    const char *s = fmt.v.s->s;
    size_t n = fmt.v.s->len;
    pl_jbuf out = {0};
    int auto_idx = 0; /* 0 unknown, 1 auto, 2 manual */
    size_t next_auto = 0;
    size_t i = 0;
    while (i < n) {
        char c = s[i];
        if (c == '}') {
            if (i + 1 < n && s[i + 1] == '}') {
                pl_jbuf_putc(x, &out, '}');
                i += 2;
                continue;
            }
            pl_jx_fail(x, "Single '}' encountered in format string");
        }
        if (c != '{') {
            pl_jbuf_putc(x, &out, c);
            i++;
            continue;
        }
        if (i + 1 < n && s[i + 1] == '{') {
            pl_jbuf_putc(x, &out, '{');
            i += 2;
            continue;
        }
        /* a replacement field up to the matching '}' */
        size_t st = ++i, depth = 1;
        while (i < n && depth) {
            if (s[i] == '{') depth++;
            else if (s[i] == '}') depth--;
            if (depth) i++;
        }
        if (i >= n) pl_jx_fail(x, "expected '}' before end of string");
        size_t en = i++;
        /* field_name [!conv] [:spec] */
        size_t fe = st;
        while (fe < en && s[fe] != '!' && s[fe] != ':') {
            if (s[fe] == '[') {
                while (fe < en && s[fe] != ']') fe++;
            }
            fe++;
        }
        if (fe > en) fe = en;
        char conv = 0;
        size_t sp_start = en;
        if (fe < en && s[fe] == '!') {
            if (fe + 1 >= en) pl_jx_fail(x, "end of string while looking for conversion specifier");
            conv = s[fe + 1];
            if (fe + 2 < en && s[fe + 2] != ':') pl_jx_fail(x, "expected ':' after conversion specifier");
            sp_start = fe + 2 < en ? fe + 3 : en;
        } else if (fe < en && s[fe] == ':') {
            sp_start = fe + 1;
        }
        for (size_t k = sp_start; k < en; k++)
            if (s[k] == '{') pl_jx_unsupported(x, "nested replacement fields in a format spec");
        /* the first part: index or keyword */
        size_t k = st;
        while (k < fe && s[k] != '.' && s[k] != '[') k++;
        pl_jv val;
        if (k == st) {
            if (auto_idx == 2) pl_jx_fail(x, "cannot switch from manual field specification to automatic field numbering");
            auto_idx = 1;
            if (next_auto >= a->npos) pl_jx_fail(x, "Replacement index %zu out of range for positional args tuple", next_auto);
            val = a->pos[next_auto++];
        } else {
            bool digits = true;
            for (size_t q = st; q < k; q++)
                if (s[q] < '0' || s[q] > '9') digits = false;
            if (digits) {
                if (auto_idx == 1) pl_jx_fail(x, "cannot switch from automatic field numbering to manual field specification");
                auto_idx = 2;
                size_t idx = (size_t)strtoull(s + st, NULL, 10);
                if (k - st > 9 || idx >= a->npos) pl_jx_fail(x, "Replacement index %zu out of range for positional args tuple", idx);
                val = a->pos[idx];
            } else {
                size_t q;
                for (q = 0; q < a->nkw; q++)
                    if (strlen(a->kwn[q]) == k - st && !memcmp(a->kwn[q], s + st, k - st)) break;
                if (q == a->nkw) pl_jx_fail(x, "KeyError: '%.*s'", (int)(k - st), s + st);
                val = a->kwv[q];
            }
        }
        /* .attr and [key] */
        while (k < fe) {
            if (s[k] == '.') {
                size_t e = ++k;
                while (e < fe && s[e] != '.' && s[e] != '[') e++;
                if (e == k) pl_jx_fail(x, "Empty attribute in format string");
                pl_jv name = pl_jv_str(x, s + k, e - k);
                val = pl_jx_getattr(x, val, name.v.s->s);
                k = e;
            } else if (s[k] == '[') {
                size_t e = ++k;
                while (e < fe && s[e] != ']') e++;
                if (e >= fe) pl_jx_fail(x, "Missing ']' in format string");
                bool digits = e > k;
                for (size_t q = k; q < e; q++)
                    if (s[q] < '0' || s[q] > '9') digits = false;
                pl_jv key = digits && e - k < 18 ? pl_jv_int(strtoll(s + k, NULL, 10)) : pl_jv_str(x, s + k, e - k);
                val = pl_jx_getitem(x, val, key);
                k = e + 1;
            } else {
                pl_jx_fail(x, "Only '.' or '[' may follow ']' in format field specifier");
            }
        }
        if (conv == 'r' || conv == 's') {
            pl_jbuf tmp = {0};
            if (conv == 'r') pl_jv_write_repr(x, &tmp, val);
            else pl_jv_write_str(x, &tmp, val);
            val = pl_jv_str_buf(x, &tmp);
        } else if (conv) {
            pl_jx_unsupported(x, "the format conversion !%c", conv);
        }
        format_value(x, &out, val, s + sp_start, en - sp_start);
    }
    return pl_jv_str_markup(pl_jv_str_buf(x, &out), false);
}

/* ---- % formatting ------------------------------------------------- */

pl_jv pl_py_percent_format(pl_jx *x, pl_jv fmt, pl_jv args) {
    if (fmt.flags & JV_MARKUP) pl_jx_unsupported(x, "%% formatting of a |safe string");
    const char *s = fmt.v.s->s;
    size_t n = fmt.v.s->len;
    const pl_jv *argv;
    size_t argc, used = 0;
    bool mapping = args.kind == JV_DICT;
    pl_jv single = args;
    if (args.kind == JV_TUPLE) {
        argv = args.v.l->items;
        argc = args.v.l->n;
    } else {
        argv = &single;
        argc = 1;
    }
    pl_jbuf out = {0};
    size_t i = 0;
    while (i < n) {
        if (s[i] != '%') {
            pl_jbuf_putc(x, &out, s[i++]);
            continue;
        }
        i++;
        if (i >= n) pl_jx_fail(x, "incomplete format");
        pl_jv val;
        bool have_val = false;
        if (s[i] == '(') {
            if (!mapping) pl_jx_fail(x, "format requires a mapping");
            size_t st = ++i;
            while (i < n && s[i] != ')') i++;
            if (i >= n) pl_jx_fail(x, "incomplete format key");
            pl_jv key = pl_jv_str(x, s + st, i - st);
            i++;
            if (!pl_jv_dict_get(x, args, key, &val)) pl_jx_fail(x, "KeyError: '%s'", key.v.s->s);
            have_val = true;
        }
        char flags[8];
        size_t nf = 0;
        while (i < n && strchr("-+ #0", s[i]) && nf + 1 < sizeof flags) flags[nf++] = s[i++];
        flags[nf] = '\0';
        int64_t width = -1, prec = -1;
        if (i < n && s[i] == '*') pl_jx_unsupported(x, "'*' widths in %% formatting");
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            width = (width < 0 ? 0 : width) * 10 + (s[i++] - '0');
            if (width > 1 << 20) pl_jx_unsupported(x, "a %% format width that large");
        }
        if (i < n && s[i] == '.') {
            i++;
            prec = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                prec = prec * 10 + (s[i++] - '0');
                if (prec > 1000) pl_jx_unsupported(x, "a %% format precision that large");
            }
        }
        while (i < n && (s[i] == 'h' || s[i] == 'l' || s[i] == 'L')) i++;
        if (i >= n) pl_jx_fail(x, "incomplete format");
        char type = s[i++];
        if (type == '%') {
            pl_jbuf_putc(x, &out, '%');
            continue;
        }
        if (!have_val) {
            if (mapping) {
                val = args;
            } else {
                if (used >= argc) pl_jx_fail(x, "not enough arguments for format string");
                val = argv[used++];
            }
        }
        pl_jbuf piece = {0};
        bool left = strchr(flags, '-') != NULL;
        switch (type) {
        case 's': case 'r': case 'a': {
            if (type == 'a') pl_jx_unsupported(x, "%%a formatting");
            if (type == 'r') pl_jv_write_repr(x, &piece, val);
            else pl_jv_write_str(x, &piece, val);
            size_t len = piece.len, ncp = pl_utf8_count(piece.p ? piece.p : "", piece.len);
            if (prec >= 0 && (size_t)prec < ncp) {
                size_t off = 0, c = 0;
                while (off < len && c < (size_t)prec) {
                    off++;
                    while (off < len && ((unsigned char)piece.p[off] & 0xC0) == 0x80) off++;
                    c++;
                }
                len = off;
                ncp = (size_t)prec;
            }
            put_padded(x, &out, piece.p ? piece.p : "", len, ncp, width, left ? '<' : '>', ' ', 0);
            continue;
        }
        case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': {
            int64_t iv;
            if (val.kind == JV_INT || val.kind == JV_BOOL) iv = val.v.i;
            else if (val.kind == JV_FLOAT && (type == 'd' || type == 'i' || type == 'u')) {
                if (!isfinite(val.v.f) || fabs(val.v.f) > 9.2e18) pl_jx_unsupported(x, "%%d of a huge float");
                iv = (int64_t)val.v.f;
            } else {
                if (val.kind == JV_UNDEF) pl_jx_undef_fail(x, val);
                pl_jx_fail(x, "%%%c format: a number is required, not %s", type, pl_jv_type_name(val));
            }
            if (type == 'c') {
                if (iv < 0 || iv > 0x10FFFF) pl_jx_fail(x, "%%c arg not in range(0x110000)");
                char cb[4];
                size_t cl = pl_ju8_encode((uint32_t)iv, cb);
                put_padded(x, &out, cb, cl, 1, width, left ? '<' : '>', ' ', 0);
                continue;
            }
            char cfmt[24], num[128];
            int k;
            if (type == 'x' || type == 'X' || type == 'o') {
                if (strchr(flags, '#')) pl_jx_unsupported(x, "%%#x/%%#o formatting");
                uint64_t u = iv < 0 ? (uint64_t)0 - (uint64_t)iv : (uint64_t)iv;
                char digits[80];
                snprintf(cfmt, sizeof cfmt, "%%%s", type == 'x' ? "llx" : type == 'X' ? "llX" : "llo");
                snprintf(digits, sizeof digits, cfmt, (unsigned long long)u);
                k = snprintf(num, sizeof num, "%s%s", iv < 0 ? "-" : strchr(flags, '+') ? "+" : strchr(flags, ' ') ? " " : "", digits);
                if (width > k) {
                    bool zero = strchr(flags, '0') && !left;
                    size_t sl = (num[0] == '-' || num[0] == '+' || num[0] == ' ') ? 1 : 0;
                    put_padded(x, &out, num, (size_t)k, (size_t)k, width, left ? '<' : zero ? '=' : '>', zero ? '0' : ' ', sl);
                } else {
                    pl_jbuf_put(x, &out, num, (size_t)k);
                }
                continue;
            }
            snprintf(cfmt, sizeof cfmt, "%%%s*%slld", flags, prec >= 0 ? ".*" : "");
            int w = width < 0 ? 0 : (int)width;
            if (prec >= 0) k = snprintf(num, sizeof num, cfmt, w, (int)prec, (long long)iv);
            else k = snprintf(num, sizeof num, cfmt, w, (long long)iv);
            if (k < 0 || (size_t)k >= sizeof num) pl_jx_unsupported(x, "a formatted number that long");
            pl_jbuf_put(x, &out, num, (size_t)k);
            continue;
        }
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': {
            double d;
            if (val.kind == JV_FLOAT) d = val.v.f;
            else if (val.kind == JV_INT || val.kind == JV_BOOL) d = (double)val.v.i;
            else {
                if (val.kind == JV_UNDEF) pl_jx_undef_fail(x, val);
                pl_jx_fail(x, "must be real number, not %s", pl_jv_type_name(val));
            }
            if (!isfinite(d)) pl_jx_unsupported(x, "%% formatting of inf/nan");
            char cfmt[24], num[512];
            snprintf(cfmt, sizeof cfmt, "%%%s*.*%c", flags, type);
            int k = snprintf(num, sizeof num, cfmt, width < 0 ? 0 : (int)width, (int)(prec >= 0 ? prec : 6), d);
            if (k < 0 || (size_t)k >= sizeof num) pl_jx_unsupported(x, "a formatted number that long");
            pl_jbuf_put(x, &out, num, (size_t)k);
            continue;
        }
        default:
            pl_jx_fail(x, "unsupported format character '%c'", type);
        }
    }
    if (!mapping && used < argc && args.kind == JV_TUPLE)
        pl_jx_fail(x, "not all arguments converted during string formatting");
    if (!mapping && args.kind != JV_TUPLE && used == 0)
        pl_jx_fail(x, "not all arguments converted during string formatting");
    return pl_jv_str_buf(x, &out);
}
