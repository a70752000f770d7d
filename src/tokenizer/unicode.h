/*
 * unicode.h -- the Unicode facts the tokenizer needs, read the way
 * llama.cpp reads them: a flags word per code point (general category class
 * and White_Space, from tables generated at build time out of Debian's
 * Unicode Character Database), simple lowercase, and UTF-8 decoding with
 * llama.cpp's tolerance for malformed input.
 */
#ifndef PL_TOK_UNICODE_H
#define PL_TOK_UNICODE_H

#include <stddef.h>
#include <stdint.h>

enum {
    PL_UCP_UNDEFINED = 0x0001,  /* unassigned (Cn), or beyond U+10FFFF */
    PL_UCP_NUMBER = 0x0002,     /* \p{N} */
    PL_UCP_LETTER = 0x0004,     /* \p{L} */
    PL_UCP_SEPARATOR = 0x0008,  /* \p{Z} */
    PL_UCP_MARK = 0x0010,       /* \p{M} */
    PL_UCP_PUNCT = 0x0020,      /* \p{P} */
    PL_UCP_SYMBOL = 0x0040,     /* \p{S} */
    PL_UCP_CONTROL = 0x0080,    /* \p{C} other than Cn */
    PL_UCP_CLASSES = 0x00ff,
    PL_UCP_WHITESPACE = 0x0100  /* White_Space (PropList.txt) */
};

#define PL_UCP_MAX 0x110000u

/* generated tables (build dir, pl_unicode_tables.c) */
extern const char pl_ucd_version[];
extern const uint16_t pl_ucd_stage1[PL_UCP_MAX >> 8];
extern const uint16_t pl_ucd_stage2[];
extern const uint32_t pl_ucd_lower[][2];
extern const size_t pl_ucd_lower_count;

static inline uint16_t pl_ucp_flags(uint32_t cp) {
    if (cp >= PL_UCP_MAX) return PL_UCP_UNDEFINED;
    return pl_ucd_stage2[((uint32_t)pl_ucd_stage1[cp >> 8] << 8) | (cp & 0xff)];
}

/* Simple lowercase mapping (UnicodeData.txt field 13); cp itself if none. */
uint32_t pl_ucp_tolower(uint32_t cp);

/* Bytes of the sequence a lead byte announces, as llama.cpp counts them
 * (by the top four bits only: 1 for ASCII and stray continuation bytes). */
static inline size_t pl_utf8_lead_len(uint8_t b) {
    static const uint8_t len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return len[b >> 4];
}

#define PL_UCP_REPLACEMENT 0xfffdu

/* Decode the code point at s[0..n), n >= 1, as llama.cpp's
 * unicode_cpts_from_utf8 does: overlong forms and surrogates are accepted,
 * a malformed or truncated sequence yields U+FFFD and consumes one byte.
 * Where llama.cpp would decode a value beyond U+10FFFF (and then abort),
 * this yields U+FFFD and consumes one byte.  *used gets the bytes consumed. */
uint32_t pl_utf8_decode(const uint8_t *s, size_t n, size_t *used);

/* UTF-8 of cp (< 0x110000) into out[4]; returns its length. */
size_t pl_utf8_encode(uint32_t cp, uint8_t *out);

#endif
