# test_chat_moe.sh -- `pocketllm chat` and `run` end to end on a mixture of
# experts (qwen3moe moe-small, f16, the real Qwen2 vocabulary and Qwen3's
# chat template from the llama.cpp bundle): a user turn rendered by Python's
# jinja2 as transformers renders it (jinja2_reference.py) is the prompt; on
# it llama.cpp's greedy ids (pl_oracle) and `run`'s are identical up to
# llama.cpp's first undecidable step, routers included (forward_lib.sh);
# and `chat`, given the same user turn through a pipe, renders and tokenizes
# it itself and replies with exactly `run`'s text.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"
M=$PL_TMP/moe.gguf N=24 MSG="Write about the sea."
TEMPLATE=$LLAMA_SRC/models/templates/Qwen-Qwen3-0.6B.jinja
expect_rc 0 "$BIN" synth --quiet --shape moe-small --untied --type f16 --seed 41 \
    --vocab "$LLAMA_SRC/models/ggml-vocab-qwen2.gguf" --template "$TEMPLATE" "$M"

/usr/bin/python3 - "$TEMPLATE" "$MSG" >"$PL_TMP/prompt" 2>"$PL_TMP/py" <<'PY'
import datetime, os, sys
sys.path.insert(0, os.environ["PL_SRC"] + "/tests/oracle")
from jinja2_reference import make_environment
t = make_environment(datetime.datetime.now()).from_string(open(sys.argv[1]).read())
sys.stdout.write(t.render(messages=[{"role": "user", "content": sys.argv[2]}], tools=None, documents=None,
                          add_generation_prompt=True, bos_token="", eos_token="<|im_end|>"))
PY
script_verdict $? "$PL_TMP/py" "jinja2 could not render the Qwen3 template"
# (the rendered text ends in a newline that $(...) alone would drop)
PROMPT=$(cat "$PL_TMP/prompt"; printf x)
PROMPT=${PROMPT%x}
ok
case $PROMPT in *"<|im_start|>assistant"*) ;; *) fail "the rendered prompt lacks the assistant turn: $PROMPT" ;; esac

ROUTER_MARGIN=0.001 greedy_check "qwen3moe chat turn" "$M" f16 0.01 "$N" --prompt "$PROMPT"

expect_rc 0 "$BIN" run --model "$M" --prompt "$PROMPT" -n "$N" -t 1
cp "$PL_TMP/out" "$PL_TMP/run.txt"
printf '%s\n' "$MSG" | "$BIN" chat --model "$M" -n "$N" -t 1 >"$PL_TMP/chat.txt" 2>"$PL_TMP/chat.err"
rc=$?
ok
[ "$rc" = 0 ] || fail "chat through a pipe exited $rc: $(head -c 300 "$PL_TMP/chat.err")"
ok
[ -s "$PL_TMP/run.txt" ] || fail "run replied nothing"
ok
# chat ends its reply with a newline, run with none
[ "$(cat "$PL_TMP/chat.txt")" = "$(cat "$PL_TMP/run.txt")" ] ||
    fail "chat's reply '$(head -c 200 "$PL_TMP/chat.txt")' differs from run's '$(head -c 200 "$PL_TMP/run.txt")'"
echo "chat = run ($(wc -c <"$PL_TMP/run.txt") bytes): $(head -c 120 "$PL_TMP/run.txt" | tr '\n' ' ')" >&2
done_testing
