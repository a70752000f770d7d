/*
 * fuzz_server_request.c -- libFuzzer target for the server's request
 * handler without a network: the first byte picks the endpoint (chat or
 * completions), the rest is the raw HTTP body.  It is parsed, validated,
 * rendered through a chat template and tokenized exactly as `pocketllm
 * serve` does (srv_request_parse); an accepted request then goes through
 * the output side too -- the stop-string filter, the streaming reasoning
 * split and every response builder -- with its own prompt text standing in
 * for generated text, so bytes that are not UTF-8 reach the JSON writers.
 * Nothing may crash, leak, hang or allocate without bound.
 *
 * The model is a tiny synthetic checkpoint (built-in byte vocabulary) with
 * a ChatML template that knows Qwen3's enable_thinking, written once at
 * start into a temporary folder; the context is 256 positions so that the
 * over-long-prompt path is reached.  Seeds: seeds/fuzz_server_request.sh.
 *
 * Images: when bit 2 of the first byte is set, the request goes to a
 * second model that takes them -- a random-weight Qwen3-VL pair: a qwen3vl
 * text model of the tower's width with one small layer and the built-in
 * vocabulary, the Qwen3-VL-2B tower cut to one block (no DeepStack), the
 * same template, a vision tower opened from its mmproj -- so that image
 * parts go through the URL rules, the base64 decoder, the image decoders
 * and the composition's token count (the tower itself runs only when a
 * request is served, never here).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pocketllm.h"
#include "srv_model.h"
#include "srv_request.h"
#include "srv_response.h"
#include "srv_stop.h"
#include "srv_think.h"

static const char TEMPLATE[] =
    "{%- for message in messages %}{{ '<|im_start|>' + message.role + '\\n' }}"
    "{%- if message.content is string %}{{ message.content }}{%- endif %}"
    "{%- if message.reasoning_content %}<think>{{ message.reasoning_content }}</think>{%- endif %}"
    "{{ '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}";

static srv_model model, vmodel;
static int ready;

static int setup(void) {
    char dir[] = "/tmp/pl_fuzz_server.XXXXXX";
    if (!mkdtemp(dir)) return 0;
    char gguf[128], tmpl[128];
    snprintf(gguf, sizeof gguf, "%s/m.gguf", dir);
    snprintf(tmpl, sizeof tmpl, "%s/t.jinja", dir);
    FILE *f = fopen(tmpl, "wb");
    if (!f) return 0;
    fwrite(TEMPLATE, 1, sizeof TEMPLATE - 1, f);
    fclose(f);
    pocketllm_synth_params sp = pocketllm_synth_default_params();
    sp.shape = "tiny";
    if (pocketllm_synth(&sp, gguf)) return 0;
    srv_model_params mp = {.path = gguf, .template_path = tmpl, .n_ctx = 256, .n_threads = 1, .vocab_only = 1};
    char *err = NULL;
    int ok = srv_model_open(&mp, &model, &err) == POCKETLLM_OK;
    if (!ok) fprintf(stderr, "fuzz_server_request: %s\n", err ? err : "cannot open the model");
    free(err);
    unlink(gguf);
    /* the model that takes images: its weights are needed (the tower is
     * opened for them), so it is small in every way but its width */
    char vgguf[128], vmm[128];
    snprintf(vgguf, sizeof vgguf, "%s/vl.gguf", dir);
    snprintf(vmm, sizeof vmm, "%s/mm.gguf", dir);
    pocketllm_synth_params vp = pocketllm_synth_default_params();
    vp.arch = "qwen3vl";
    vp.n_embd = 2048; /* the tower's output width */
    vp.n_layer = 1;
    vp.n_head = 2;
    vp.n_head_kv = 1;
    vp.head_dim = 64;
    vp.n_ff = 256;
    pocketllm_synth_mmproj_params mm = {.shape = "qwen3vl-2b", .type = 1, .n_layer = 1, .seed = 1};
    if (ok && (pocketllm_synth(&vp, vgguf) || pocketllm_synth_mmproj(&mm, vmm))) {
        fprintf(stderr, "fuzz_server_request: synth of the Qwen3-VL pair: %s\n", pocketllm_last_error());
        ok = 0;
    }
    srv_model_params vmp = {.path = vgguf, .template_path = tmpl, .n_ctx = 256, .n_threads = 1,
                            .mmproj_path = vmm, .image_max_tokens = 64};
    if (ok && srv_model_open(&vmp, &vmodel, &err) != POCKETLLM_OK) {
        fprintf(stderr, "fuzz_server_request: the Qwen3-VL pair: %s\n", err ? err : "cannot open it");
        ok = 0;
    }
    free(err);
    unlink(vgguf);
    unlink(vmm);
    unlink(tmpl);
    rmdir(dir);
    return ok;
}

/* The output side, on text that came from the request. */
static void exercise_output(const srv_model *m, const srv_request *r, const char *text, size_t len) {
    srv_update u;
    srv_update_init(&u, r->n_prompts * r->n);
    for (size_t i = 0; i < u.n_choices; i++) {
        srv_stop st;
        srv_stop_init(&st, r->stop, r->n_stop);
        /* in pieces of 3 bytes, as tokens would come */
        for (size_t at = 0; at < len && !st.matched; at += 3)
            srv_stop_push(&st, text + at, len - at < 3 ? len - at : 3, &u.c[i].text);
        srv_stop_flush(&st, &u.c[i].text);
        srv_stop_free(&st);
        u.c[i].finished = true;
        u.c[i].finish = "stop";
        u.c[i].n_gen = (uint32_t)(len / 3);
    }
    u.done = true;
    srv_reply rp;
    srv_reply_init(&rp, m, r);
    free(srv_json_final(&rp, &u));
    if (u.n_choices && r->kind == SRV_CHAT) {
        srv_think th;
        srv_think_init(&th, m->tmpl, r->prompts[0].text);
        srv_buf rs = {0}, cs = {0};
        for (size_t at = 0; at < u.c[0].text.n; at += 2) {
            const size_t k = u.c[0].text.n - at < 2 ? u.c[0].text.n - at : 2;
            srv_think_push(&th, u.c[0].text.p + at, k, false, &rs, &cs);
        }
        srv_think_push(&th, "", 0, true, &rs, &cs);
        srv_chunk ch = {.index = 0, .reasoning = rs.p, .reasoning_len = rs.n, .content = cs.p ? cs.p : "",
                        .content_len = cs.n, .role = true};
        free(srv_json_chunk(&rp, &ch));
        srv_buf_free(&rs);
        srv_buf_free(&cs);
        srv_think_free(&th);
    }
    free(srv_json_usage_chunk(&rp, &u));
    srv_update_free(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) ready = setup() ? 1 : -1;
    if (ready < 0) abort(); /* the harness itself is broken: say so loudly */
    if (size < 1) return 0;
    const srv_kind kind = data[0] & 1 ? SRV_COMPLETION : SRV_CHAT;
    const srv_model *m = data[0] & 4 ? &vmodel : &model;
    /* an exact-size copy, so that a read past the body is caught */
    size_t len = size - 1;
    char *body = malloc(len ? len : 1);
    if (len) memcpy(body, data + 1, len);
    srv_request r;
    srv_error e;
    if (srv_request_parse(m, kind, body, len, &r, &e)) {
        /* a prompt with images: its rows are the composition's */
        for (size_t k = 0; k < r.n_prompts; k++)
            if (r.prompts[k].n_media && (!m->mm || r.prompts[k].n == 0)) abort();
        exercise_output(m, &r, r.prompts[0].text, r.prompts[0].text_len);
        srv_request_free(&r);
    } else {
        if (e.http < 400 || e.http > 599 || !e.message[0]) abort(); /* every refusal has a status and a message */
        free(srv_json_error(&e));
    }
    free(body);
    return 0;
}
