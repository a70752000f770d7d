#!/usr/bin/env bash
# Seeds for fuzz_jinja: every template of the llama.cpp bundle when it is
# installed, and small snippets exercising each construct (some followed by
# a NUL byte and a messages JSON).
set -euo pipefail
out=$1
bundle=${PL_ORACLE_DIR:-$HOME/.cache/pocketllm/llama.cpp-v0.4.0}/src/models/templates
if ls "$bundle"/*.jinja >/dev/null 2>&1; then
    for t in "$bundle"/*.jinja; do cp "$t" "$out/$(basename "$t")"; done
fi
i=0
seed() { i=$((i + 1)); printf '%s' "$1" >"$out/snippet_$i"; }
seed '{% for m in messages %}{{ m.role }}: {{ m.content | trim }}{% if not loop.last %}\n{% endif %}{% endfor %}'
seed '{%- set ns = namespace(x=0) -%}{%- for i in range(5) if i is odd -%}{%- set ns.x = ns.x + i -%}{%- endfor -%}{{ ns.x }}'
seed '{% macro m(a, b=2) %}{{ a ~ b ~ varargs ~ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}'
seed '{{ messages[0].content[::-1] }}{{ "a,b".split(",")|join("-") }}{{ tools|tojson(indent=2) }}'
seed '{% set x %}{% filter upper %}a{% endfilter %}{% endset %}{{ x }}{% raw %}{{ y }}{% endraw %}{# c #}'
seed '{{ (messages|selectattr("role", "eq", "user")|map(attribute="content")|list)[-1] }}{{ 7 // 2 }}{{ 2 ** 8 }}'
seed '{{ "%s-%d" % ("a", 3) }}{{ "{}{:>4}".format(1, "x") }}{{ messages[1].content.startswith("Hi") }}'
seed '{% for a, b in {"k": 1}.items() %}{{ a }}{{ b }}{% else %}none{% endfor %}{{ loop }}{{ x is defined }}'
printf '%s\0%s' '{% for m in messages %}{{ m.content }}{% endfor %}' '[{"role":"user","content":"x"},{"role":"u","content":[1,2.5,null,true,{"a":"\u00e9"}]}]' >"$out/with_messages"
