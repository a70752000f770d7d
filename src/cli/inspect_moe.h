/*
 * inspect_moe.h -- the mixture-of-experts part of `pocketllm inspect`
 * (qwen3moe, qwen2moe): the experts on the architecture line, the expert
 * tensors, and what one token reads of the file.
 */
#ifndef PL_CLI_INSPECT_MOE_H
#define PL_CLI_INSPECT_MOE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "pocketllm.h"

/* True when tensor t is a 3-D expert tensor (*_exps.weight). */
bool inspect_moe_is_experts(const pocketllm_tensor_info *t);
/* True when the file holds expert tensors. */
bool inspect_moe_present(const pocketllm_gguf *g);
/* " (mixture of experts: ...)" for the end of the architecture line. */
void inspect_moe_arch_text(const pocketllm_gguf *g, const char *arch, FILE *f);
/* The "experts:" section: expert tensors by kind and type, the totals. */
void inspect_moe_text(const pocketllm_gguf *g, const char *arch, FILE *f);
/* The same as a JSON object (the caller owns it). */
cJSON *inspect_moe_json(const pocketllm_gguf *g, const char *arch);

#endif
