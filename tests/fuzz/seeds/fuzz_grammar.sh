#!/usr/bin/env bash
# Seeds for fuzz_grammar: every grammar of the llama.cpp bundle's grammars/
# folder when it is installed (each followed by a NUL and a text it should
# read), and small grammars exercising each construct.
set -euo pipefail
out=$1
bundle=${PL_ORACLE_DIR:-$HOME/.cache/pocketllm/llama.cpp-v0.4.0}/src/grammars
if ls "$bundle"/*.gbnf >/dev/null 2>&1; then
    for g in "$bundle"/*.gbnf; do
        { cat "$g"; printf '\0{"a": [1, 2.5, "x\\u00e9"], "b": null}\n1. e4 e5\n'; } >"$out/$(basename "$g")"
    done
fi
i=0
seed() { i=$((i + 1)); printf '%b' "$1" >"$out/seed_$i"; }
seed 'root ::= "ab" | "cd"\0ab'
seed 'root ::= ("x" "y")* "z"\0xyxyz'
seed 'root ::= [a-c]+ [^\\x00-\\x1f]{2,4}\0abc\xc3\xa9xy'
seed 'root ::= x\nx ::= "1" x | "2"\0111112'
seed 'root ::= "\\u20ac" . [\\U0001F600-\\U0001F64F]?\0\xe2\x82\xacq\xf0\x9f\x98\x80'
seed 'root ::= a b\na ::= | "x"\nb ::= "y"{3}\0xyyy'
seed 'root ::= root "a" | "b"\0b'
seed 'root ::= "a"{0,50} # comment\n\0aaaa'
