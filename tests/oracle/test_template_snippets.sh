#!/usr/bin/env bash
# test_template_snippets.sh -- the expectations of the Jinja interpreter's
# language unit test (tests/unit/jinja_cases.inc: what each template
# snippet renders to, or that it raises) re-checked against Python's jinja2
# in Hugging Face's configuration, so the unit test cannot drift from the
# reference.  Needs python3-jinja2 (a missing one fails the test, unless
# POCKETLLM_NO_ORACLE=1 skips it).
. "$(dirname "$0")/../e2e/lib.sh"
if [ "${POCKETLLM_NO_ORACLE:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_ORACLE=1 -- the snippet expectations were not re-checked against jinja2" >&2
    exit 77
fi
if ! /usr/bin/python3 -c 'import jinja2' 2>/dev/null; then
    echo "FAIL: Debian's python3-jinja2 is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi
ok
/usr/bin/python3 "$PL_SRC/tests/oracle/jinja2_snippets.py" --check "$PL_SRC/tests/unit/jinja_cases.inc" >"$PL_TMP/out" 2>&1 ||
    fail "jinja2 disagrees with jinja_cases.inc: $(head -c 2000 "$PL_TMP/out")"
cat "$PL_TMP/out" >&2
done_testing
