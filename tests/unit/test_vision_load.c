/*
 * test_vision_load.c -- the vision tower loader's refusals (src/vision/
 * vision_load.c): a tiny Qwen3-VL-shaped mmproj written here, and copies of
 * it each broken in one way (wrong projector, a missing or misshapen
 * tensor, an unusable type, inconsistent DeepStack flags, a width that does
 * not pair with the text model, ...), each refused with a status and a
 * message naming the problem -- never a crash.  The intact file opens and
 * encodes an image to finite numbers of the promised width (their values
 * are checked against libmtmd in tests/oracle/test_vision_tower.sh), and an
 * image whose sides are not multiples of the merged patch is refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmproj_plan.h"
#include "pltest.h"
#include "pocketllm.h"
#include "quant/types.h"
#include "vision/vision.h"

static char dir[] = "/tmp/pl_test_vision.XXXXXX";

/* the tiny shape: width 16 (2 heads of 8), FFN 32, patch 2, a 4 x 4
 * position table, 2 blocks with DeepStack at block 1, projection 32 */
enum { D = 16, F = 32, P = 2, SIDE = 4, L = 2, PROJ = 32, M = 4 * D };

enum mutation {
    OK_FILE, BAD_PROJECTOR, NO_QKV_BIAS, BAD_QKV_SHAPE, BAD_POS_TABLE, BAD_DS_FLAGS, BAD_PROJ_WIDTH,
    NO_GELU, BAD_VECTOR_TYPE, NO_EPS, BAD_PATCH_DIMS, N_MUTATIONS
};

static const char *expect_msg[N_MUTATIONS] = {
    NULL, "projector 'mlp'", "attn_qkv.bias is missing", "attn_qkv.weight has shape", "a square",
    "is_deepstack_layers[0]", "not a pair", "GELU", "vectors must be", "layer_norm_epsilon", "v.patch_embd.weight has shape",
};

static void write_tower(const char *path, enum mutation mu) {
    plan p = {0};
    CHECK(pocketllm_gguf_writer_new(&p.w) == POCKETLLM_OK);
    pocketllm_gguf_writer *w = p.w;
    const float half[3] = {0.5f, 0.5f, 0.5f};
    const uint8_t deep[L] = {mu == BAD_DS_FLAGS, 1};
    const int64_t proj = mu == BAD_PROJ_WIDTH ? 24 : PROJ;
    pocketllm_gguf_writer_set_str(w, "general.architecture", "clip");
    pocketllm_gguf_writer_set_str(w, "clip.projector_type", mu == BAD_PROJECTOR ? "mlp" : "qwen3vl_merger");
    pocketllm_gguf_writer_set_bool(w, "clip.has_vision_encoder", 1);
    if (mu != NO_GELU) pocketllm_gguf_writer_set_bool(w, "clip.use_gelu", 1);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.projection_dim", (uint32_t)proj);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.image_size", SIDE * P);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.patch_size", P);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.embedding_length", D);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.feed_forward_length", F);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.block_count", L);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.attention.head_count", 2);
    pocketllm_gguf_writer_set_u32(w, "clip.vision.spatial_merge_size", 2);
    if (mu != NO_EPS) pocketllm_gguf_writer_set_f32(w, "clip.vision.attention.layer_norm_epsilon", 1e-6f);
    pocketllm_gguf_writer_set_array(w, "clip.vision.image_mean", POCKETLLM_GGUF_FLOAT32, half, 3);
    pocketllm_gguf_writer_set_array(w, "clip.vision.image_std", POCKETLLM_GGUF_FLOAT32, half, 3);
    pocketllm_gguf_writer_set_array(w, "clip.vision.is_deepstack_layers", POCKETLLM_GGUF_BOOL, deep, L);
    if (mu == BAD_PATCH_DIMS) tensor(&p, "v.patch_embd.weight", PL_TYPE_F32, 3, P * P, 3, D, 1, 0.3f);
    else tensor(&p, "v.patch_embd.weight", PL_TYPE_F32, 4, P, P, 3, D, 0.3f);
    tensor(&p, "v.patch_embd.weight.1", PL_TYPE_F32, 4, P, P, 3, D, 0.3f);
    tensor(&p, "v.patch_embd.bias", PL_TYPE_F32, 1, D, 1, 1, 1, 0.1f);
    tensor(&p, "v.position_embd.weight", PL_TYPE_F32, 2, D, mu == BAD_POS_TABLE ? 15 : SIDE * SIDE, 1, 1, 1.0f);
    for (int l = 0; l < L; l++) {
        char b[64];
        snprintf(b, sizeof b, "v.blk.%d.ln1", l);
        norm(&p, b, D);
        snprintf(b, sizeof b, "v.blk.%d.attn_qkv", l);
        if (mu == BAD_QKV_SHAPE && l == 1) linear(&p, b, D, 3 * D - 1, true);
        else linear(&p, b, D, 3 * D, !(mu == NO_QKV_BIAS && l == 1));
        snprintf(b, sizeof b, "v.blk.%d.attn_out", l);
        linear(&p, b, D, D, true);
        snprintf(b, sizeof b, "v.blk.%d.ln2", l);
        norm(&p, b, D);
        snprintf(b, sizeof b, "v.blk.%d.ffn_up", l);
        if (mu == BAD_VECTOR_TYPE && l == 1) {
            tensor(&p, "v.blk.1.ffn_up.weight", PL_TYPE_F32, 2, D, F, 1, 1, 0.25f);
            tensor(&p, "v.blk.1.ffn_up.bias", PL_TYPE_Q8_0, 1, F, 1, 1, 1, 0);
        } else linear(&p, b, D, F, true);
        snprintf(b, sizeof b, "v.blk.%d.ffn_down", l);
        linear(&p, b, F, D, true);
    }
    norm(&p, "v.deepstack.1.norm", M);
    linear(&p, "v.deepstack.1.fc1", M, M, true);
    linear(&p, "v.deepstack.1.fc2", M, proj, true);
    norm(&p, "v.post_ln", D);
    linear(&p, "mm.0", M, M, true);
    linear(&p, "mm.2", M, proj, true);
    plan_write(&p, path);
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL);
    char text_path[256], path[256];
    snprintf(text_path, sizeof text_path, "%s/text.gguf", dir);
    /* a text model of width 32 with one DeepStack input */
    pocketllm_model *text = open_text(text_path, PROJ, 2);
    if (!text) TEST_DONE();

    for (int mu = 0; mu < N_MUTATIONS; mu++) {
        srand(1);
        snprintf(path, sizeof path, "%s/tower%d.gguf", dir, mu);
        write_tower(path, (enum mutation)mu);
        pl_vision *v = NULL;
        pocketllm_status st = pl_vision_open(text, path, &v);
        if (mu == OK_FILE) {
            CHECK_MSG(st == POCKETLLM_OK && v, "%s", pocketllm_last_error());
        } else {
            CHECK_MSG(st != POCKETLLM_OK && !v, "mutation %d opened", mu);
            CHECK_MSG(strstr(pocketllm_last_error(), expect_msg[mu]) != NULL, "mutation %d: '%s' lacks '%s'", mu,
                      pocketllm_last_error(), expect_msg[mu]);
        }
        if (!v) {
            unlink(path);
            continue;
        }
        const pl_vision_hparams *hp = pl_vision_hparams_of(v);
        CHECK(hp->n_deepstack == 1 && hp->deepstack_layers[0] == 1 && hp->n_layer == L && hp->head_dim == 8);
        CHECK(pl_vision_out_width(v) == 2 * PROJ);
        /* a 12 x 8 image: 6 x 4 patches, 3 x 2 merged tokens */
        enum { W = 12, H = 8 };
        float *rgb = rnd(W * H * 3, 1.0f), out[6 * 2 * PROJ];
        pl_image_f32 img = {W, H, rgb};
        for (size_t i = 0; i < sizeof out / sizeof *out; i++) out[i] = NAN;
        CHECK_MSG(pl_vision_encode(v, &img, out) == POCKETLLM_OK, "%s", pocketllm_last_error());
        bool finite = true;
        for (size_t i = 0; i < sizeof out / sizeof *out; i++) finite &= isfinite(out[i]) != 0;
        CHECK(finite);
        pl_image_f32 odd = {W - 2, H, rgb};
        CHECK(pl_vision_encode(v, &odd, out) == POCKETLLM_ERR_INVALID_ARGUMENT);
        CHECK(strstr(pocketllm_last_error(), "multiple of 4") != NULL);
        free(rgb);
        pl_vision_close(v);
        unlink(path);
    }
    pocketllm_model_close(text);
    unlink(text_path);
    rmdir(dir);
    TEST_DONE();
}
