"""generate / stream / tokenize / detokenize / logits against the CLI:
greedy generation gives `pocketllm run`'s ids and text, stream joins into
generate's text, logits are `pocketllm logits`'s floats bit for bit."""
import array

import pytest

import pocketllm
from conftest import run_cli

PROMPTS = ["Once upon a time", "The little dog said \"hi\" and ran. Then"]


def cli_ids(cli, model, prompt, n, threads=1, ctx=512):
    out = run_cli(cli, "run", "-m", model, "-p", prompt, "-n", str(n), "-t", str(threads), "--ctx", str(ctx),
                  "--print-ids").decode().strip().splitlines()
    return [int(x) for x in out[-2].split()], [int(x) for x in out[-1].split()]


def cli_text(cli, model, prompt, n, threads=1, ctx=512):
    out = run_cli(cli, "run", "-m", model, "-p", prompt, "-n", str(n), "-t", str(threads), "--ctx", str(ctx))
    assert out.endswith(b"\n")
    return out[:-1].decode()


@pytest.mark.parametrize("which", ["stories", "qwen3"])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_generate_equals_run(request, cli, which, prompt):
    path = request.getfixturevalue(which)
    n = 40
    prompt_ids, ids = cli_ids(cli, path, prompt, n)
    text = cli_text(cli, path, prompt, n)
    with pocketllm.Model(path, n_ctx=512, n_threads=1) as m:
        c = m.generate(prompt, max_tokens=n)
        assert c.prompt_ids == prompt_ids
        assert c.ids == ids, f"{which}: ids differ from pocketllm run's"
        assert c.text == text
        assert c.finish_reason in ("stop", "length")
        assert "".join(m.stream(prompt, max_tokens=n)) == c.text
        # the model is reused: the same call gives the same answer
        assert m.generate(prompt, max_tokens=n).ids == ids


def test_stream_pieces_are_whole_utf8(qwen3):
    # sampled at a high temperature, a random model writes multi-byte
    # characters across token boundaries: no piece is cut inside one (a
    # U+FFFD appears in a piece only where the whole text has one too)
    kw = dict(max_tokens=48, temperature=1.5, top_k=0, top_p=1.0, min_p=0.0)
    with pocketllm.Model(qwen3, n_ctx=512, n_threads=1) as m:
        for seed in range(3):
            full = m.generate("Hello", seed=seed, **kw).text
            pieces = list(m.stream("Hello", seed=seed, **kw))
            assert "".join(pieces) == full
            assert sum(p.count("\ufffd") for p in pieces) == full.count("\ufffd")


def test_sampled_generation_is_seeded(stories):
    with pocketllm.Model(stories, n_threads=1) as m:
        a = m.generate("Once", max_tokens=24, temperature=0.9, seed=5)
        b = m.generate("Once", max_tokens=24, temperature=0.9, seed=5)
        assert a.ids == b.ids


def test_stop_strings(stories):
    with pocketllm.Model(stories, n_threads=1) as m:
        full = m.generate("Once upon a time", max_tokens=40).text
        word = full.split()[3]
        cut = m.generate("Once upon a time", max_tokens=40, stop=[word])
        assert cut.finish_reason == "stop"
        assert cut.text == full[:full.index(word)]
        assert "".join(m.stream("Once upon a time", max_tokens=40, stop=word)) == cut.text


def test_grammar(stories):
    with pocketllm.Model(stories, n_threads=1) as m:
        c = m.generate("Once", max_tokens=30, grammar='root ::= ("yes" | "no") " " [a-z]+ "."')
        import re
        assert re.fullmatch(r"(yes|no) [a-z]+\.", c.text), c.text
        c = m.generate("Once", max_tokens=60, json_schema={"type": "object", "properties": {"a": {"type": "integer"}},
                                                              "required": ["a"], "additionalProperties": False})
        import json
        assert isinstance(json.loads(c.text)["a"], int)


def test_tokenize_detokenize(cli, qwen3):
    with pocketllm.Model(qwen3, n_ctx=256, n_threads=1) as m:
        text = "Hello, wörld! 你好 <|im_start|>"
        ids = m.tokenize(text)
        out = run_cli(cli, "tokenize", "--model", qwen3, "--text", text).decode().split()
        assert ids == [int(x) for x in out]
        assert m.detokenize(ids, unparse_special=True) == text
        assert m.detokenize(ids) == text.replace("<|im_start|>", "")
        assert m.tokenize(text, parse_special=False) != ids


def test_logits_bit_for_bit(cli, qwen3, tmp_path):
    prompt = "The quick brown fox"
    out = tmp_path / "l.bin"
    shape = run_cli(cli, "logits", "-m", qwen3, "-p", prompt, "-t", "1", "--ctx", "256", "--out", str(out)).split()
    n, nv = int(shape[0]), int(shape[1])
    want = out.read_bytes()
    with pocketllm.Model(qwen3, n_ctx=256, n_threads=1) as m:
        got = m.logits(prompt)
        try:
            import numpy as np
            assert got.shape == (n, nv) and got.dtype == np.float32
            assert got.tobytes() == want
        except ImportError:
            assert b"".join(r.tobytes() for r in got) == want
        assert m.logits(m.tokenize(prompt)).tobytes() == want


def test_logits_without_numpy(qwen3, monkeypatch):
    import builtins
    real = builtins.__import__

    def no_numpy(name, *a, **k):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("no numpy here")
        return real(name, *a, **k)

    with pocketllm.Model(qwen3, n_ctx=256, n_threads=1) as m:
        with_np = m.logits("Hi there")
        monkeypatch.setattr(builtins, "__import__", no_numpy)
        rows = m.logits("Hi there")
        assert isinstance(rows, list) and isinstance(rows[0], array.array)
        assert b"".join(r.tobytes() for r in rows) == with_np.tobytes()


def test_perplexity(cli, stories):
    text = ("Once upon a time there was a little girl named Lily. She loved to play outside. " * 20)
    with pocketllm.Model(stories, n_threads=1) as m:
        seen = []
        r = m.perplexity(text, n_ctx=64, progress=lambda d, t, p: seen.append((d, t)))
        assert r.ppl > 1.0 and r.n_chunks >= 1 and seen and seen[-1][0] == seen[-1][1]
