"""The KV cache's types through the binding: kv_type / kv_type_v give
`pocketllm run`'s ids with the same -ctk / -ctv (a packed q8_0 cache, a
q4_0 K over an f16 V), flash attention turns on by itself for a quantized
V, and the refusals name what is wrong; fit(kv_auto=True) makes
`pocketllm fit --kv auto`'s choice."""
import json

import pytest

import pocketllm
from conftest import run_cli

PROMPT = "Once upon a time there was"


@pytest.fixture(scope="module")
def small(cli, tmp_path_factory):
    # heads of 32: every block type fits (the shared tiny model's are 16)
    path = str(tmp_path_factory.mktemp("kv") / "small.gguf")
    run_cli(cli, "synth", "--quiet", "--shape", "small", "--type", "f16", "--seed", "3", path)
    return path


def cli_ids(cli, model, *kv):
    out = run_cli(cli, "run", "-m", model, "-p", PROMPT, "-n", "24", "-t", "1", "--print-ids", *kv)
    return [int(x) for x in out.decode().strip().splitlines()[-1].split()]


@pytest.mark.parametrize("kw,args", [
    (dict(kv_type="q8_0"), ["--kv", "q8_0"]),
    (dict(kv_type="q4_0", kv_type_v="f16"), ["-ctk", "q4_0"]),
    (dict(kv_type="f16", kv_type_v="iq4_nl"), ["-ctv", "iq4_nl"]),
    (dict(kv_type="bf16", flash_attn=True), ["--kv", "bf16", "-fa", "on"]),
])
def test_kv_types_equal_run(cli, small, kw, args):
    with pocketllm.Model(small, n_threads=1, **kw) as m:
        assert m.generate(PROMPT, max_tokens=24).ids == cli_ids(cli, small, *args)


def test_kv_refusals(small, stories):
    with pytest.raises(pocketllm.InvalidArgumentError, match="iq4_nl"):
        pocketllm.Model(small, kv_type="q4_K")
    with pytest.raises(pocketllm.Error, match="flash"):
        pocketllm.Model(small, kv_type_v="q8_0", flash_attn=False)
    with pytest.raises(pocketllm.Error, match="heads of 8"):
        pocketllm.Model(stories, kv_type="q8_0")


def test_fit_kv_auto_equals_cli(cli, tmp_path):
    # a cache at 32768 positions that outweighs the weights, and a budget
    # the f16 cache misses and a q8_0 one meets (e2e/test_fit_kv.sh)
    path = str(tmp_path / "kv.gguf")
    run_cli(cli, "synth", "--quiet", "--arch", "qwen3", "--n-layer", "2", "--n-embd", "256", "--n-head", "4",
            "--n-head-kv", "2", "--head-dim", "64", "--n-ff", "512", "--type", "f16", "--seed", "3", path)
    budget = 30 << 20
    want = json.loads(run_cli(cli, "fit", "--quiet", "--json", "-m", path, "--ctx", "32768", "--memory",
                              str(budget), "--kv", "auto"))
    got = pocketllm.fit(path, budget, n_ctx=32768, kv_auto=True)
    assert got["recipe"] == want["chosen"] == "Q4_K_M"
    row = got["rows"][got["chosen"]]
    cli_row = next(r for r in want["rows"] if r["recipe"] == "Q4_K_M")
    assert row["cache_type_k"] == row["cache_type_v"] == cli_row["cache_type_k"] == "q8_0"
    assert row["asked_cache_bytes"] > 0 and abs(row["asked_cache_bytes"] - cli_row["asked_cache_bytes"]) <= \
        cli_row["asked_cache_bytes"] / 100
