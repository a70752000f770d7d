/*
 * srv_embed.h -- POST /v1/embeddings: the request as the engine will run
 * it (every input tokenized and checked against the context at parse
 * time, so that a bad request is a 400 before it queues), the work the
 * scheduler does for it -- one input per step on the job's sequence --
 * and OpenAI's response, the vectors as JSON floats or base64.
 */
#ifndef PL_SRV_EMBED_H
#define PL_SRV_EMBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"
#include "srv_model.h"
#include "srv_request.h"

#define SRV_MAX_EMBED_INPUTS 2048 /* inputs in one request: OpenAI's limit */

typedef struct srv_embd {
    int32_t **ids;       /* per input, its tokens (BOS/EOS as the vocabulary adds them to text) */
    size_t *n_ids;
    size_t n_inputs;
    int32_t pooling;     /* the server's pooling: mean, cls or last */
    uint32_t n_embd;     /* the model's embedding width */
    uint32_t dims;       /* floats returned per input: `dimensions`, else n_embd */
    bool base64;         /* encoding_format "base64" */
    uint64_t n_tokens;   /* the inputs' tokens together (usage) */
    float *vec;          /* [n_inputs][dims]: truncated to dims, then L2-normalised */
    float *work;         /* [n_embd]: one input's pooled vector */
    size_t n_done;       /* inputs embedded so far */
} srv_embd;

/* Parse and check a request body; pooling is the server's (--pooling or
 * the model's; POCKETLLM_POOLING_NONE refuses every request with a 400
 * saying how to choose one).  On failure nothing is left allocated and e
 * says why (400, naming the field). */
bool srv_embd_parse(const srv_model *m, int32_t pooling, const char *body, size_t len, srv_embd **out, srv_error *e);
void srv_embd_free(srv_embd *em);

/* Embed the next input on sequence seq of sess (the scheduler's thread):
 * 1 when every input is done, 0 when more remain, -1 when the engine
 * failed (msg says why).  *tokens gets the tokens evaluated. */
int srv_embd_step(srv_embd *em, pocketllm_session *sess, uint32_t seq, char *msg, size_t cap, size_t *tokens);

/* OpenAI's response body for a finished request (NULL: out of memory). */
char *srv_embd_reply(const srv_embd *em, const char *model_id);

#endif
