# test_python_wheel.sh -- the wheel a user installs: scripts/build-wheel.sh
# builds it from this build's library (Debian's setuptools and wheel,
# offline), it installs into a fresh venv, and there -- with no build tree
# on the paths and no POCKETLLM_LIBRARY -- `import pocketllm` finds the
# library it carries, lists the devices and generates what the CLI does.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import setuptools, wheel, venv, ensurepip" 2>/dev/null ||
    { echo "FAIL: python3-setuptools, python3-wheel and python3-venv are needed (scripts/install-deps.sh)" >&2; exit 1; }
BUILD_DIR=$PL_BUILD bash "$PL_SRC/scripts/build-wheel.sh" "$PL_TMP/dist" >"$PL_TMP/wheel.out" 2>&1
rc=$?
ok
[ $rc = 0 ] && WHL=$(ls "$PL_TMP"/dist/pocketllm-*-py3-none-*.whl 2>/dev/null) ||
    { cat "$PL_TMP/wheel.out" >&2; fail "build-wheel.sh made no wheel"; done_testing; exit 1; }
"$PY" -m venv "$PL_TMP/v" >"$PL_TMP/venv.out" 2>&1 || { cat "$PL_TMP/venv.out" >&2; fail "python3 -m venv failed"; done_testing; exit 1; }
"$PL_TMP/v/bin/pip" install -q --no-index "$WHL" >"$PL_TMP/pip.out" 2>&1
rc=$?
ok
[ $rc = 0 ] || { cat "$PL_TMP/pip.out" >&2; fail "pip install of the wheel failed"; done_testing; exit 1; }
STORIES=$PL_SHARED/models/stories260K.gguf
want=$("$PL_BIN" run -m "$STORIES" -p "Once upon a time" -n 16 -t 1 --print-ids | tail -1)
cd "$PL_TMP" || exit 1
env -u POCKETLLM_LIBRARY -u PYTHONPATH "$PL_TMP/v/bin/python" -c "
import os, sys, pocketllm
lib = pocketllm.library_path
assert lib.startswith('$PL_TMP/v/'), lib
print(pocketllm.devices())
m = pocketllm.Model('$STORIES', n_threads=1)
print(' '.join(map(str, m.generate('Once upon a time', max_tokens=16).ids)))
assert os.path.exists(os.path.join(os.path.dirname(pocketllm.__file__), 'py.typed'))
" >"$PL_TMP/venv_run.out" 2>&1
script_verdict $? "$PL_TMP/venv_run.out" "the installed wheel does not work from a venv"
expect_grep "'id': 'cpu'" "$PL_TMP/venv_run.out"
[ "$(tail -1 "$PL_TMP/venv_run.out")" = "$want" ] || fail "the wheel's generate differs from pocketllm run: $(tail -1 "$PL_TMP/venv_run.out") vs $want"
ok

# an editable install over the source tree: the library named by
# POCKETLLM_LIBRARY; without it, a clear refusal naming the variable
"$PY" -m venv --system-site-packages "$PL_TMP/e" >"$PL_TMP/venv.out" 2>&1 &&
    "$PL_TMP/e/bin/pip" install -q --no-index --no-build-isolation -e "$PL_SRC/python" >"$PL_TMP/pip.out" 2>&1
rc=$?
ok
[ $rc = 0 ] || { cat "$PL_TMP/venv.out" "$PL_TMP/pip.out" >&2; fail "the editable install failed"; done_testing; exit 1; }
env -u PYTHONPATH POCKETLLM_LIBRARY="$PL_LIB" "$PL_TMP/e/bin/python" -c "
import pocketllm
assert pocketllm.__file__.startswith('$PL_SRC/python/'), pocketllm.__file__
assert pocketllm.library_path == '$PL_LIB', pocketllm.library_path
print(pocketllm.architectures()[0]['name'])
" >"$PL_TMP/edit.out" 2>&1
script_verdict $? "$PL_TMP/edit.out" "the editable install does not import over the build's library"
env -u PYTHONPATH -u POCKETLLM_LIBRARY "$PL_TMP/e/bin/python" -c "import pocketllm" >"$PL_TMP/edit.out" 2>&1
rc=$?
ok
[ $rc != 0 ] && tail -1 "$PL_TMP/edit.out" | grep -q "ImportError: pocketllm: cannot load.*POCKETLLM_LIBRARY" ||
    fail "an editable install without a library did not refuse clearly: $(tail -2 "$PL_TMP/edit.out")"
rm -rf "$PL_SRC/python/pocketllm.egg-info"
done_testing
