#!/usr/bin/env bash
# serve_batch.sh -- what continuous batching buys `pocketllm serve`: the
# aggregate generated tokens per second of N greedy completion requests sent
# one at a time, then all at once to a server with --parallel P, rounds
# interleaved so that both see the same machine load (the best round of
# each counts).  Information only; never a pass/fail test (the suite checks
# that requests are batched, from the server's pass counters, in
# tests/e2e/test_serve_batch.sh).
#
# usage: bench/serve_batch.sh BUILD_DIR [SHAPE:TYPE] [PARALLEL] [REQUESTS] [MAX_TOKENS] [ROUNDS]
#   defaults: small:f16 4 16 32 2; SHAPE is a `pocketllm synth` shape, TYPE
#   f32|f16|bf16 or a quantize type (Q4_K_M, ...)
set -euo pipefail
B=${1:?usage: serve_batch.sh BUILD_DIR [SHAPE:TYPE] [PARALLEL] [REQUESTS] [MAX_TOKENS] [ROUNDS]}
SPEC=${2:-small:f16}
PAR=${3:-4}
NREQ=${4:-16}
MAXTOK=${5:-32}
ROUNDS=${6:-2}
P=$B/pocketllm
[ -x "$P" ] || { echo "no $P: build first" >&2; exit 1; }
SHAPE=${SPEC%%:*} TYPE=${SPEC#*:}
D=$(mktemp -d /tmp/pl_bench_serve.XXXXXX)
trap 'kill "${PID:-}" 2>/dev/null; rm -rf "$D"' EXIT
case "$TYPE" in
f32 | f16 | bf16) "$P" synth --quiet --shape "$SHAPE" --type "$TYPE" "$D/m.gguf" ;;
*)
    "$P" synth --quiet --shape "$SHAPE" --type f16 "$D/f16.gguf"
    "$P" quantize --quiet "$D/f16.gguf" "$D/m.gguf" "$TYPE"
    rm -f "$D/f16.gguf"
    ;;
esac
"$P" serve --model "$D/m.gguf" --port 0 --ctx 512 --parallel "$PAR" --queue $((NREQ + 8)) --quiet 2>"$D/log" &
PID=$!
PORT=
for _ in $(seq 1 600); do
    PORT=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$D/log" 2>/dev/null | head -1 | sed 's/.*://') || true
    [ -n "$PORT" ] && break
    kill -0 "$PID" 2>/dev/null || { echo "the server did not start: $(tail -3 "$D/log")" >&2; exit 1; }
    sleep 0.1
done
[ -n "$PORT" ] || { echo "the server did not start" >&2; exit 1; }
echo "model: synth $SHAPE $TYPE; --parallel $PAR; $NREQ requests of $MAXTOK tokens; load: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$PORT" "$NREQ" "$MAXTOK" "$ROUNDS" <<'PY'
import http.client, json, sys, threading, time
port, nreq, maxtok, rounds = (int(a) for a in sys.argv[1:5])
bodies = [{"prompt": "Story %d: once upon a time" % i, "max_tokens": maxtok, "temperature": 0}
           for i in range(nreq)]

def ask(body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    d = json.loads(r.read())
    c.close()
    if r.status != 200:
        raise SystemExit("HTTP %d: %s" % (r.status, d))
    return d["usage"]["completion_tokens"]

def alone():
    return sum(ask(b) for b in bodies)

def together():
    out = [0] * nreq
    def w(i):
        out[i] = ask(bodies[i])
    ts = [threading.Thread(target=w, args=(i,)) for i in range(nreq)]
    for t in ts: t.start()
    for t in ts: t.join()
    return sum(out)

best = {"alone": 0.0, "together": 0.0}
for r in range(rounds):
    for name, f in (("alone", alone), ("together", together)):
        t0 = time.time()
        n = f()
        rate = n / (time.time() - t0)
        best[name] = max(best[name], rate)
        print("round %d %-8s %5d tokens  %8.1f tok/s" % (r + 1, name, n, rate))
print("best: one at a time %.1f tok/s, concurrent %.1f tok/s: %.2fx" %
      (best["alone"], best["together"], best["together"] / best["alone"]))
PY
