"""Fixtures of the binding's tests (run by tests/e2e/test_python.sh, which
makes the models, starts a server and sets the environment): the models,
the CLI, the server's URL.  A missing piece fails the test that needs it
with the reason -- never a skip."""
import json
import os
import subprocess
import urllib.request

import pytest


def _env(name):
    v = os.environ.get(name)
    if not v:
        pytest.fail(f"{name} is not set: run the binding's tests through tests/e2e/test_python.sh")
    return v


def _session_fixture(name, env):
    def fixture():
        return _env(env)
    fixture.__name__ = name
    return pytest.fixture(scope="session", name=name)(fixture)


# the random-weight Qwen3 (tiny, the Qwen2 vocabulary, the Qwen3 template),
# stories260K, the CLI, pl_mkbad's damaged files, the server on the Qwen3
stories = _session_fixture("stories", "PL_PY_STORIES")
qwen3 = _session_fixture("qwen3", "PL_PY_QWEN3")
cli = _session_fixture("cli", "PL_BIN")
bad_dir = _session_fixture("bad_dir", "PL_PY_BAD_DIR")
server = _session_fixture("server", "PL_PY_SERVER")


def run_cli(cli, *args):
    """The CLI's stdout (it must succeed)."""
    r = subprocess.run([cli, *args], capture_output=True)
    assert r.returncode == 0, f"pocketllm {' '.join(args)}: {r.stderr.decode(errors='replace')}"
    return r.stdout


def post(server, path, body):
    req = urllib.request.Request(server + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")
