/*
 * chat_tools_detect.c -- which tool-call format a chat template uses,
 * decided from the template's source text (never from the model's name):
 * each format is recognised by the markup its template writes for an
 * assistant's tool calls or describes in its tool instructions.  A
 * template that lists tools in a format this module does not parse is
 * PL_TOOLS_UNSUPPORTED with the family named, so the server refuses
 * `tools` with a message that says so instead of misparsing.
 *
 * The bundle's templates (llama.cpp v0.4.0, models/templates), as
 * tests/unit/test_chat_tools.c asserts:
 *
 *   template                                        format
 *   Apertus-8B-Instruct                             apertus
 *   Apriel-1.6-15b-Thinker-fixed                    apriel
 *   Bielik-11B-v3.0-Instruct                        hermes
 *   ByteDance-Seed-OSS                              seed-oss
 *   Cohere2MoE                                      command-r7b
 *   CohereForAI-c4ai-command-r-plus-tool_use        unsupported: command-r-plus
 *   CohereForAI-c4ai-command-r7b-12-2024-tool_use   command-r7b
 *   GLM-4.6                                         glm
 *   GLM-4.7-Flash                                   glm
 *   GigaChat3-10B-A1.8B                             unsupported: gigachat
 *   GigaChat3.1-10B-A1.8B                           unsupported: gigachat
 *   HuggingFaceTB-SmolLM3-3B                        none
 *   Kimi-K2-Instruct                                kimi-k2
 *   Kimi-K2-Thinking                                kimi-k2
 *   Kimi-K3                                         unsupported: kimi-k3
 *   LFM2-8B-A1B                                     lfm2
 *   LFM2.5-8B-A1B                                   lfm2
 *   LFM2.5-Instruct                                 lfm2
 *   MiMo-VL                                         hermes
 *   MiniMax-M1                                      minimax-m1
 *   MiniMax-M2                                      minimax-m2
 *   MiniMax-M3                                      unsupported: minimax-m3
 *   Mistral-Small-3.2-24B-Instruct-2506             mistral-call-id
 *   NVIDIA-Nemotron-3-Nano-30B-A3B-BF16             qwen-xml
 *   NVIDIA-Nemotron-Nano-v2                         nemotron-v2
 *   NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use   hermes
 *   NousResearch-Hermes-3-Llama-3.1-8B-tool_use     hermes
 *   Qwen-QwQ-32B                                    hermes
 *   Qwen-Qwen2.5-7B-Instruct                        hermes
 *   Qwen-Qwen3-0.6B                                 hermes
 *   Qwen3-Coder                                     qwen-xml
 *   Qwen3.5-4B                                      qwen-xml
 *   Reka-Edge                                       hermes
 *   StepFun3.5-Flash                                qwen-xml
 *   deepseek-ai-DeepSeek-R1-Distill-Llama-8B        deepseek-r1 (lists no tools)
 *   deepseek-ai-DeepSeek-R1-Distill-Qwen-32B        deepseek-r1 (lists no tools)
 *   deepseek-ai-DeepSeek-V3.1                       deepseek-v3.1 (lists no tools)
 *   deepseek-ai-DeepSeek-V3.2                       deepseek-dsml
 *   deepseek-ai-DeepSeek-V4-Flash-0731              deepseek-v4-dsml
 *   deepseek-ai-DeepSeek-V4                         deepseek-v4-dsml
 *   fireworks-ai-llama-3-firefunction-v2            firefunction
 *   google-gemma-2-2b-it                            none
 *   google-gemma-4-31B-it-interleaved               unsupported: gemma4
 *   google-gemma-4-31B-it                           unsupported: gemma4
 *   ibm-granite-granite-3.3-2B-Instruct             granite
 *   ibm-granite-granite-4.0                         hermes
 *   ibm-granite-granite-4.1                         hermes
 *   llama-cpp-deepseek-r1                           deepseek-r1
 *   llama-cpp-rwkv-world                            none
 *   meetkai-functionary-medium-v3.1                 functionary-v3.1
 *   meetkai-functionary-medium-v3.2                 functionary-v3.2
 *   meta-llama-Llama-3.1-8B-Instruct                llama3-json
 *   meta-llama-Llama-3.2-3B-Instruct                llama3-json
 *   meta-llama-Llama-3.3-70B-Instruct               llama3-json
 *   microsoft-Phi-3.5-mini-instruct                 none
 *   mistralai-Ministral-3-14B-Reasoning-2512        mistral
 *   mistralai-Mistral-Nemo-Instruct-2407            mistral-nemo
 *   moonshotai-Kimi-K2                              kimi-k2
 *   muse-glimmer                                    unsupported: muse-glimmer
 *   openai-gpt-oss-120b                             unsupported: gpt-oss (harmony)
 *   openbmb-MiniCPM5-1B                             minicpm5
 *   poolside-Laguna-S-2.1                           glm
 *   poolside-Laguna-XS-2.1                          glm
 *   poolside-Laguna-XS.2                            glm
 *   tencent-Hy3                                     hy3
 *   unsloth-Apriel-1.5                              apriel
 *   unsloth-mistral-Devstral-Small-2507             mistral
 *   upstage-Solar-Open-100B                         solar-open
 */
#include <string.h>

#include "chat/chat_tools_internal.h"

typedef struct rule {
    const char *all[3]; /* every one of these is in the source */
    const char *none;   /* and this is not (NULL: no condition) */
    pl_tool_format fmt;
    const char *family; /* for PL_TOOLS_UNSUPPORTED */
} rule;

/* First match wins: the formats whose markers contain others' come first. */
static const rule rules[] = {
    {{"<|channel|>"}, NULL, PL_TOOLS_UNSUPPORTED, "gpt-oss (harmony)"},
    {{"]<]minimax[>["}, NULL, PL_TOOLS_UNSUPPORTED, "minimax-m3"},
    {{"<|open|>", "<|end_of_msg|>"}, NULL, PL_TOOLS_UNSUPPORTED, "kimi-k3"},
    {{"<|START_ACTION|>", "\"tool_name\""}, NULL, PL_TOOLS_COMMAND_R7B, NULL},
    {{"Action:", "tool_name"}, NULL, PL_TOOLS_UNSUPPORTED, "command-r-plus"},
    {{">>>all", "recipient"}, NULL, PL_TOOLS_FUNCTIONARY_V32, NULL},
    {{"<|tool_call>call:"}, NULL, PL_TOOLS_UNSUPPORTED, "gemma4"},
    {{"<|tool_list_start|>"}, NULL, PL_TOOLS_LFM2, NULL},
    {{"List of tools: ["}, NULL, PL_TOOLS_LFM2, NULL},
    {{"<|role_sep|>", "<|message_sep|>"}, NULL, PL_TOOLS_UNSUPPORTED, "gigachat"},
    {{"<atem:function_calls>"}, NULL, PL_TOOLS_UNSUPPORTED, "muse-glimmer"},
    {{"<|tools_prefix|>", "<|tools_suffix|>"}, NULL, PL_TOOLS_APERTUS, NULL},
    {{"<function name=\"", "<param name=\""}, NULL, PL_TOOLS_MINICPM5, NULL},
    {{"dsml_token", "DSML", "'function_calls>"}, NULL, PL_TOOLS_DSML_V32, NULL},
    {{"dsml_token", "DSML", "'tool_calls>"}, NULL, PL_TOOLS_DSML_V4, NULL},
    {{"<|tool_calls_section_begin|>", "<|tool_call_begin|>"}, NULL, PL_TOOLS_KIMI_K2, NULL},
    {{"tool\xe2\x96\x81" "calls\xe2\x96\x81" "begin", "```json"}, NULL, PL_TOOLS_DEEPSEEK_R1, NULL},
    {{"tool\xe2\x96\x81" "calls\xe2\x96\x81" "begin"}, NULL, PL_TOOLS_DEEPSEEK_V31, NULL},
    {{"'<tool_calls{}>'.format(HYTK)", "<arg_key{}>"}, NULL, PL_TOOLS_HY3, NULL},
    {{"<|tool_call:begin|>", "<|tool_call:name|>", "<|tool_call:args|>"}, NULL, PL_TOOLS_SOLAR, NULL},
    {{"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}, NULL, PL_TOOLS_MISTRAL_CALL_ID, NULL},
    {{"[TOOL_CALLS]", "[ARGS]"}, NULL, PL_TOOLS_MISTRAL, NULL},
    {{"[TOOL_CALLS]"}, NULL, PL_TOOLS_MISTRAL_NEMO, NULL},
    {{"<seed:tool_call>", "<function=", "<parameter="}, NULL, PL_TOOLS_SEED_OSS, NULL},
    {{"<minimax:tool_call>", "<invoke name="}, NULL, PL_TOOLS_MINIMAX_M2, NULL},
    {{"<tool_call>", "<function=", "<parameter="}, NULL, PL_TOOLS_QWEN_XML, NULL},
    {{"<tool_call>", "<arg_key>", "<arg_value>"}, NULL, PL_TOOLS_GLM, NULL},
    {{"<tool_calls>["}, NULL, PL_TOOLS_APRIEL, NULL},
    {{"<tool_calls>", "\"arguments\""}, NULL, PL_TOOLS_MINIMAX_M1, NULL},
    {{"<TOOLCALL>["}, NULL, PL_TOOLS_NEMOTRON_V2, NULL},
    {{"<|tool_call|>"}, NULL, PL_TOOLS_GRANITE, NULL},
    {{"functools["}, NULL, PL_TOOLS_FIREFUNCTION, NULL},
    {{"<function=", "<|python_tag|>"}, "<tool_call>", PL_TOOLS_FUNCTIONARY_V31, NULL},
    {{"<tool_call>", "\"name\""}, NULL, PL_TOOLS_HERMES, NULL},
    {{"{\"name\": function name, \"parameters\""}, NULL, PL_TOOLS_LLAMA3_JSON, NULL},
};

static const char *const format_names[PL_TOOLS_COUNT] = {
    [PL_TOOLS_NONE] = "none",
    [PL_TOOLS_UNSUPPORTED] = "unsupported",
    [PL_TOOLS_HERMES] = "hermes",
    [PL_TOOLS_QWEN_XML] = "qwen-xml",
    [PL_TOOLS_LLAMA3_JSON] = "llama3-json",
    [PL_TOOLS_MISTRAL] = "mistral",
    [PL_TOOLS_MISTRAL_CALL_ID] = "mistral-call-id",
    [PL_TOOLS_MISTRAL_NEMO] = "mistral-nemo",
    [PL_TOOLS_GRANITE] = "granite",
    [PL_TOOLS_FIREFUNCTION] = "firefunction",
    [PL_TOOLS_APRIEL] = "apriel",
    [PL_TOOLS_MINIMAX_M1] = "minimax-m1",
    [PL_TOOLS_NEMOTRON_V2] = "nemotron-v2",
    [PL_TOOLS_KIMI_K2] = "kimi-k2",
    [PL_TOOLS_DEEPSEEK_R1] = "deepseek-r1",
    [PL_TOOLS_DEEPSEEK_V31] = "deepseek-v3.1",
    [PL_TOOLS_FUNCTIONARY_V31] = "functionary-v3.1",
    [PL_TOOLS_SOLAR] = "solar-open",
    [PL_TOOLS_SEED_OSS] = "seed-oss",
    [PL_TOOLS_MINIMAX_M2] = "minimax-m2",
    [PL_TOOLS_GLM] = "glm",
    [PL_TOOLS_DSML_V32] = "deepseek-dsml",
    [PL_TOOLS_DSML_V4] = "deepseek-v4-dsml",
    [PL_TOOLS_HY3] = "hy3",
    [PL_TOOLS_COMMAND_R7B] = "command-r7b",
    [PL_TOOLS_MINICPM5] = "minicpm5",
    [PL_TOOLS_APERTUS] = "apertus",
    [PL_TOOLS_LFM2] = "lfm2",
    [PL_TOOLS_FUNCTIONARY_V32] = "functionary-v3.2",
};

const char *pl_tools_format_name(pl_tool_format f) {
    return (unsigned)f < PL_TOOLS_COUNT && format_names[f] ? format_names[f] : "unknown";
}

bool pl_tools_template_lists_tools(const char *src) { return src && strstr(src, "tools") != NULL; }

pl_tool_format pl_tools_detect(const char *src, const char **family) {
    pl_tool_format f = PL_TOOLS_NONE;
    const char *fam = "none";
    if (!src) src = "";
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const rule *r = &rules[i];
        bool ok = !(r->none && strstr(src, r->none));
        for (int k = 0; ok && k < 3 && r->all[k]; k++) ok = strstr(src, r->all[k]) != NULL;
        if (!ok) continue;
        /* an unsupported family only matters when the template offers tools */
        if (r->fmt == PL_TOOLS_UNSUPPORTED && !pl_tools_template_lists_tools(src)) continue;
        f = r->fmt;
        fam = r->family ? r->family : pl_tools_format_name(f);
        break;
    }
    if (f == PL_TOOLS_NONE && pl_tools_template_lists_tools(src)) {
        f = PL_TOOLS_UNSUPPORTED;
        fam = "unrecognised tool-call format";
    }
    if (family) *family = fam;
    return f;
}

const char *pl_tools_trigger(pl_tool_format f) {
    const pl_tool_spec *s = pl_tool_spec_get(f);
    return !s ? NULL : s->prompt_opens ? "" : s->open;
}
