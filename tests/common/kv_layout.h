/*
 * kv_layout.h -- the head-major copy of a row-major KV cache, for the tests
 * that check the head-major layout (pl_attn_params.kv_cap) gives the same
 * bits as the rows it was made from.
 */
#ifndef PL_TEST_KV_LAYOUT_H
#define PL_TEST_KV_LAYOUT_H

#include <stdint.h>

/* A malloc'ed copy of n_pos rows of n_head_kv heads of head_dim values in
 * `type` (rows) laid out head-major with room for cap >= n_pos positions a
 * head; the unused positions hold 0xa5 bytes, so a kernel that strays into
 * them shows.  NULL when out of memory. */
void *pl_test_kv_head_major(uint32_t type, const void *rows, int64_t n_pos, int64_t n_head_kv, int64_t head_dim,
                            int64_t cap);

#endif
