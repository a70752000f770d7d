"""spec_chi2.py -- speculative sampling keeps the target's distribution:
for seeds 1..N, `pocketllm run` samples a few tokens plainly and with
speculation (ARGS of each mode); for each generated position after the
first, a chi-squared test of homogeneity compares the two samples' token
counts (tokens seen fewer than 10 times in both pooled into one cell).
Fails when a p-value is below THRESHOLD (fixed seeds: the same verdict on
every run).  The p-value uses the Wilson-Hilferty approximation of the
chi-squared tail (no SciPy in Debian's base python3).

usage: spec_chi2.py BIN MODEL PROMPT N_SEEDS THRESHOLD -- PLAIN_ARGS -- SPEC_ARGS
"""
import math
import subprocess
import sys
from collections import Counter


def sample(binary, model, prompt, seeds, args):
    out = []
    for seed in range(1, seeds + 1):
        r = subprocess.run([binary, "run", "-m", model, "-p", prompt, "-t", "1", "--print-ids", "--seed", str(seed)] + args,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("run %s failed: %s" % (" ".join(args), r.stderr.strip()[-300:]))
        out.append([int(x) for x in r.stdout.strip().splitlines()[-1].split()])
    return out


def chi2_p(a, b):
    """p-value of homogeneity of two count tables (Counter) and the df."""
    na, nb = sum(a.values()), sum(b.values())
    cells, pool_a, pool_b = [], 0, 0
    for t in set(a) | set(b):
        if a[t] + b[t] >= 10:
            cells.append((a[t], b[t]))
        else:
            pool_a, pool_b = pool_a + a[t], pool_b + b[t]
    if pool_a + pool_b > 0:
        cells.append((pool_a, pool_b))
    if len(cells) < 2:
        return 1.0, 0
    x = 0.0
    for ca, cb in cells:
        tot = ca + cb
        ea, eb = tot * na / (na + nb), tot * nb / (na + nb)
        x += (ca - ea) ** 2 / ea + (cb - eb) ** 2 / eb
    df = len(cells) - 1
    z = ((x / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2)), df


def main():
    binary, model, prompt, seeds, threshold = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    rest = sys.argv[6:]
    assert rest[0] == "--" and "--" in rest[1:], "PLAIN_ARGS and SPEC_ARGS each after --"
    k = rest[1:].index("--") + 1
    plain_args, spec_args = rest[1:k], rest[k + 1:]
    plain = sample(binary, model, prompt, seeds, plain_args)
    spec = sample(binary, model, prompt, seeds, spec_args)
    worst = 1.0
    n_pos = min(len(x) for x in plain + spec)
    for pos in range(1, n_pos):
        a = Counter(x[pos] for x in plain)
        b = Counter(x[pos] for x in spec)
        p, df = chi2_p(a, b)
        print("position %d: %d distinct tokens, chi-squared df %d, p = %.4f" % (pos, len(set(a) | set(b)), df, p))
        worst = min(worst, p)
    if n_pos < 2:
        sys.exit("FAIL: fewer than 2 generated tokens to compare")
    if worst < threshold:
        sys.exit("FAIL: the speculative samples' distribution differs from plain sampling's (p = %.2g < %g)" % (worst, threshold))
    print("ok: smallest p = %.4f >= %g" % (worst, threshold))


main()
