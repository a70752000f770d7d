/*
 * inspect_mmproj.h -- the vision tower section of `pocketllm inspect`
 * (an mmproj file: general.architecture "clip").
 */
#ifndef PL_CLI_INSPECT_MMPROJ_H
#define PL_CLI_INSPECT_MMPROJ_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "pocketllm.h"

/* The tower's hyperparameters and weight types, one "  key value" a line. */
void inspect_mmproj_text(const pocketllm_gguf *g, FILE *f);
/* The same as a JSON object (the caller owns it). */
cJSON *inspect_mmproj_json(const pocketllm_gguf *g);

#endif
