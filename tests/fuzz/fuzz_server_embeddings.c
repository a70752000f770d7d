/*
 * fuzz_server_embeddings.c -- libFuzzer target for POST /v1/embeddings'
 * request handler without a network (srv_embed.h): the first byte picks
 * the server's pooling (its two lowest bits: none -- every request
 * refused --, mean, cls, last), the rest is the raw HTTP body.  It is
 * parsed, validated and tokenized exactly as `pocketllm serve` does; an
 * accepted request then goes through the response builder in both
 * encodings with made-up vectors (the forward pass itself runs only when
 * a request is served, never here).  Nothing may crash, leak, hang or
 * allocate without bound, and every refusal has a 4xx and a message.
 *
 * The model is the tiny synthetic checkpoint (built-in byte vocabulary),
 * opened with its weights (the embedding width comes from them), with a
 * context of 64 positions so that the over-long-input path is reached.
 * Seeds: seeds/fuzz_server_embeddings.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pocketllm.h"
#include "srv_embed.h"
#include "srv_model.h"
#include "srv_response.h"

static srv_model model;
static int ready;

static int setup(void) {
    char dir[] = "/tmp/pl_fuzz_embed.XXXXXX";
    if (!mkdtemp(dir)) return 0;
    char gguf[128];
    snprintf(gguf, sizeof gguf, "%s/m.gguf", dir);
    pocketllm_synth_params sp = pocketllm_synth_default_params();
    sp.shape = "tiny";
    if (pocketllm_synth(&sp, gguf)) return 0;
    srv_model_params mp = {.path = gguf, .n_ctx = 64, .n_threads = 1};
    char *err = NULL;
    const int ok = srv_model_open(&mp, &model, &err) == POCKETLLM_OK;
    if (!ok) fprintf(stderr, "fuzz_server_embeddings: %s\n", err ? err : "cannot open the model");
    free(err);
    unlink(gguf);
    rmdir(dir);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) ready = setup() ? 1 : -1;
    if (ready < 0) abort(); /* the harness itself is broken: say so loudly */
    if (size < 1) return 0;
    const int32_t pooling = data[0] & 3; /* none, mean, cls, last */
    /* an exact-size copy, so that a read past the body is caught */
    const size_t len = size - 1;
    char *body = malloc(len ? len : 1);
    if (len) memcpy(body, data + 1, len);
    srv_embd *em = NULL;
    srv_error e;
    if (srv_embd_parse(&model, pooling, body, len, &em, &e)) {
        if (pooling == POCKETLLM_POOLING_NONE || !em->n_inputs || em->dims < 1 || em->dims > em->n_embd) abort();
        for (size_t i = 0; i < em->n_inputs; i++) {
            if (em->n_ids[i] < 1 || em->n_ids[i] > model.n_ctx) abort();
            for (size_t k = 0; k < em->n_ids[i]; k++)
                if (em->ids[i][k] < 0 || em->ids[i][k] >= model.n_vocab) abort();
        }
        for (size_t k = 0; k < em->n_inputs * em->dims; k++) em->vec[k] = (float)k * 0.001f - 0.5f;
        em->n_done = em->n_inputs;
        free(srv_embd_reply(em, model.id));
        em->base64 = !em->base64;
        free(srv_embd_reply(em, model.id));
        srv_embd_free(em);
    } else {
        if (e.http < 400 || e.http > 599 || !e.message[0]) abort(); /* every refusal has a status and a message */
        free(srv_json_error(&e));
    }
    free(body);
    return 0;
}
