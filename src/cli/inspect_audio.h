/*
 * inspect_audio.h -- the audio tower section of `pocketllm inspect` (an
 * mmproj file with clip.has_audio_encoder: Qwen3-ASR's).
 */
#ifndef PL_CLI_INSPECT_AUDIO_H
#define PL_CLI_INSPECT_AUDIO_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "pocketllm.h"

/* Integer key `key` of the file (signed or unsigned); -1 when absent or
 * not an integer (both inspect_audio.c and inspect_mmproj.c read them so). */
int64_t inspect_key_i64(const pocketllm_gguf *g, const char *key);
/* clip.has_audio_encoder / clip.has_vision_encoder of the file (false when absent). */
bool inspect_has_audio(const pocketllm_gguf *g);
bool inspect_has_vision(const pocketllm_gguf *g);
/* The audio tower's hyperparameters and weight types, one "  key value" a line. */
void inspect_audio_text(const pocketllm_gguf *g, FILE *f);
/* The same as a JSON object (the caller owns it). */
cJSON *inspect_audio_json(const pocketllm_gguf *g);

#endif
