/*
 * unicode.c -- lowercase lookup and the lenient UTF-8 decoding that
 * llama.cpp applies to text before pre-tokenizing it.
 */
#include "tokenizer/unicode.h"

uint32_t pl_ucp_tolower(uint32_t cp) {
    size_t lo = 0, hi = pl_ucd_lower_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pl_ucd_lower[mid][0] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < pl_ucd_lower_count && pl_ucd_lower[lo][0] == cp ? pl_ucd_lower[lo][1] : cp;
}

static inline int is_cont(uint8_t b) { return (b & 0xc0) == 0x80; }

uint32_t pl_utf8_decode(const uint8_t *s, size_t n, size_t *used) {
    uint8_t b = s[0];
    *used = 1;
    if (b < 0x80) return b;
    if ((b & 0xe0) == 0xc0) {
        if (n < 2 || !is_cont(s[1])) return PL_UCP_REPLACEMENT;
        *used = 2;
        return ((uint32_t)(b & 0x1f) << 6) | (s[1] & 0x3f);
    }
    if ((b & 0xf0) == 0xe0) {
        if (n < 3 || !is_cont(s[1]) || !is_cont(s[2])) return PL_UCP_REPLACEMENT;
        *used = 3;
        return ((uint32_t)(b & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
    }
    if ((b & 0xf8) == 0xf0) {
        if (n < 4 || !is_cont(s[1]) || !is_cont(s[2]) || !is_cont(s[3])) return PL_UCP_REPLACEMENT;
        uint32_t cp = ((uint32_t)(b & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
                      ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
        if (cp >= PL_UCP_MAX) return PL_UCP_REPLACEMENT; /* llama.cpp aborts here */
        *used = 4;
        return cp;
    }
    return PL_UCP_REPLACEMENT; /* stray continuation byte, or 0xf8..0xff */
}

size_t pl_utf8_encode(uint32_t cp, uint8_t *out) {
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xc0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xe0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (uint8_t)(0xf0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (uint8_t)(0x80 | (cp & 0x3f));
    return 4;
}
