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

/* clip.has_audio_encoder / clip.has_vision_encoder of the file (false when absent). */
bool inspect_has_audio(const pocketllm_gguf *g);
bool inspect_has_vision(const pocketllm_gguf *g);
/* The audio tower's hyperparameters and weight types, one "  key value" a line. */
void inspect_audio_text(const pocketllm_gguf *g, FILE *f);
/* The same as a JSON object (the caller owns it). */
cJSON *inspect_audio_json(const pocketllm_gguf *g);

#endif
