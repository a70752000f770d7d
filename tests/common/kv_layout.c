/*
 * kv_layout.c -- see kv_layout.h.
 */
#include "kv_layout.h"

#include <stdlib.h>
#include <string.h>

#include "quant/kv_types.h"

void *pl_test_kv_head_major(uint32_t type, const void *rows, int64_t n_pos, int64_t n_head_kv, int64_t head_dim,
                            int64_t cap) {
    const size_t head = (size_t)pl_kv_row_bytes(type, head_dim), row = head * (size_t)n_head_kv;
    uint8_t *hm = malloc(row * (size_t)cap);
    if (!hm) return NULL;
    memset(hm, 0xa5, row * (size_t)cap);
    for (int64_t h = 0; h < n_head_kv; h++)
        for (int64_t p = 0; p < n_pos; p++)
            memcpy(hm + ((size_t)h * (size_t)cap + (size_t)p) * head, (const uint8_t *)rows + (size_t)p * row + (size_t)h * head,
                   head);
    return hm;
}
