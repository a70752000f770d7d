/*
 * test_types.c -- the element type table: the block sizes and bytes per
 * block of the formats the engine reads, names that round-trip, and the
 * ids llama.cpp removed from GGUF marked as such.  (The whole table is
 * compared with the prebuilt libggml-base by the oracle tests.)
 */
#include "pltest.h"
#include "pocketllm.h"
#include "quant/types.h"

int main(void) {
    CHECK_EQ_U64(pocketllm_type_count(), 43);
    struct { const char *name; uint32_t id, block, bytes; } known[] = {
        {"f32", 0, 1, 4}, {"f16", 1, 1, 2}, {"q4_0", 2, 32, 18}, {"q4_1", 3, 32, 20}, {"q5_0", 6, 32, 22},
        {"q5_1", 7, 32, 24}, {"q8_0", 8, 32, 34}, {"q2_K", 10, 256, 84}, {"q3_K", 11, 256, 110},
        {"q4_K", 12, 256, 144}, {"q5_K", 13, 256, 176}, {"q6_K", 14, 256, 210}, {"q8_K", 15, 256, 292},
        {"iq2_xxs", 16, 256, 66}, {"iq1_s", 19, 256, 50}, {"iq4_nl", 20, 32, 18}, {"bf16", 30, 1, 2},
        {"tq1_0", 34, 256, 54}, {"tq2_0", 35, 256, 66}, {"mxfp4", 39, 32, 17},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        CHECK_STR(pocketllm_type_name(known[i].id), known[i].name);
        CHECK_EQ_U64(pocketllm_type_block_size(known[i].id), known[i].block);
        CHECK_EQ_U64(pocketllm_type_block_bytes(known[i].id), known[i].bytes);
        CHECK_EQ_U64(pocketllm_type_from_name(known[i].name), known[i].id);
    }
    CHECK(pocketllm_type_from_name("Q4_K") == 12); /* case-insensitive */
    CHECK(pocketllm_type_from_name("q4_0_4_4") == -1);
    CHECK(pocketllm_type_from_name("nope") == -1);
    uint32_t removed[] = {4, 5, 31, 32, 33, 36, 37, 38};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        CHECK(!pl_type_valid(removed[i]));
        CHECK(pocketllm_type_block_size(removed[i]) == 0);
        CHECK(pocketllm_type_name(removed[i]) != NULL);
    }
    CHECK(pocketllm_type_name(43) == NULL);
    uint64_t bytes;
    CHECK(pl_type_row_bytes(PL_TYPE_Q4_K, 512, &bytes) && bytes == 288);
    CHECK(!pl_type_row_bytes(PL_TYPE_Q4_K, 100, &bytes));
    CHECK(!pl_type_row_bytes(PL_TYPE_F32, UINT64_MAX / 2, &bytes)); /* overflow */
    TEST_DONE();
}
