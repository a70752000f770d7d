# test_serve_json_schema.sh -- structured output through `pocketllm serve`
# (serve_schema_client.py: every schema of tests/grammar/schemas, sampled,
# validates with python3-jsonschema; unsupported keywords
# are 400s naming them; llama.cpp's grammar field) and through `pocketllm
# run --json-schema`.  Model: a random-weight Qwen3 (tiny) with the real
# Qwen2/Qwen3 tokenizer and the Qwen3 template (whose think block stays
# free: only the content after it is held to the schema).
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
"$PY" -c "import jsonschema" 2>/dev/null || { echo "FAIL: python3-jsonschema is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16 --seed 3
SCHEMAS=$PL_SRC/tests/grammar/schemas UNSUPPORTED=$PL_SRC/tests/grammar/unsupported

serve_start main --model "$PL_TMP/m.gguf" --name m --ctx 1024 --parallel 2 -t 1
BASE=$BASE SCHEMAS=$SCHEMAS PL_SANITIZE=${PL_SANITIZE:-0} UNSUPPORTED=$UNSUPPORTED "$PY" "$(dirname "$0")/serve_schema_client.py" \
    >"$PL_TMP/py.out" 2>&1
script_verdict $? "$PL_TMP/py.out" "the structured-output checks failed"
serve_stop

# the CLI: run --json-schema, sampled, validates; a refused keyword names itself
for f in "$SCHEMAS"/*.json; do
    case $(basename "$f") in 0[1-4]_*) ;; *) continue ;; esac
    expect_rc 0 "$BIN" run --model "$PL_TMP/m.gguf" --json-schema "$f" --prompt "JSON please:" -n 128 \
        --temperature 1 --seed 9 -t 1 || continue
    "$PY" - "$f" "$PL_TMP/out" >"$PL_TMP/v.out" 2>&1 <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator(schema).validate(json.loads(open(sys.argv[2]).read()))
PY
    script_verdict $? "$PL_TMP/v.out" "run --json-schema $(basename "$f"): the output does not validate: $(head -c 300 "$PL_TMP/out")"
done
first=$(sed -n '/^[^#]/{p;q}' "$UNSUPPORTED/expected.txt")
expect_rc 1 "$BIN" run --model "$PL_TMP/m.gguf" --json-schema "$UNSUPPORTED/${first%% *}" --prompt x -n 4
expect_grep "${first##* }" "$PL_TMP/err"
done_testing
