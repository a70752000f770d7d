#!/usr/bin/python3
# python_overhead.py -- what the Python binding costs: decode tokens/s of
# pocketllm.Model.stream against `pocketllm run` on the same file, threads
# and prompt, interleaved round by round so both see the same machine load.
# The CLI's rate is its own --timings figure (tokens generated after the
# prefill, over their time); the binding's is the same span: from the
# first streamed piece (the prefill done) to the last, over the tokens
# decoded in it.  Prints each round and the ratio of the medians (binding /
# CLI); the goal is within 3%.
#
#   bench/python_overhead.py [--build DIR] [--model FILE | --synth] [-t N] [-n N] [--rounds N]
#
#   --synth   a random-weight Qwen3-0.6B at Q4_K_M with the real Qwen2
#             vocabulary (pocketllm synth; the llama.cpp bundle from
#             scripts/install-oracle.sh), made in --workdir and reused
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli_rate(binary, model, prompt, n, threads):
    r = subprocess.run([binary, "run", "-m", model, "-p", prompt, "-n", str(n), "-t", str(threads), "--timings",
                        "--ctx", "1024"], capture_output=True, text=True, check=True)
    m = re.search(r"generated (\d+) in ([0-9.]+) s \(([0-9.]+) tok/s\)", r.stderr)
    if not m:
        sys.exit("python_overhead: no timings from pocketllm run: " + r.stderr[-400:])
    return float(m.group(3)), int(m.group(1))


def py_rate(model, prompt, n):
    t_first = None
    pieces = 0
    for _ in model.stream(prompt, max_tokens=n):
        pieces += 1
        if t_first is None:
            t_first = time.perf_counter()
    t_end = time.perf_counter()
    return t_first, t_end


def main():
    ap = argparse.ArgumentParser(description="decode tokens/s of Model.stream against pocketllm run")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--model")
    ap.add_argument("--synth", action="store_true")
    ap.add_argument("--workdir", default="/tmp/pocketllm-compare")
    ap.add_argument("-t", type=int, default=2)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prompt", default="Once upon a time, in a land far away, there lived")
    a = ap.parse_args()
    binary = os.path.join(a.build, "pocketllm")
    os.environ.setdefault("POCKETLLM_LIBRARY", os.path.join(a.build, "libpocketllm.so"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import pocketllm
    model = a.model
    if a.synth or not model:
        bundle = subprocess.run(["bash", os.path.join(ROOT, "scripts", "install-oracle.sh")], capture_output=True,
                                text=True, check=True).stdout.strip()
        os.makedirs(a.workdir, exist_ok=True)
        model = os.path.join(a.workdir, "qwen3-0.6b-Q4_K_M-qwen2vocab.gguf")
        if not os.path.exists(model):
            subprocess.run([binary, "synth", "--shape", "qwen3-0.6b", "--type", "Q4_K_M", "--quiet", "--vocab",
                            os.path.join(bundle, "src", "models", "ggml-vocab-qwen2.gguf"), model], check=True)
    m = pocketllm.Model(model, n_ctx=1024, n_threads=a.t)
    n_tok = len(m.generate(a.prompt, max_tokens=a.n).ids)  # (warm, and the tokens a run makes)
    cli, py = [], []
    for r in range(a.rounds):
        c, c_n = cli_rate(binary, model, a.prompt, a.n, a.t)
        t_first, t_end = py_rate(m, a.prompt, a.n)
        p = (n_tok - 1) / (t_end - t_first)
        cli.append(c)
        py.append(p)
        print(f"round {r + 1}: pocketllm run {c:.2f} tok/s ({c_n} tokens), Model.stream {p:.2f} tok/s "
              f"({n_tok} tokens)", flush=True)
    ratio = statistics.median(py) / statistics.median(cli)
    print(f"{os.path.basename(model)}, -t {a.t}, tg{a.n}: Model.stream / pocketllm run = {ratio:.3f} "
          f"(medians {statistics.median(py):.2f} / {statistics.median(cli):.2f} tok/s)")


if __name__ == "__main__":
    main()
