/*
 * test_asr.c -- Qwen3-ASR's request and answer formats (runtime/asr.h):
 * the prompt of a piece through a chat template (the converter's chatml
 * for Qwen3-ASR, and a model without one), the parse of what the model
 * answers ("language X<asr_text>words", reasoning blocks, special tokens,
 * a forced language, "language None" for no speech), the generation bound,
 * and the refusals of pocketllm_transcribe that need no tower.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pltest.h"
#include "pocketllm.h"
#include "runtime/asr.h"

/* Qwen3-ASR's chat template as llama.cpp's converter writes it
 * (conversion/qwen3vl.py, Qwen3ASRTextModel.set_vocab) */
static const char TEMPLATE[] =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/* What that template renders for Qwen's request (qwen_asr: a system turn
 * with the context, a user turn holding the audio alone) */
#define EXPECT_PLAIN "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<__media__><|im_end|>\n<|im_start|>assistant\n"

static void parse_case(const char *gen, const char *forced, const char *want_text, const char *want_lang) {
    char *text = NULL, lang[32] = "?";
    CHECK(pl_asr_parse(gen, strlen(gen), forced, &text, lang, sizeof lang) == POCKETLLM_OK);
    CHECK_STR(text, want_text);
    CHECK_STR(lang, want_lang);
    free(text);
}

static void test_parse(void) {
    parse_case("language English<asr_text>Hello world.", NULL, "Hello world.", "English");
    parse_case("language English<asr_text>Hello world.<|im_end|>", NULL, "Hello world.", "English");
    parse_case("<think>\n\n</think>\n\nlanguage German<asr_text> Guten Tag. \n", NULL, "Guten Tag.", "German");
    parse_case("language None<asr_text>", NULL, "", "");
    parse_case("just words", NULL, "just words", "");
    /* forced: the prompt ended with the prefix, the model writes the words */
    parse_case(" Bonjour.<|endoftext|>", "French", "Bonjour.", "French");
    parse_case("a <|audio_pad|>b", NULL, "a b", "");
    parse_case("<think>never closed", NULL, "", "");
    parse_case("", NULL, "", "");
    char *text = NULL;
    CHECK(pl_asr_parse(NULL, 3, NULL, &text, NULL, 0) == POCKETLLM_ERR_INVALID_ARGUMENT);
}

static void test_budget(void) {
    CHECK_EQ_U64(pl_asr_token_budget(0), 64);
    CHECK_EQ_U64(pl_asr_token_budget(30), 64 + 480);
    CHECK(pl_asr_token_budget(4) >= 64 + 64);
    CHECK(pl_asr_token_budget(-1) == 64);
}

static void test_prompt(const char *dir) {
    char gguf[256], bare[256], tmpl[256];
    snprintf(gguf, sizeof gguf, "%s/m.gguf", dir);
    snprintf(bare, sizeof bare, "%s/bare.gguf", dir);
    snprintf(tmpl, sizeof tmpl, "%s/t.jinja", dir);
    FILE *f = fopen(tmpl, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(TEMPLATE, 1, sizeof TEMPLATE - 1, f);
    fclose(f);
    pocketllm_synth_params sp = pocketllm_synth_default_params();
    sp.shape = "tiny";
    sp.template_path = tmpl;
    CHECK(pocketllm_synth(&sp, gguf) == POCKETLLM_OK);
    sp.template_path = NULL;
    CHECK(pocketllm_synth(&sp, bare) == POCKETLLM_OK);
    const char *paths[2] = {gguf, bare};
    for (int k = 0; k < 2; k++) {
        pocketllm_model_params mp = pocketllm_model_default_params();
        mp.vocab_only = 1;
        pocketllm_model *m = NULL;
        CHECK(pocketllm_model_open(paths[k], &mp, &m) == POCKETLLM_OK);
        if (!m) continue;
        char *p = NULL;
        CHECK(pl_asr_prompt(m, NULL, NULL, &p) == POCKETLLM_OK);
        CHECK_STR(p, EXPECT_PLAIN);
        free(p);
        CHECK(pl_asr_prompt(m, "English", "Names: Zoë, Ngũgĩ.", &p) == POCKETLLM_OK);
        CHECK_STR(p, "<|im_start|>system\nNames: Zoë, Ngũgĩ.<|im_end|>\n<|im_start|>user\n<__media__><|im_end|>\n"
                     "<|im_start|>assistant\nlanguage English<asr_text>");
        free(p);
        p = (char *)1;
        CHECK(pl_asr_prompt(m, "", NULL, &p) == POCKETLLM_ERR_INVALID_ARGUMENT && p == NULL);
        CHECK(pl_asr_prompt(m, "En<asr_text>", NULL, &p) == POCKETLLM_ERR_INVALID_ARGUMENT);
        CHECK(strstr(pocketllm_last_error(), "language") != NULL);
        pocketllm_model_close(m);
    }
    unlink(gguf);
    unlink(bare);
    unlink(tmpl);
}

static void test_transcribe_refusals(void) {
    pocketllm_transcript *t = (pocketllm_transcript *)1;
    CHECK(pocketllm_transcribe(NULL, 0, NULL, NULL, NULL, &t) == POCKETLLM_ERR_INVALID_ARGUMENT && t == NULL);
    CHECK(pocketllm_transcribe(NULL, 0, NULL, NULL, NULL, NULL) == POCKETLLM_ERR_INVALID_ARGUMENT);
    pocketllm_transcript_free(NULL);
    const pocketllm_transcribe_params d = pocketllm_transcribe_default_params();
    CHECK(d.language == NULL && d.context == NULL && d.temperature == 0 && d.max_piece_seconds == 0 && !d.progress);
}

int main(void) {
    char dir[] = "/tmp/pl_test_asr.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_parse();
    test_budget();
    test_prompt(dir);
    test_transcribe_refusals();
    rmdir(dir);
    TEST_DONE();
}
