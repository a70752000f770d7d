/*
 * asr.h -- speech to text with a Qwen3-ASR pair, the internal parts that
 * the ABI (pocketllm_transcribe), `pocketllm transcribe`, `run --audio`
 * and the server's /v1/audio/transcriptions share: the request prompt, the
 * parse of what the model answers, and the generation bound.
 *
 * Qwen3-ASR's format (Qwen's qwen_asr toolkit): the request goes through
 * the model's own chat template -- system = the context (or empty), user =
 * one media marker (the audio), the generation prompt -- and the assistant
 * answers "language English<asr_text>the words".  With the language forced,
 * the prompt itself ends with "language X<asr_text>" and the model writes
 * only the words.
 */
#ifndef PL_ASR_H
#define PL_ASR_H

#include <stddef.h>
#include <stdint.h>

#include "pocketllm.h"

/* The marker Qwen3-ASR writes between the language and the transcript. */
#define PL_ASR_TEXT_TAG "<asr_text>"

/* Qwen3-ASR's documented limit on one request's audio (20 minutes). */
#define PL_ASR_MAX_SECONDS 1200.0

/* The Qwen3-ASR request for one piece, through the model's own chat
 * template: system = context (or empty), user = one media marker,
 * generation prompt, then "language X<asr_text>" when forced.  *out is
 * malloc'd (NUL-terminated). */
pocketllm_status pl_asr_prompt(const pocketllm_model *m, const char *language, const char *context, char **out);

/* The generated text -> transcript and language: strips "language
 * X<asr_text>", any <think>...</think>, special tokens (<|...|>), leading
 * and trailing space.  *text is malloc'd; lang (cap bytes) receives the
 * language the model wrote, or forced_language when not NULL ("" when
 * neither says). */
pocketllm_status pl_asr_parse(const char *gen, size_t len, const char *forced_language, char **text, char *lang,
                              size_t cap);

/* Most tokens a piece of `seconds` may generate: a bound against
 * repetition loops, far above speech's rate -- 64 + 16 per second of
 * audio (fast speech is ~4 words, ~6 tokens a second; a 30 s piece may
 * take 544). */
uint32_t pl_asr_token_budget(double seconds);

#endif
