/*
 * jinja_str.c -- UTF-8 and the Python character classes the interpreter
 * needs: str.isspace() (strip, split, the lexer's \s), line boundaries
 * (splitlines) and str.isprintable() (repr).  Python strings index by code
 * point, so strings carry their code-point count and these helpers map
 * indexes to byte offsets.  Decoding and encoding are the tokenizer's
 * (tokenizer/unicode.h); here the text is already known to be valid.
 */
#include <string.h>

#include "chat/jinja_internal.h"
#include "chat/jinja_unicode_tables.h"

bool pl_utf8_valid(const char *s, size_t len, size_t *bad) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned char c = u[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            cp = c & 0x07;
        } else {
            if (bad) *bad = i;
            return false;
        }
        if (len - i <= need) {
            if (bad) *bad = i;
            return false;
        }
        for (size_t k = 1; k <= need; k++) {
            if ((u[i + k] & 0xC0) != 0x80) {
                if (bad) *bad = i;
                return false;
            }
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        /* overlong forms, surrogates, beyond U+10FFFF */
        if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            if (bad) *bad = i;
            return false;
        }
        i += need + 1;
    }
    return true;
}

size_t pl_utf8_count(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) n++;
    return n;
}

size_t pl_jstr_offset(const pl_jstr *s, size_t i) {
    if (s->ncp == s->len) return i < s->len ? i : s->len;
    size_t off = 0, k = 0;
    while (off < s->len && k < i) {
        off++;
        while (off < s->len && ((unsigned char)s->s[off] & 0xC0) == 0x80) off++;
        k++;
    }
    return off;
}

bool pl_py_isspace(uint32_t cp) {
    if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
    switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

bool pl_py_islinebreak(uint32_t cp) {
    return (cp >= 0x0A && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

uint16_t pl_py_flags(uint32_t cp) {
    size_t lo = 0, hi = pl_py_flag_runs_count;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (pl_py_flag_runs[mid][0] <= cp) lo = mid;
        else hi = mid;
    }
    return (uint16_t)pl_py_flag_runs[lo][1];
}

bool pl_py_isprintable(uint32_t cp) {
    if (cp < 0x80) return cp >= 0x20 && cp < 0x7F;
    return pl_py_flags(cp) & PL_PY_PRINTABLE;
}

/* The full mapping of cp in one of the three tables; its length. */
static size_t case_map(uint32_t cp, int table, uint32_t out[3]) {
    const pl_py_case_multi *multi = table == 0 ? pl_py_lower_multi : table == 1 ? pl_py_upper_multi : pl_py_title_multi;
    size_t nm = table == 0 ? pl_py_lower_multi_count : table == 1 ? pl_py_upper_multi_count : pl_py_title_multi_count;
    for (size_t lo = 0, hi = nm; lo < hi;) {
        size_t mid = (lo + hi) / 2;
        if (multi[mid].cp == cp) {
            for (int k = 0; k < multi[mid].n; k++) out[k] = multi[mid].to[k];
            return (size_t)multi[mid].n;
        }
        if (multi[mid].cp < cp) lo = mid + 1;
        else hi = mid;
    }
    const pl_py_case_run *runs = table == 0 ? pl_py_lower_runs : table == 1 ? pl_py_upper_runs : pl_py_title_runs;
    size_t nr = table == 0 ? pl_py_lower_runs_count : table == 1 ? pl_py_upper_runs_count : pl_py_title_runs_count;
    for (size_t lo = 0, hi = nr; lo < hi;) {
        size_t mid = (lo + hi) / 2;
        if (cp < runs[mid].first) {
            hi = mid;
        } else if (cp > runs[mid].last) {
            lo = mid + 1;
        } else {
            if (runs[mid].stride == 0 ? cp == runs[mid].first : (cp - runs[mid].first) % (uint32_t)runs[mid].stride == 0) {
                out[0] = (uint32_t)((int64_t)cp + runs[mid].delta);
                return 1;
            }
            break;
        }
    }
    out[0] = cp;
    return 1;
}

/* CPython's lower_ucs4: the full lowercase, with Greek capital sigma
 * final (U+03C2) after a cased letter not followed by one. */
static size_t lower_at(const uint32_t *cps, size_t n, size_t i, uint32_t out[3]) {
    if (cps[i] != 0x3A3) return case_map(cps[i], 0, out);
    size_t j = i;
    uint32_t c = 0;
    bool found = false;
    while (j > 0) {
        c = cps[--j];
        if (!(pl_py_flags(c) & PL_PY_CASE_IGNORABLE)) {
            found = true;
            break;
        }
    }
    bool final = found && (pl_py_flags(c) & PL_PY_CASED);
    if (final && i + 1 < n) {
        size_t k;
        for (k = i + 1; k < n; k++) {
            c = cps[k];
            if (!(pl_py_flags(c) & PL_PY_CASE_IGNORABLE)) break;
        }
        final = k == n || !(pl_py_flags(c) & PL_PY_CASED);
    }
    out[0] = final ? 0x3C2 : 0x3C3;
    return 1;
}

/* The code points of s[0..len) (valid UTF-8) in the arena. */
static uint32_t *decode_all(pl_jx *x, const char *s, size_t len, size_t *n) {
    size_t cnt = pl_utf8_count(s, len);
    uint32_t *cps = pl_jx_alloc_array(x, cnt ? cnt : 1, sizeof *cps);
    size_t i = 0, k = 0;
    while (i < len) i += pl_ju8_decode(s + i, &cps[k++]);
    *n = k;
    return cps;
}

static void put_cps(pl_jx *x, pl_jbuf *b, const uint32_t *m, size_t n) {
    char tmp[4];
    for (size_t i = 0; i < n; i++) pl_jbuf_put(x, b, tmp, pl_ju8_encode(m[i], tmp));
}

pl_jv pl_jstr_case(pl_jx *x, pl_jv s, int mode) {
    size_t n;
    uint32_t *cps = decode_all(x, s.v.s->s, s.v.s->len, &n);
    pl_jbuf b = {0};
    bool prev_cased = false;
    for (size_t i = 0; i < n; i++) {
        uint32_t m[3], c = cps[i];
        size_t k;
        uint16_t f = pl_py_flags(c);
        switch (mode) {
        case PL_CASE_LOWER: k = lower_at(cps, n, i, m); break;
        case PL_CASE_UPPER: k = case_map(c, 1, m); break;
        case PL_CASE_CAPITALIZE: k = i == 0 ? case_map(c, 2, m) : lower_at(cps, n, i, m); break;
        case PL_CASE_SWAPCASE:
            if (f & PL_PY_UPPER) k = lower_at(cps, n, i, m);
            else if (f & PL_PY_LOWER) k = case_map(c, 1, m);
            else {
                m[0] = c;
                k = 1;
            }
            break;
        default: /* str.title */
            k = prev_cased ? lower_at(cps, n, i, m) : case_map(c, 2, m);
            prev_cased = f & PL_PY_CASED;
            break;
        }
        put_cps(x, &b, m, k);
    }
    return pl_jv_str_markup(pl_jv_str_buf(x, &b), s.flags & JV_MARKUP);
}
