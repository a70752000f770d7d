# test_python.sh -- the Python binding (python/pocketllm) under Debian's
# pytest (tests/python): against the CLI (generate == run, logits bit for
# bit), against a server on the same random-weight Qwen3 (chat, embed),
# errors, damaged files, memory, threads, Ctrl-C (images and audio:
# test_python_media.sh).  The package is imported
# from the source tree over this build's library (POCKETLLM_LIBRARY).
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
"$PY" -c "import pytest" 2>/dev/null || { echo "FAIL: python3-pytest is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
STORIES=$PL_SHARED/models/stories260K.gguf
[ -f "$STORIES" ] || { echo "FAIL: no $STORIES" >&2; exit 1; }
serve_model "$PL_TMP/q.gguf" --shape tiny --type f16 --seed 21
mkdir -p "$PL_TMP/bad"
"$PL_TOOLS/pl_mkbad" "$PL_TMP/bad" >/dev/null || { echo "FAIL: pl_mkbad" >&2; exit 1; }
serve_start py --model "$PL_TMP/q.gguf" --name m --ctx 1024 --parallel 1 -t 1 --pooling mean
PL_PY_QWQ_TEMPLATE=$(dirname "$QWEN3_TEMPLATE")/Qwen-QwQ-32B.jinja PL_PY_STORIES=$STORIES PL_PY_QWEN3=$PL_TMP/q.gguf PL_PY_BAD_DIR=$PL_TMP/bad PL_PY_SERVER=$BASE \
    POCKETLLM_LIBRARY=$PL_LIB PYTHONPATH=$PL_SRC/python:$PL_SRC/tests/python PL_BIN=$PL_BIN \
    "$PY" -m pytest -q -p no:cacheprovider --ignore="$PL_SRC/tests/python/test_media.py" "$PL_SRC/tests/python" \
    >"$PL_TMP/pytest.out" 2>&1
script_verdict $? "$PL_TMP/pytest.out" "the binding's tests failed"
grep -qE "^[0-9]+ passed" "$PL_TMP/pytest.out" && ! grep -qE "skipped|xfail" "$PL_TMP/pytest.out" ||
    fail "pytest did not report every test passed"
serve_stop
done_testing
