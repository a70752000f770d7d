#!/usr/bin/env bash
# test_template_jinja2.sh -- every chat template in the llama.cpp bundle
# (models/templates/*.jinja) rendered by pocketllm and by Python's jinja2
# configured as Hugging Face's apply_chat_template configures it, over the
# conversations of template_cases.json, compared byte for byte.  A template
# is either identical on every conversation (or rejects the same
# conversations jinja2 rejects) or refused when loaded with the construct
# named; the Qwen3, Llama 3.x, MiniCPM5, DeepSeek and Gemma templates must
# not be refused.  Besides the fixed conversations, 25 seeded random ones
# (roles, Unicode, reasoning, tool calls with nested arguments...).  A few templates also go through the `pocketllm template`
# command line.  Needs the oracle bundle (not its binary) and python3-jinja2;
# a missing one fails the test, unless POCKETLLM_NO_ORACLE=1 skips it.
. "$(dirname "$0")/../e2e/lib.sh"
if [ "${POCKETLLM_NO_ORACLE:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_ORACLE=1 -- the comparison with jinja2 on llama.cpp's templates did not run" >&2
    exit 77
fi
TEMPLATES=${PL_ORACLE_DIR:-}/src/models/templates
if [ -z "${PL_ORACLE_DIR:-}" ] || ! ls "$TEMPLATES"/*.jinja >/dev/null 2>&1; then
    echo "FAIL: no chat templates at '$TEMPLATES' (PL_ORACLE_DIR='${PL_ORACLE_DIR:-}'); run scripts/install-oracle.sh" \
         "and configure with -DPL_ORACLE_DIR=<its output>, or set POCKETLLM_NO_ORACLE=1 to skip explicitly" >&2
    exit 1
fi
PY=/usr/bin/python3
if ! $PY -c 'import jinja2' 2>/dev/null; then
    echo "FAIL: Debian's python3-jinja2 is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi
HERE=$(cd "$(dirname "$0")" && pwd)
REF=$PL_TMP/ref

# the reference: jinja2 renders every template for every conversation
ok
if ! $PY "$HERE/jinja2_reference.py" "$TEMPLATES" "$HERE/template_cases.json" "$REF" --random 25 --seed 1 \
        2>"$PL_TMP/ref.err"; then
    fail "jinja2_reference.py failed: $(head -c 400 "$PL_TMP/ref.err")"
    done_testing; exit 1
fi

# pocketllm through the public API, every template, every case
ok
"$PL_TOOLS/pl_template_check" "$TEMPLATES" "$REF" \
    --must-render Qwen-Qwen3-0.6B --must-render Qwen-Qwen2.5-7B-Instruct --must-render Qwen-QwQ-32B \
    --must-render meta-llama-Llama-3.1-8B-Instruct --must-render meta-llama-Llama-3.2-3B-Instruct \
    --must-render meta-llama-Llama-3.3-70B-Instruct --must-render openbmb-MiniCPM5-1B \
    --must-render deepseek-ai-DeepSeek-R1-Distill-Llama-8B --must-render deepseek-ai-DeepSeek-R1-Distill-Qwen-32B \
    --must-render deepseek-ai-DeepSeek-V3.1 --must-render google-gemma-2-2b-it \
    --must-render google-gemma-4-31B-it >"$PL_TMP/check.out" 2>"$PL_TMP/check.err"
rc=$?
cat "$PL_TMP/check.out" >&2
if [ $rc != 0 ]; then
    fail "pl_template_check: pocketllm differs from jinja2: $(head -c 3000 "$PL_TMP/check.err")"
fi
# every refusal names what it refused, with a position
while IFS= read -r line; do
    ok
    echo "$line" | grep -qE 'line [0-9]+, column [0-9]+' || fail "a refusal without a position: $line"
done < <(grep '^REFUSED ' "$PL_TMP/check.out")

# the command line on a few templates, the fixed cases
for stem in Qwen-Qwen3-0.6B meta-llama-Llama-3.1-8B-Instruct google-gemma-2-2b-it; do
    for args in "$REF/$stem"/*.args; do
        case $(basename "$args") in random*) continue ;; esac
        c=${args%.args}
        mapfile -t flags <"$args"
        ok
        "$PL_BIN" template --file "$TEMPLATES/$stem.jinja" "${flags[@]}" >"$PL_TMP/cli.out" 2>"$PL_TMP/cli.err"
        rc=$?
        if [ -f "$c.out" ]; then
            [ $rc = 0 ] && cmp -s "$PL_TMP/cli.out" "$c.out" ||
                fail "pocketllm template $stem $(basename "$c"): exit $rc, output differs from jinja2: $(head -c 300 "$PL_TMP/cli.err")"
        else
            [ $rc = 1 ] && grep -q "error:" "$PL_TMP/cli.err" ||
                fail "pocketllm template $stem $(basename "$c"): jinja2 raised, pocketllm exited $rc"
        fi
    done
done
done_testing
