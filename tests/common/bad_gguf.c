/*
 * bad_gguf.c -- the malformed GGUF files, one function per class.
 */
#include "bad_gguf.h"

#include <string.h>

static const uint64_t NE_A[2] = {4, 2}; /* f32: 32 bytes */
static const uint64_t NE_B[1] = {8};    /* f16: 16 bytes */

static good_gguf_layout layout;

static void kvs(gb *b) {
    gb_kv_str(b, "general.architecture", "test");
    gb_kv_u32(b, "test.block_count", 1);
}

void good_gguf_build(gb *b) {
    gb_header(b, 3, 2, 2);
    layout.kv_start = b->n;
    kvs(b);
    layout.tensors_start = b->n;
    gb_tensor(b, "a", 2, NE_A, 0, 0);
    gb_tensor(b, "b", 1, NE_B, 1, 32);
    gb_pad(b, 32);
    layout.data_start = b->n;
    for (int i = 0; i < 48; i++) gb_u8(b, (uint8_t)i);
    layout.data_end = b->n;
    gb_pad(b, 32);
}

void good_gguf_layout_get(good_gguf_layout *l) {
    gb b = {0};
    good_gguf_build(&b);
    gb_free(&b);
    *l = layout;
}

/* header + the two keys, then the given tensor infos and 64 data bytes */
static void with_tensors(gb *b, uint64_t n_tensors, void (*infos)(gb *)) {
    gb_header(b, 3, n_tensors, 2);
    kvs(b);
    infos(b);
    gb_pad(b, 32);
    gb_zeros(b, 64);
}

static void bad_magic(gb *b) { gb_bytes(b, "GGUX", 4), gb_u32(b, 3), gb_u64(b, 0), gb_u64(b, 0); }
static void empty_file(gb *b) { (void)b; }
static void short_magic(gb *b) { gb_bytes(b, "GG", 2); }
static void version0(gb *b) { gb_header(b, 0, 0, 0); }
static void version1(gb *b) { gb_header(b, 1, 0, 0); }
static void version4(gb *b) { gb_header(b, 4, 0, 0); }
static void version_swapped(gb *b) { gb_header(b, 0x03000000u, 0, 0); }
static void absurd_tensor_count(gb *b) { gb_header(b, 3, 1ull << 62, 0); }
static void absurd_kv_count(gb *b) { gb_header(b, 3, 0, 1ull << 40); }

static void key_past_eof(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_u64(b, 1ull << 40);
    gb_bytes(b, "general", 7);
}

static void string_past_eof(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_str(b, "general.name");
    gb_u32(b, 8);
    gb_u64(b, 1000);
    gb_bytes(b, "short", 5);
}

static void empty_key(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_kv_u32(b, "", 1);
}

static void duplicate_key(gb *b) {
    gb_header(b, 3, 0, 2);
    gb_kv_u32(b, "general.x", 1);
    gb_kv_u32(b, "general.x", 2);
}

static void invalid_value_type(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_str(b, "general.x");
    gb_u32(b, 13);
    gb_u32(b, 0);
}

static void array_count_absurd(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_str(b, "general.x");
    gb_u32(b, 9);
    gb_u32(b, 4);
    gb_u64(b, 1ull << 60);
    gb_u32(b, 7);
}

static void string_array_count_absurd(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_str(b, "tokenizer.ggml.tokens");
    gb_u32(b, 9);
    gb_u32(b, 8);
    gb_u64(b, 1ull << 61);
    gb_str(b, "a");
}

static void array_bad_elem_type(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_str(b, "general.x");
    gb_u32(b, 9);
    gb_u32(b, 77);
    gb_u64(b, 1);
    gb_u32(b, 0);
}

static void nested_too_deep(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_str(b, "general.x");
    gb_u32(b, 9);
    for (int i = 0; i < 12; i++) {
        gb_u32(b, 9); /* element type: array */
        gb_u64(b, 1);
    }
    gb_u32(b, 4);
    gb_u64(b, 1);
    gb_u32(b, 1);
}

static void alignment_zero(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_kv_u32(b, "general.alignment", 0);
}

static void alignment_not_pow2(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_kv_u32(b, "general.alignment", 48);
}

static void alignment_wrong_type(gb *b) {
    gb_header(b, 3, 0, 1);
    gb_str(b, "general.alignment");
    gb_u32(b, 10);
    gb_u64(b, 32);
}

static void ti_too_many_dims(gb *b) {
    static const uint64_t ne[5] = {1, 1, 1, 1, 1};
    gb_tensor(b, "a", 5, ne, 0, 0);
}
static void too_many_dims(gb *b) { with_tensors(b, 1, ti_too_many_dims); }

static void ti_negative_dim(gb *b) {
    static const uint64_t ne[2] = {4, (uint64_t)-2};
    gb_tensor(b, "a", 2, ne, 0, 0);
}
static void negative_dim(gb *b) { with_tensors(b, 1, ti_negative_dim); }

static void ti_dim_overflow(gb *b) {
    static const uint64_t ne[3] = {1ull << 32, 1ull << 32, 4};
    gb_tensor(b, "a", 3, ne, 0, 0);
}
static void dim_product_overflow(gb *b) { with_tensors(b, 1, ti_dim_overflow); }

static void ti_bytes_overflow(gb *b) {
    static const uint64_t ne[2] = {1ull << 32, 1ull << 30}; /* 2^62 elements * 4 bytes */
    gb_tensor(b, "a", 2, ne, 0, 0);
}
static void byte_size_overflow(gb *b) { with_tensors(b, 1, ti_bytes_overflow); }

static void ti_unknown_type(gb *b) { gb_tensor(b, "a", 2, NE_A, 99, 0); }
static void unknown_type(gb *b) { with_tensors(b, 1, ti_unknown_type); }

static void ti_removed_type(gb *b) { gb_tensor(b, "a", 2, NE_A, 31, 0); }
static void removed_type(gb *b) { with_tensors(b, 1, ti_removed_type); }

static void ti_partial_block(gb *b) {
    static const uint64_t ne[1] = {17};
    gb_tensor(b, "a", 1, ne, 2, 0);
}
static void partial_block(gb *b) { with_tensors(b, 1, ti_partial_block); }

static void ti_unaligned(gb *b) { gb_tensor(b, "a", 2, NE_A, 0, 4); }
static void unaligned_offset(gb *b) { with_tensors(b, 1, ti_unaligned); }

static void ti_past_eof(gb *b) { gb_tensor(b, "a", 2, NE_A, 0, 1ull << 20); }
static void data_past_eof(gb *b) { with_tensors(b, 1, ti_past_eof); }

static void ti_offset_overflow(gb *b) { gb_tensor(b, "a", 2, NE_A, 0, UINT64_MAX - 31); }
static void offset_overflow(gb *b) { with_tensors(b, 1, ti_offset_overflow); }

static void ti_overlap(gb *b) {
    gb_tensor(b, "a", 2, NE_A, 0, 0);
    gb_tensor(b, "b", 1, NE_B, 1, 0);
}
static void overlapping(gb *b) { with_tensors(b, 2, ti_overlap); }

static void ti_dup_name(gb *b) {
    gb_tensor(b, "a", 2, NE_A, 0, 0);
    gb_tensor(b, "a", 1, NE_B, 1, 32);
}
static void duplicate_tensor(gb *b) { with_tensors(b, 2, ti_dup_name); }

static void ti_long_name(gb *b) {
    char name[65];
    memset(name, 'x', 64);
    name[64] = '\0';
    gb_tensor(b, name, 2, NE_A, 0, 0);
}
static void long_tensor_name(gb *b) { with_tensors(b, 1, ti_long_name); }

static void ti_name_past_eof(gb *b) { gb_u64(b, 1ull << 50); }
static void tensor_name_past_eof(gb *b) { with_tensors(b, 1, ti_name_past_eof); }

static void no_data_section(gb *b) {
    gb_header(b, 3, 1, 2);
    kvs(b);
    gb_tensor(b, "a", 2, NE_A, 0, 0);
}

static void truncated_header(gb *b) {
    good_gguf_build(b);
    b->n = 12;
}
static void truncated_kv(gb *b) {
    /* no tensors, so the counts fit and the cut lands in the last value */
    gb_header(b, 3, 0, 2);
    kvs(b);
    b->n -= 2;
}
static void truncated_tensor_info(gb *b) {
    good_gguf_build(b);
    b->n = layout.tensors_start + 6;
}
static void truncated_data(gb *b) {
    good_gguf_build(b);
    b->n = layout.data_start + 20;
}

const bad_gguf_case bad_gguf_cases[] = {
    {"empty_file", "too short", empty_file},
    {"short_magic", "too short", short_magic},
    {"bad_magic", "bad magic", bad_magic},
    {"version_0", "bad GGUF version 0", version0},
    {"version_1", "version 1 is not supported", version1},
    {"version_4", "bad GGUF version 4", version4},
    {"version_byteswapped", "byte-swapped", version_swapped},
    {"absurd_tensor_count", "tensor count", absurd_tensor_count},
    {"absurd_kv_count", "metadata count", absurd_kv_count},
    {"key_length_past_eof", "past the end", key_past_eof},
    {"string_length_past_eof", "past the end", string_past_eof},
    {"tensor_name_past_eof", "past the end", tensor_name_past_eof},
    {"empty_key", "is empty", empty_key},
    {"duplicate_key", "duplicate key", duplicate_key},
    {"invalid_value_type", "invalid value type", invalid_value_type},
    {"array_count_absurd", "more than the", array_count_absurd},
    {"string_array_count_absurd", "more than the", string_array_count_absurd},
    {"array_bad_element_type", "invalid element type", array_bad_elem_type},
    {"arrays_nested_too_deep", "nested deeper", nested_too_deep},
    {"alignment_zero", "not a power of two", alignment_zero},
    {"alignment_not_pow2", "not a power of two", alignment_not_pow2},
    {"alignment_wrong_type", "must be uint32", alignment_wrong_type},
    {"too_many_dims", "dimensions, more than", too_many_dims},
    {"negative_dim", "negative", negative_dim},
    {"dim_product_overflow", "element count overflows", dim_product_overflow},
    {"byte_size_overflow", "byte size overflows", byte_size_overflow},
    {"unknown_type_id", "unknown type id 99", unknown_type},
    {"removed_type_id", "no longer", removed_type},
    {"partial_block", "not whole", partial_block},
    {"unaligned_offset", "not a multiple of the alignment", unaligned_offset},
    {"tensor_data_past_eof", "runs past the end", data_past_eof},
    {"tensor_offset_overflow", "runs past the end", offset_overflow},
    {"no_data_section", "past the end of the file", no_data_section},
    {"overlapping_tensors", "overlap", overlapping},
    {"duplicate_tensor_name", "duplicate tensor name", duplicate_tensor},
    {"tensor_name_too_long", "longer than", long_tensor_name},
    {"truncated_header", "file ends inside", truncated_header},
    {"truncated_metadata", "file ends inside", truncated_kv},
    {"truncated_tensor_info", "file ends inside", truncated_tensor_info},
    {"truncated_data", "runs past the end", truncated_data},
    {NULL, NULL, NULL},
};
