/*
 * chat_tools_spec.c -- the syntax of each supported tool-call format as
 * data (pl_tool_spec, chat_tools_internal.h says what each field means),
 * taken from how the bundle's templates write an assistant's tool calls.
 * The parser (chat_tools_parse*.c) and the grammar (chat_tools_grammar.c)
 * both read it, so the two cannot disagree.
 */
#include "chat/chat_tools_internal.h"

/* the DeepSeek special tokens (full-width bars, U+2581 for spaces) */
#define DS_CALLS_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define DS_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_CALL_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define DS_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_SEP "<\xef\xbd\x9ctool\xe2\x96\x81sep\xef\xbd\x9c>"
#define DSML "\xef\xbd\x9c" "DSML\xef\xbd\x9c"

/* nine call-id characters, as Mistral's template demands */
#define ALNUM "[a-zA-Z0-9]"
#define ALNUM9 ALNUM " " ALNUM " " ALNUM " " ALNUM " " ALNUM " " ALNUM " " ALNUM " " ALNUM " " ALNUM

static const pl_tool_spec specs[] = {
    {.fmt = PL_TOOLS_HERMES, .family = "hermes", .shape = PL_TSHAPE_JSON, .open = "<tool_call>", .open_nl = true,
     .close = "\n</tool_call>", .one_per_section = true, .call_sep = "\n", .args_key = "arguments"},
    {.fmt = PL_TOOLS_LLAMA3_JSON, .family = "llama3-json", .shape = PL_TSHAPE_JSON, .open = NULL,
     .one_per_section = true, .single_call = true, .call_sep = "\n", .args_key = "parameters"},
    {.fmt = PL_TOOLS_MISTRAL_NEMO, .family = "mistral-nemo", .shape = PL_TSHAPE_JSON, .open = "[TOOL_CALLS]",
     .list = true, .call_sep = ", ", .args_key = "arguments"},
    {.fmt = PL_TOOLS_GRANITE, .family = "granite", .shape = PL_TSHAPE_JSON, .open = "<|tool_call|>", .list = true,
     .call_sep = ", ", .args_key = "arguments"},
    {.fmt = PL_TOOLS_FIREFUNCTION, .family = "firefunction", .shape = PL_TSHAPE_JSON, .open = "functools[",
     .list = true, .call_sep = ", ", .args_key = "arguments"},
    {.fmt = PL_TOOLS_APRIEL, .family = "apriel", .shape = PL_TSHAPE_JSON, .open = "<tool_calls>",
     .close = "</tool_calls>", .list = true, .call_sep = ", ", .args_key = "arguments"},
    {.fmt = PL_TOOLS_MINIMAX_M1, .family = "minimax-m1", .shape = PL_TSHAPE_JSON, .open = "<tool_calls>", .open_nl = true,
     .close = "\n</tool_calls>", .multi = true, .call_sep = "\n", .args_key = "arguments"},
    {.fmt = PL_TOOLS_NEMOTRON_V2, .family = "nemotron-v2", .shape = PL_TSHAPE_JSON, .open = "<TOOLCALL>",
     .close = "</TOOLCALL>", .list = true, .call_sep = ", ", .args_key = "arguments"},

    /* Command R7B and Cohere2: the template numbers the calls itself */
    {.fmt = PL_TOOLS_COMMAND_R7B, .family = "command-r7b", .shape = PL_TSHAPE_JSON, .open = "<|START_ACTION|>",
     .close = "<|END_ACTION|>", .list = true, .call_sep = ", ", .args_key = "parameters", .name_key = "tool_name",
     .json_lead_gbnf = "\"\\\"tool_call_id\\\": \\\"\" [0-9] [0-9]? \"\\\", \""},
    /* Apertus: the function's name is the call object's one key */
    {.fmt = PL_TOOLS_APERTUS, .family = "apertus", .shape = PL_TSHAPE_JSON, .open = "<|tools_prefix|>",
     .close = "<|tools_suffix|>", .list = true, .call_sep = ", ", .name_is_key = true},

    {.fmt = PL_TOOLS_MISTRAL, .family = "mistral", .shape = PL_TSHAPE_NAMED, .open = "[TOOL_CALLS]",
     .skip_after_name = true, .post_name_gbnf = "", .args_open = "[ARGS]", .one_per_section = true, .call_sep = ""},
    {.fmt = PL_TOOLS_MISTRAL_CALL_ID, .family = "mistral-call-id", .shape = PL_TSHAPE_NAMED, .open = "[TOOL_CALLS]",
     .skip_after_name = true, .post_name_gbnf = "\"[CALL_ID]\" " ALNUM9, .args_open = "[ARGS]",
     .one_per_section = true, .call_sep = ""},
    {.fmt = PL_TOOLS_KIMI_K2, .family = "kimi-k2", .shape = PL_TSHAPE_NAMED, .open = "<|tool_calls_section_begin|>",
     .close = "<|tool_calls_section_end|>", .call_open = "<|tool_call_begin|>", .name_open = "functions.",
     .skip_after_name = true, .post_name_gbnf = "\":\" [0-9]+", .args_open = "<|tool_call_argument_begin|>",
     .call_close = "<|tool_call_end|>", .call_sep = ""},
    {.fmt = PL_TOOLS_DEEPSEEK_R1, .family = "deepseek-r1", .shape = PL_TSHAPE_NAMED, .open = DS_CALLS_BEGIN,
     .close = DS_CALLS_END, .call_open = DS_CALL_BEGIN "function" DS_SEP, .args_open = "\n```json\n",
     .args_close = "\n```", .call_close = DS_CALL_END, .call_sep = "\n"},
    {.fmt = PL_TOOLS_DEEPSEEK_V31, .family = "deepseek-v3.1", .shape = PL_TSHAPE_NAMED, .open = DS_CALLS_BEGIN,
     .close = DS_CALLS_END, .call_open = DS_CALL_BEGIN, .args_open = DS_SEP, .call_close = DS_CALL_END,
     .call_sep = ""},
    {.fmt = PL_TOOLS_FUNCTIONARY_V31, .family = "functionary-v3.1", .shape = PL_TSHAPE_NAMED, .open = "<function=",
     .args_open = ">", .call_close = "</function>", .one_per_section = true, .call_sep = ""},
    {.fmt = PL_TOOLS_SOLAR, .family = "solar-open", .shape = PL_TSHAPE_NAMED, .open = "<|tool_call:begin|>",
     .skip_to_name = true, .pre_name_gbnf = "[a-z0-9] [a-z0-9] [a-z0-9] [a-z0-9] [a-z0-9] [a-z0-9] [a-z0-9] "
                                            "[a-z0-9] [a-z0-9] [a-z0-9]",
     .name_open = "<|tool_call:name|>", .args_open = "<|tool_call:args|>", .call_close = "<|tool_call:end|>",
     .one_per_section = true, .call_sep = "\n"},

    {.fmt = PL_TOOLS_QWEN_XML, .family = "qwen-xml", .shape = PL_TSHAPE_XML, .open = "<tool_call>", .open_nl = true,
     .close = "</tool_call>", .one_per_section = true, .call_sep = "\n", .call_open = "<function=",
     .name_close = ">\n", .param_open = "<parameter=", .key_close = ">\n", .value_close = "\n</parameter>\n",
     .call_close = "</function>\n", .strip_nl = true},
    {.fmt = PL_TOOLS_SEED_OSS, .family = "seed-oss", .shape = PL_TSHAPE_XML, .open = "<seed:tool_call>", .open_nl = true,
     .close = "</seed:tool_call>", .one_per_section = true, .call_sep = "\n", .call_open = "<function=",
     .name_close = ">\n", .param_open = "<parameter=", .key_close = ">", .value_close = "</parameter>\n",
     .call_close = "</function>\n"},
    {.fmt = PL_TOOLS_MINIMAX_M2, .family = "minimax-m2", .shape = PL_TSHAPE_XML, .open = "<minimax:tool_call>", .open_nl = true,
     .close = "</minimax:tool_call>", .call_sep = "", .call_open = "<invoke name=\"", .name_close = "\">\n",
     .param_open = "<parameter name=\"", .key_close = "\">", .value_close = "</parameter>\n",
     .call_close = "</invoke>\n"},
    {.fmt = PL_TOOLS_GLM, .family = "glm", .shape = PL_TSHAPE_XML, .open = "<tool_call>", .one_per_section = true,
     .call_sep = "\n", .name_close = "\n", .param_open = "<arg_key>", .key_close = "</arg_key>\n",
     .value_open = "<arg_value>", .value_close = "</arg_value>\n", .call_close = "</tool_call>"},
    {.fmt = PL_TOOLS_DSML_V32, .family = "deepseek-dsml", .shape = PL_TSHAPE_XML,
     .open = "<" DSML "function_calls>", .open_nl = true, .close = "</" DSML "function_calls>", .call_sep = "",
     .call_open = "<" DSML "invoke name=\"", .name_close = "\">\n", .param_open = "<" DSML "parameter name=\"",
     .key_close = "\"", .value_close = "</" DSML "parameter>\n", .call_close = "</" DSML "invoke>\n", .dsml = true},
    {.fmt = PL_TOOLS_DSML_V4, .family = "deepseek-v4-dsml", .shape = PL_TSHAPE_XML,
     .open = "<" DSML "tool_calls>", .open_nl = true, .close = "</" DSML "tool_calls>", .call_sep = "",
     .call_open = "<" DSML "invoke name=\"", .name_close = "\">\n", .param_open = "<" DSML "parameter name=\"",
     .key_close = "\"", .value_close = "</" DSML "parameter>\n", .call_close = "</" DSML "invoke>\n", .dsml = true},
    {.fmt = PL_TOOLS_HY3, .family = "hy3", .shape = PL_TSHAPE_XML, .open = "<tool_calls:opensource>", .open_nl = true,
     .close = "</tool_calls:opensource>", .call_sep = "", .call_open = "<tool_call:opensource>",
     .name_close = "<tool_sep:opensource>\n", .param_open = "<arg_key:opensource>",
     .key_close = "</arg_key:opensource>\n", .value_open = "<arg_value:opensource>",
     .value_close = "</arg_value:opensource>\n", .call_close = "</tool_call:opensource>\n"},
    /* MiniCPM5: no section around the calls; a value the template would
     * wrap in CDATA (it holds '<', '&' or a newline) is written plainly
     * under the grammar, which lets any text but the closing tag through */
    {.fmt = PL_TOOLS_MINICPM5, .family = "minicpm5", .shape = PL_TSHAPE_XML, .open = "<function name=\"",
     .one_per_section = true, .call_sep = "", .name_close = "\">", .param_open = "<param name=\"", .key_close = "\">",
     .value_close = "</param>", .call_close = "</function>"},
    /* LFM2: Python calls in one list (the templates that render calls write
     * strings in single quotes; the grammar writes JSON's double-quoted
     * strings, which Python reads the same) */
    {.fmt = PL_TOOLS_LFM2, .family = "lfm2", .shape = PL_TSHAPE_PY, .open = "<|tool_call_start|>[",
     .close = "<|tool_call_end|>", .list = true, .call_sep = ", "},
    /* Functionary v3.2: ">>>recipient\n" heads each part of the reply, the
     * recipient "all" for text; the prompt ends with the first ">>>" */
    {.fmt = PL_TOOLS_FUNCTIONARY_V32, .family = "functionary-v3.2", .shape = PL_TSHAPE_NAMED, .open = ">>>",
     .args_open = "\n", .call_sep = ">>>", .prompt_opens = true, .text_name = "all"},
};

const pl_tool_spec *pl_tool_spec_get(pl_tool_format f) {
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (specs[i].fmt == f) return &specs[i];
    return NULL;
}
