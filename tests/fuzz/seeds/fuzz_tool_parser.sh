#!/usr/bin/env bash
# Seeds for fuzz_tool_parser: the first byte picks the format (its low 7
# bits modulo the number of formats: 0 hermes, 1 qwen-xml, 2 llama3-json,
# 3 mistral, 4 mistral-call-id, 5 mistral-nemo, 6 granite, 7 firefunction,
# 8 apriel, 9 minimax-m1, 10 nemotron-v2, 11 kimi-k2, 12 deepseek-r1,
# 13 deepseek-v3.1, 14 functionary-v3.1, 15 solar-open, 16 seed-oss,
# 17 minimax-m2, 18 glm, 19 deepseek-dsml, 20 deepseek-v4-dsml, 21 hy3,
# 22 command-r7b, 23 minicpm5, 24 apertus, 25 lfm2, 26 functionary-v3.2; bit
# 7 set: no tools given), the second seeds the split, the rest is a reply.
set -euo pipefail
out=$1
i=0
# seed FORMAT_BYTE REPLY (the reply's escapes as printf %b reads them)
seed() { i=$((i + 1)); printf "\\x$(printf %02x "$1")\\x07%b" "$2" >"$out/seed_$i"; }
P='{"city": "Paris", "days": 3}'
DS='\xef\xbd\x9c'
U='\xe2\x96\x81'
seed 0 "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": $P}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>"
seed 0 "<tool_call>{\"arguments\": {\"tz\": \"UTC\"}, \"name\": \"get_time\"}</tool_call> done"
seed 0 "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>"
seed 128 "<tool_call>{\"name\": \"anything\", \"arguments\": {\"x\": [1, 2.5e3, null, true]}}</tool_call>"
seed 1 "<tool_call>\n<function=get_weather>\n<parameter=city>\nPa\"ris\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n<parameter=opts>\n{\"a\": 1}\n</parameter>\n<parameter=note>\nnull\n</parameter>\n</function>\n</tool_call>"
seed 2 "{\"name\": \"get_weather\", \"parameters\": $P}; {\"name\": \"get_time\", \"parameters\": {}}"
seed 2 "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {}}"
seed 2 "Hello {there}"
seed 3 "[TOOL_CALLS]get_weather[ARGS]$P[TOOL_CALLS]get_time[ARGS]{}"
seed 4 "[TOOL_CALLS]get_weather[CALL_ID]abc123XYZ[ARGS]$P"
seed 5 "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": $P, \"id\": \"abcdefghi\"}]"
seed 6 "<|tool_call|>[{\"name\": \"get_time\", \"arguments\": {}}]"
seed 7 " functools[{\"name\": \"get_time\", \"arguments\": {}}]"
seed 8 "<tool_calls>[{\"name\": \"get_time\", \"arguments\": {}}]</tool_calls>"
seed 9 "<tool_calls>\n{\"name\": \"get_time\", \"arguments\": {}}\n{\"name\": \"f\", \"arguments\": {}}\n</tool_calls>"
seed 10 "<TOOLCALL>[{\"name\": \"get_time\", \"arguments\": {}}]</TOOLCALL>"
seed 11 "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>$P<|tool_call_end|><|tool_calls_section_end|>"
seed 12 "<${DS}tool${U}calls${U}begin${DS}><${DS}tool${U}call${U}begin${DS}>function<${DS}tool${U}sep${DS}>get_time\n\`\`\`json\n{}\n\`\`\`<${DS}tool${U}call${U}end${DS}><${DS}tool${U}calls${U}end${DS}>"
seed 13 "<${DS}tool${U}calls${U}begin${DS}><${DS}tool${U}call${U}begin${DS}>get_time<${DS}tool${U}sep${DS}>{}<${DS}tool${U}call${U}end${DS}><${DS}tool${U}calls${U}end${DS}>"
seed 14 "<function=get_weather>$P</function>"
seed 15 "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_time<|tool_call:args|>{}<|tool_call:end|>"
seed 16 "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>"
seed 17 "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>"
seed 18 "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
seed 19 "<${DS}DSML${DS}function_calls>\n<${DS}DSML${DS}invoke name=\"get_weather\">\n<${DS}DSML${DS}parameter name=\"city\" string=\"true\">Paris</${DS}DSML${DS}parameter>\n</${DS}DSML${DS}invoke>\n</${DS}DSML${DS}function_calls>"
seed 20 "<${DS}DSML${DS}tool_calls>\n<${DS}DSML${DS}invoke name=\"get_time\">\n</${DS}DSML${DS}invoke>\n</${DS}DSML${DS}tool_calls>"
seed 21 "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>"
seed 0 "<tool_call>{\"name\": \"get_weather\", \"arguments\": \"{\\\\\"city\\\\\": \\\\\"P\\\\\\\\u00e9\\\\\"}\"}</tool_call>"
seed 22 "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": $P}]<|END_ACTION|>"
seed 23 "<function name=\"get_weather\"><param name=\"city\">Pa<ris</param><param name=\"days\">3</param></function>"
seed 24 "<|tools_prefix|>[{\"get_weather\": $P}, {\"get_time\": {}}]<|tools_suffix|>"
seed 25 "<|tool_call_start|>[get_weather(city='Paris', days=3, metric=True), get_time()]<|tool_call_end|>"
seed 26 "get_weather\n$P>>>get_time\n{}"
seed 26 "all\nLet me check >> this.>>>get_time\n{\"tz\": \"UTC\"}>>>all\nDone."
