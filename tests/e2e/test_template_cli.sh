#!/usr/bin/env bash
# test_template_cli.sh -- `pocketllm template` as a user types it: --help,
# usage errors (exit 2), a template file or a model's embedded template,
# messages from a file or stdin, the options, a refused template and a
# rejected conversation (exit 1, one line naming why), and the reasoning
# split.  Expected outputs are written out by hand from the templates.
. "$(dirname "$0")/lib.sh"
T=$PL_TMP

expect_rc 0 "$PL_BIN" template --help && expect_grep "usage: pocketllm template" "$T/out"
expect_grep "--enable-thinking" "$T/out"
expect_rc 0 "$PL_BIN" help template && expect_grep "--split-reasoning" "$T/out"
expect_rc 2 "$PL_BIN" template && expect_grep "give exactly one of --model and --file" "$T/err"
expect_rc 2 "$PL_BIN" template --file a --model b
expect_rc 2 "$PL_BIN" template --file a --bogus
expect_rc 2 "$PL_BIN" template --file a --enable-thinking maybe
expect_rc 2 "$PL_BIN" template --file a --now yesterday
expect_rc 2 "$PL_BIN" template --file a --messages
expect_rc 1 "$PL_BIN" template --file "$T/missing.jinja" && expect_grep "cannot open" "$T/err"

# a chat template in the ChatML style
cat >"$T/chatml.jinja" <<'J'
{%- for m in messages %}
{{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\n\n</think>\n\n' }}{% endif %}
{%- endif %}
J
printf '[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi ✓"}]' >"$T/msgs.json"
expect_rc 0 "$PL_BIN" template --file "$T/chatml.jinja"        # only checked
[ ! -s "$T/out" ] || fail "a check printed something: $(cat "$T/out")"
expect_rc 0 "$PL_BIN" template --file "$T/chatml.jinja" --messages "$T/msgs.json"
printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi ✓<|im_end|>\n' >"$T/want"
ok; cmp -s "$T/out" "$T/want" || fail "rendering differs: $(cat "$T/out")"
expect_rc 0 "$PL_BIN" template --file "$T/chatml.jinja" --messages - --add-generation-prompt \
    --enable-thinking false <"$T/msgs.json"
printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi ✓<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' >"$T/want"
ok; cmp -s "$T/out" "$T/want" || fail "rendering with the options differs: $(cat "$T/out")"

# variables: tools, extra variables, special tokens, the fixed time
printf '{{ bos_token }}|{{ eos_token }}|{{ tools[0].name }}|{{ effort }}|{{ strftime_now("%%d %%b %%Y") }}|{{ tools is none }}' >"$T/vars.jinja"
printf '[{"name":"get_weather"}]' >"$T/tools.json"
printf '{"effort":"high"}' >"$T/vars.json"
expect_rc 0 "$PL_BIN" template --file "$T/vars.jinja" --messages "$T/msgs.json" --tools "$T/tools.json" \
    --vars "$T/vars.json" --bos "<s>" --eos "</s>" --now 2025-07-26T10:30:00
ok; [ "$(cat "$T/out")" = "<s>|</s>|get_weather|high|26 Jul 2025|False" ] || fail "variables: $(cat "$T/out")"

# a template the interpreter refuses: exit 1, the construct and where it is
printf 'Hello\n{%% include "other.jinja" %%}\n' >"$T/refused.jinja"
expect_rc 1 "$PL_BIN" template --file "$T/refused.jinja"
expect_grep "line 2, column 4: the {% include %} tag (not supported)" "$T/err"
# a conversation the template rejects
printf '{%% if messages[0].role == "system" %%}{{ raise_exception("System role not supported") }}{%% endif %%}' >"$T/strict.jinja"
expect_rc 1 "$PL_BIN" template --file "$T/strict.jinja" --messages "$T/msgs.json"
expect_grep "raise_exception: System role not supported" "$T/err"
# malformed messages
printf '[{"role": "user", "content": "x"' >"$T/bad.json"
expect_rc 1 "$PL_BIN" template --file "$T/chatml.jinja" --messages "$T/bad.json" && expect_grep "invalid JSON" "$T/err"

# the reasoning split
printf '<think>\nIt is 4.\n</think>\n\nFour.' >"$T/reply.txt"
expect_rc 0 "$PL_BIN" template --file "$T/chatml.jinja" --split-reasoning "$T/reply.txt"
expect_grep '{"content":"Four.","reasoning_content":"It is 4."}' "$T/out"

# a model's embedded template (a synthetic checkpoint carrying chatml.jinja)
if expect_rc 0 "$PL_BIN" synth --shape tiny --quiet --template "$T/chatml.jinja" "$T/model.gguf"; then
    expect_rc 0 "$PL_BIN" template --model "$T/model.gguf" --messages "$T/msgs.json"
    printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi ✓<|im_end|>\n' >"$T/want"
    ok; cmp -s "$T/out" "$T/want" || fail "the model's template renders differently: $(cat "$T/out")"
    expect_rc 1 "$PL_BIN" template --model "$T/model.gguf" --name tool_use
    expect_grep "has no tokenizer.chat_template.tool_use" "$T/err"
fi
expect_rc 1 "$PL_BIN" template --model "$PL_SHARED/models/stories260K.gguf"
expect_grep "has no tokenizer.chat_template" "$T/err"
done_testing
