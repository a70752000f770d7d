/*
 * synth.h -- pieces of the synthetic-checkpoint writer shared between its
 * files: the tokenizer part (synth_vocab.c).
 */
#ifndef PL_SYNTH_H
#define PL_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "gguf/gguf.h"
#include "pocketllm.h"

/* Tokens the tokenizer will have before padding. */
pocketllm_status pl_synth_vocab_count(const char *vocab_path, uint32_t *n);
/* Write tokenizer.* (built-in or copied, padded to n_vocab) and the chat
 * template, if any.  asr: a Qwen3-ASR text model's (its audio and
 * <asr_text> tokens at their ids, BOS = EOS = <|im_end|>, the converter's
 * chatml template unless template_path). */
pocketllm_status pl_synth_vocab_write(pocketllm_gguf_writer *w, const char *vocab_path, const char *template_path,
                                      uint32_t n_vocab, bool asr);

#endif
