/*
 * test_audio_load.c -- the audio tower loader's refusals (src/audio/
 * audio_tower_load.c): a tiny Qwen3-ASR-shaped mmproj written here, and
 * copies of it each broken in one way (a vision-only mmproj, another
 * projector, a missing or misshapen tensor, an unusable kernel type, no
 * epsilon, a width that does not pair with the text model, a truncated
 * file), each refused with a status and a message naming the problem --
 * never a crash.  The intact file opens and encodes a window to finite
 * numbers of the promised count and width (their values are checked
 * against libmtmd in tests/oracle/test_audio_tower.sh); windows that are
 * not whole 100-frame chunks, or of another mel height, are refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/audio_mel.h"
#include "audio/audio_tower.h"
#include "base/half.h"
#include "mmproj_plan.h"
#include "pltest.h"
#include "pocketllm.h"
#include "quant/types.h"

static char dir[] = "/tmp/pl_test_audio.XXXXXX";

/* the tiny shape: width 16 (2 heads of 8), FFN 32, 8 conv channels over
 * 16 mel bins (16 -> 8 -> 4 -> 2 rows: conv_out takes 2 x 8), 2 blocks,
 * projection 32 (the text model's width) */
enum { D = 16, F = 32, C = 8, MEL = 16, L = 2, PROJ = 32 };

enum mutation {
    OK_FILE, VISION_ONLY, BAD_PROJECTOR, MISSING_TENSOR, BAD_PROJ_WIDTH, BAD_CONV_SHAPE, BAD_CONV_TYPE, BAD_CONV_OUT,
    NO_MM_BIAS, NO_EPS, BAD_POS, BAD_BIAS_LEN, TRUNCATED, N_MUTATIONS
};

static const char *expect_msg[N_MUTATIONS] = {
    NULL, "no audio encoder", "audio projector 'qwen2a'", "a.blk.1.attn_k.weight is missing", "not a pair",
    "a.conv2d.2.weight has shape", "conv kernels must be f16 or f32", "a.conv_out.weight has shape",
    "mm.a.mlp.2.bias is missing", "layer_norm_epsilon", "a.position_embd.weight has shape",
    "a.conv2d.3.bias has 7 elements", "",
};

static void write_tower(const char *path, enum mutation mu) {
    plan p = {0};
    CHECK(pocketllm_gguf_writer_new(&p.w) == POCKETLLM_OK);
    pocketllm_gguf_writer *w = p.w;
    const int64_t proj = mu == BAD_PROJ_WIDTH ? 24 : PROJ;
    pocketllm_gguf_writer_set_str(w, "general.architecture", "clip");
    if (mu == VISION_ONLY) {
        /* a Qwen3-VL vision mmproj's keys (its tensors do not matter: it is refused first) */
        pocketllm_gguf_writer_set_str(w, "clip.projector_type", "qwen3vl_merger");
        pocketllm_gguf_writer_set_bool(w, "clip.has_vision_encoder", 1);
        pocketllm_gguf_writer_set_u32(w, "clip.vision.embedding_length", D);
        tensor(&p, "v.patch_embd.weight", PL_TYPE_F32, 4, 2, 2, 3, D, 0.3f);
    } else {
        pocketllm_gguf_writer_set_bool(w, "clip.has_audio_encoder", 1);
        pocketllm_gguf_writer_set_str(w, "clip.audio.projector_type", mu == BAD_PROJECTOR ? "qwen2a" : "qwen3a");
        pocketllm_gguf_writer_set_u32(w, "clip.audio.projection_dim", (uint32_t)proj);
        pocketllm_gguf_writer_set_u32(w, "clip.audio.embedding_length", D);
        pocketllm_gguf_writer_set_u32(w, "clip.audio.feed_forward_length", F);
        pocketllm_gguf_writer_set_u32(w, "clip.audio.block_count", L);
        pocketllm_gguf_writer_set_u32(w, "clip.audio.attention.head_count", 2);
        pocketllm_gguf_writer_set_u32(w, "clip.audio.num_mel_bins", MEL);
        if (mu != NO_EPS) pocketllm_gguf_writer_set_f32(w, "clip.audio.attention.layer_norm_epsilon", 1e-5f);
        for (int i = 1; i <= 3; i++) {
            char nm[64];
            const int64_t c_in = i == 1 ? 1 : C, c_out = mu == BAD_CONV_SHAPE && i == 2 ? C - 1 : C;
            snprintf(nm, sizeof nm, "a.conv2d.%d.weight", i);
            tensor(&p, nm, mu == BAD_CONV_TYPE && i == 3 ? PL_TYPE_BF16 : PL_TYPE_F16, 4, 3, 3, c_in, c_out, 0.3f);
            snprintf(nm, sizeof nm, "a.conv2d.%d.bias", i);
            tensor(&p, nm, PL_TYPE_F32, 3, 1, 1, mu == BAD_BIAS_LEN && i == 3 ? C - 1 : C, 1, 0.1f);
        }
        tensor(&p, "a.conv_out.weight", PL_TYPE_F16, 2, mu == BAD_CONV_OUT ? 3 * C : 2 * C, D, 1, 1, 0.25f);
        tensor(&p, "a.position_embd.weight", PL_TYPE_F32, 2, D, mu == BAD_POS ? 12 : 30, 1, 1, 1.0f);
        for (int l = 0; l < L; l++) {
            char b[64];
            snprintf(b, sizeof b, "a.blk.%d.ln1", l);
            norm(&p, b, D);
            const char *parts[4] = {"attn_q", "attn_k", "attn_v", "attn_out"};
            for (int k = 0; k < 4; k++) {
                if (mu == MISSING_TENSOR && l == 1 && k == 1) continue;
                snprintf(b, sizeof b, "a.blk.%d.%s", l, parts[k]);
                linear(&p, b, D, D, true);
            }
            snprintf(b, sizeof b, "a.blk.%d.ln2", l);
            norm(&p, b, D);
            snprintf(b, sizeof b, "a.blk.%d.ffn_up", l);
            linear(&p, b, D, F, true);
            snprintf(b, sizeof b, "a.blk.%d.ffn_down", l);
            linear(&p, b, F, D, true);
        }
        norm(&p, "a.post_ln", D);
        linear(&p, "mm.a.mlp.1", D, D, true);
        linear(&p, "mm.a.mlp.2", D, proj, mu != NO_MM_BIAS);
    }
    plan_write(&p, path);
    if (mu == TRUNCATED) {
        FILE *f = fopen(path, "rb+");
        CHECK(f && fseek(f, 0, SEEK_END) == 0);
        const long size = f ? ftell(f) : 0;
        if (f) fclose(f);
        CHECK(truncate(path, size / 2) == 0);
    }
}

/* A window of n_len frames of MEL bins through the tower: finite, and as
 * many rows of PROJ as pl_audio_window_tokens says. */
static void check_encode(pl_audio_tower *a) {
    enum { LEN = 200, TOK = LEN / 100 * 13 };
    CHECK(pl_audio_window_tokens(LEN) == TOK);
    float *m = rnd(MEL * LEN, 1.0f), *out = malloc(TOK * PROJ * sizeof *out);
    for (int i = 0; i < TOK * PROJ; i++) out[i] = NAN;
    pl_mel mel = {MEL, LEN, LEN - 30, m};
    CHECK_MSG(pl_audio_encode(a, &mel, out) == POCKETLLM_OK, "%s", pocketllm_last_error());
    bool finite = true;
    for (int i = 0; i < TOK * PROJ; i++) finite &= isfinite(out[i]) != 0;
    CHECK(finite);
    pl_mel odd = {MEL, 150, 150, m};
    CHECK(pl_audio_encode(a, &odd, out) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(strstr(pocketllm_last_error(), "multiple of 100") != NULL);
    pl_mel tall = {MEL * 2, 100, 100, m};
    CHECK(pl_audio_encode(a, &tall, out) == POCKETLLM_ERR_INVALID_ARGUMENT);
    CHECK(strstr(pocketllm_last_error(), "mel bins") != NULL);
    CHECK(pl_audio_window_bytes(pl_audio_hparams_of(a), LEN) > (uint64_t)(TOK * PROJ * 4));
    free(m);
    free(out);
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL);
    char text_path[256], path[256];
    snprintf(text_path, sizeof text_path, "%s/text.gguf", dir);
    pocketllm_model *text = open_text(text_path, PROJ, 1);
    if (!text) TEST_DONE();

    for (int mu = 0; mu < N_MUTATIONS; mu++) {
        srand(1);
        snprintf(path, sizeof path, "%s/tower%d.gguf", dir, mu);
        write_tower(path, (enum mutation)mu);
        pl_audio_tower *a = NULL;
        pocketllm_status st = pl_audio_open(text, path, &a);
        if (mu == OK_FILE) {
            CHECK_MSG(st == POCKETLLM_OK && a, "%s", pocketllm_last_error());
        } else {
            CHECK_MSG(st != POCKETLLM_OK && !a, "mutation %d opened", mu);
            CHECK_MSG(strstr(pocketllm_last_error(), expect_msg[mu]) != NULL && pocketllm_last_error()[0],
                      "mutation %d: '%s' lacks '%s'", mu, pocketllm_last_error(), expect_msg[mu]);
        }
        if (a) {
            const pl_audio_hparams *hp = pl_audio_hparams_of(a);
            CHECK(!strcmp(hp->projector, "qwen3a") && hp->n_embd == D && hp->n_layer == L && hp->n_head == 2 &&
                  hp->head_dim == 8 && hp->n_ff == F && hp->n_mel == MEL && hp->conv_channels == C &&
                  hp->n_embd_text == PROJ && fabsf(hp->eps - 1e-5f) < 1e-9f);
            check_encode(a);
            pl_audio_close(a);
        }
        unlink(path);
    }
    pocketllm_model_close(text);
    unlink(text_path);
    rmdir(dir);
    TEST_DONE();
}
