# test_serve_tools.sh -- tool calling through the official `openai` npm
# client (serve_tools_client.js) on nine servers of one random-weight Qwen3
# (tiny, the real Qwen2 vocabulary), each with another real template of the
# llama.cpp bundle: Qwen3 (Hermes-style <tool_call> JSON), Llama 3.2 (JSON
# reply), Qwen3-Coder (XML <function=...><parameter=...>), QwQ (Hermes calls
# after the think block its prompt opens), Command R7B (a numbered JSON
# list between <|START_ACTION|> and <|END_ACTION|>), MiniCPM5 (XML
# <function name=...><param name=...>, no section around the calls), Apertus
# ({"name": {arguments}} objects between <|tools_prefix|> and <|tools_suffix|>),
# LFM2.5 (Python calls f(k="v") in a list; its parallel calls are left to
# unit.test_chat_tools: its template lets a think block open anywhere, and
# the random model spends the parallel check's budget there), Functionary
# v3.2 (its prompt ends with ">>>": the reply starts with "all\n" for text or
# with a function's name, then ">>>" before each further part); and one
# whose template takes no tools (Gemma 2).
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
NODE_MODULES=$(bash "$PL_SRC/scripts/install-test-npm.sh" 2>"$PL_TMP/npm.err") || {
    echo "FAIL: the openai npm client could not be installed: $(tail -3 "$PL_TMP/npm.err")" >&2
    exit 1
}
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16 --seed 11
T=$(dirname "$QWEN3_TEMPLATE")
SERVERS="["
i=0
# name:template:parallel:think[:list|gt] -- list: the calls are a list, so
# the parallel check also biases away the tokens that close it ("]", "]<",
# ")]", "\")]"); gt: ">>>" starts another call, so the single-call checks
# bias away the tokens that write it (">>>", ">>", ">"), and the string
# arguments get a maxLength (the random model, given this template's long
# prompt, otherwise writes strings past every budget)
SPECS="qwen3:Qwen-Qwen3-0.6B.jinja:true:false llama3:meta-llama-Llama-3.2-3B-Instruct.jinja:false:false
       qwen3-coder:Qwen3-Coder.jinja:true:false qwq:Qwen-QwQ-32B.jinja:true:true
       command-r7b:CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja:true:false:list
       minicpm5:openbmb-MiniCPM5-1B.jinja:true:false apertus:Apertus-8B-Instruct.jinja:true:false:list
       lfm2:LFM2.5-8B-A1B.jinja:false:false functionary:meetkai-functionary-medium-v3.2.jinja:true:false:gt"
# the sanitizer tree: the JSON and the XML parsers' paths, half the time
[ "${PL_SANITIZE:-0}" = 1 ] && SPECS="qwen3:Qwen-Qwen3-0.6B.jinja:true:false qwen3-coder:Qwen3-Coder.jinja:true:false"
for spec in $SPECS; do
    IFS=: read -r name file parallel think list <<<"$spec"
    serve_start "$name" --model "$PL_TMP/m.gguf" --name m --template "$T/$file" --ctx 2048 --parallel 2 -t 1
    [ $i -gt 0 ] && SERVERS="$SERVERS,"
    bias="{}"
    onebias="{}"
    [ "$list" = list ] && bias='{"60":-100,"34139":-100,"7252":-100,"30917":-100}'
    bounded=false
    [ "$list" = gt ] && onebias='{"20154":-100,"2452":-100,"29":-100}' bounded=true
    SERVERS="$SERVERS{\"name\":\"$name\",\"base\":\"$BASE/v1\",\"parallel\":$parallel,\"think\":$think,\"bias\":$bias,\"onebias\":$onebias,\"bounded\":$bounded}"
    eval "PID_$i=\$SERVER_PID LOG_$i=\$SERVER_LOG"
    i=$((i + 1))
done
SERVERS="$SERVERS]"
serve_start notools --model "$PL_TMP/m.gguf" --name m --template "$T/google-gemma-2-2b-it.jinja" --ctx 512 -t 1
NOTOOLS=$BASE/v1

SERVERS=$SERVERS NOTOOLS=$NOTOOLS NODE_PATH=$NODE_MODULES \
    node "$(dirname "$0")/serve_tools_client.js" >"$PL_TMP/node.out" 2>"$PL_TMP/node.err"
script_verdict $? "$PL_TMP/node.out" "the tool-calling checks failed: $(head -c 4000 "$PL_TMP/node.err")"
ok
grep -q "tools client: [0-9]* checks, 0 failed" "$PL_TMP/node.out" || fail "the client did not report its checks"

serve_stop
for k in $(seq 0 $((i - 1))); do
    eval "SERVER_PID=\$PID_$k SERVER_LOG=\$LOG_$k"
    serve_stop
done
done_testing
