"""Errors and robustness: each failure raises its pocketllm.Error subclass
with the library's message; damaged checkpoints never crash Python; memory
stays flat over many opens and generations; two threads run two models at
once; Ctrl-C during a stream leaves the model usable."""
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import pocketllm
from conftest import rss_kib


def test_error_classes(stories, qwen3, tmp_path):
    with pytest.raises(pocketllm.FileError) as e:
        pocketllm.Model(tmp_path / "missing.gguf")
    assert "missing.gguf" in str(e.value) and e.value.status == 2
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 24)
    with pytest.raises(pocketllm.FormatError) as e:
        pocketllm.Model(bad)
    assert "byte" in e.value.message and e.value.status == 3
    # the architecture renamed in place: well-formed, not something we run
    data = bytearray(open(stories, "rb").read())
    at = data.index(b"general.architecture")
    v = data.index(b"llama", at + 20)
    data[v:v + 5] = b"llamz"
    alien = tmp_path / "alien.gguf"
    alien.write_bytes(bytes(data))
    with pytest.raises(pocketllm.UnsupportedError) as e:
        pocketllm.Model(alien)
    assert "llamz" in str(e.value)
    with pocketllm.Model(qwen3, n_ctx=64, n_threads=1) as m:
        with pytest.raises(pocketllm.ContextFullError) as e:
            m.generate("word " * 200)
        assert "64" in str(e.value)
        with pytest.raises(pocketllm.InvalidArgumentError):
            m.generate([10 ** 9])  # an id outside the vocabulary
        with pytest.raises(pocketllm.InvalidArgumentError):
            m.generate("x", grammar="root ::= undefined-rule")
        assert m.generate("Hi", max_tokens=4).ids  # still usable
    assert isinstance(pocketllm.FormatError("x"), pocketllm.Error)


def test_damaged_checkpoints_never_crash(bad_dir):
    # pl_mkbad's files, one per class of damage: opening each as a model
    # raises an Error (inspect may read those whose damage is only in what
    # a model needs, but never crashes either)
    names = [n for n in sorted(os.listdir(bad_dir)) if n.endswith(".gguf")]
    assert len(names) >= 35
    for n in names:
        with pytest.raises(pocketllm.Error):
            pocketllm.Model(os.path.join(bad_dir, n))
        try:
            assert isinstance(pocketllm.inspect(os.path.join(bad_dir, n)), dict)
        except pocketllm.Error:
            pass


def test_inspect(stories):
    info = pocketllm.inspect(stories)
    assert info["metadata"]["general.architecture"] == "llama"
    assert info["tensors"] and all(t["bytes"] > 0 for t in info["tensors"])
    assert info["metadata"]["tokenizer.ggml.tokens"]["length"] > 64


def test_rss_flat_open_close(stories):
    for _ in range(50):  # warm up allocators and caches
        pocketllm.Model(stories, n_threads=1).close()
    before = rss_kib()
    for _ in range(1000):
        with pocketllm.Model(stories, n_threads=1):
            pass
    grew = rss_kib() - before
    assert grew < 5 * 1024, f"RSS grew {grew} KiB over 1000 opens"


def test_rss_flat_generations(stories):
    with pocketllm.Model(stories, n_ctx=64, n_threads=1) as m:
        for _ in range(200):
            m.generate("Once", max_tokens=2)
        before = rss_kib()
        for i in range(10000):
            m.generate("Once", max_tokens=2, temperature=0.8, seed=i)
        grew = rss_kib() - before
    assert grew < 5 * 1024, f"RSS grew {grew} KiB over 10000 generations"


def test_two_threads_two_models(qwen3):
    prompt, n = "Tell me about the sea", 48
    with pocketllm.Model(qwen3, n_ctx=256, n_threads=1) as a:
        solo = a.generate(prompt, max_tokens=n).ids
    results, errors = {}, []

    def work(k):
        try:
            with pocketllm.Model(qwen3, n_ctx=256, n_threads=1) as m:
                results[k] = m.generate(prompt, max_tokens=n).ids
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    assert not errors and results == {0: solo, 1: solo}, (errors, results)


def test_gil_released_during_c_calls(stories):
    # one long C call (perplexity) in a thread, with the interpreter's switch
    # interval made long: this thread can run beside it only if the call
    # gave the GIL up -- held, the worker would keep it until it finished
    text = "Once upon a time there was a little girl named Lily. She loved to play outside. " * 200
    with pocketllm.Model(stories, n_threads=1) as m:
        m.perplexity(text[:2000], n_ctx=128)  # warm
        old = sys.getswitchinterval()
        sys.setswitchinterval(30.0)
        try:
            started = threading.Event()

            def work():
                started.set()
                m.perplexity(text, n_ctx=128)

            t = threading.Thread(target=work)
            t.start()
            started.wait()
            spins = 0
            while t.is_alive():
                spins += 1
                time.sleep(0.0005)  # (gives the GIL back, so the worker can return)
            t.join()
        finally:
            sys.setswitchinterval(old)
    assert spins > 20, f"only {spins} iterations ran beside the C call: the GIL was held"


def test_sigint_during_stream(qwen3):
    # a child process streams (slowly: it sleeps between pieces); the test
    # sends it SIGINT mid-stream; the child catches KeyboardInterrupt and
    # checks that the model still gives its earlier answer
    code = textwrap.dedent(f"""
        import time, pocketllm
        m = pocketllm.Model({qwen3!r}, n_ctx=512, n_threads=1)
        want = m.generate("Once", max_tokens=8).ids
        n = 0
        try:
            for piece in m.stream("Once upon", max_tokens=400):
                n += 1
                if n == 2:
                    print("streaming", flush=True)
                time.sleep(0.05)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        print("usable" if m.generate("Once", max_tokens=8).ids == want else "broken", flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=os.environ)
    assert p.stdout.readline().strip() == "streaming"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert out.split() == ["interrupted", "usable"], (out, err)


def test_abi_mismatch_message(tmp_path):
    # a copy of the package that asks for a newer ABI minor than the library has
    pkg = os.path.dirname(pocketllm.__file__)
    dst = tmp_path / "pocketllm"
    shutil.copytree(pkg, dst, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    src = (dst / "_native.py").read_text()
    (dst / "_native.py").write_text(src.replace("ABI_MINOR = ", "ABI_MINOR = 999 or "))
    r = subprocess.run([sys.executable, "-c", "import pocketllm"], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert r.returncode != 0 and "ABI" in r.stderr and "2.999" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-c", "import pocketllm"], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path), POCKETLLM_LIBRARY=str(tmp_path / "none.so")))
    assert r.returncode != 0 and "none.so" in r.stderr and "POCKETLLM_LIBRARY" in r.stderr, r.stderr


def test_host_functions():
    devs = pocketllm.devices()
    assert devs[0]["id"] == "cpu" and devs[0]["memory_bytes"] > 0
    names = [b["name"] for b in pocketllm.backends()]
    assert "cpu" in names
    archs = [a["name"] for a in pocketllm.architectures()]
    assert "qwen3" in archs and "llama" in archs


def test_quantize_and_fit(qwen3, tmp_path):
    seen = []
    out = tmp_path / "q.gguf"
    pocketllm.quantize(qwen3, out, "Q8_0", progress=seen.append)
    assert out.exists() and seen and seen[-1]["tensor"] == seen[-1]["n_tensors"]
    with pocketllm.Model(out, n_ctx=128, n_threads=1) as m:
        assert m.generate("Hi", max_tokens=4).ids
    with pytest.raises(pocketllm.InvalidArgumentError):
        pocketllm.quantize(qwen3, tmp_path / "x.gguf", "Q9_Z")
    assert not (tmp_path / "x.gguf").exists()
    r = pocketllm.fit(qwen3, "1G", plan=True)
    assert r["chosen"] >= 0 and r["rows"] and r["recipe"]
