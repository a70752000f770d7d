# test_serve_batch.sh -- continuous batching in `pocketllm serve`: 16 greedy
# chat requests (and 4 seeded sampled ones) sent one at a time, then all at
# once to a server with --parallel 4, twice over.  Every concurrent answer
# must be identical to the same request's answer alone (text,
# finish_reason, token count), and the second round to the first (by then
# the sequences hold earlier prompts, whose shared start is reused):
# batched decoding computes each sequence exactly as alone.
#
# That the concurrent requests really were decoded together is checked
# from the server's own counters (GET /health: forward passes run, most
# sequences in one pass), not from a clock: with four sequences per pass
# the concurrent round needs well under 0.6 times the passes of the
# one-at-a-time round for the same tokens.  The aggregate tokens per second
# of both rounds are printed as information only -- timings never decide a
# test here (bench/serve_batch.sh measures them).
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
# PL_SERVE_SYNTH: the model's synth arguments (test_serve_batch_moe.sh: a mixture of experts)
serve_model "$PL_TMP/m.gguf" ${PL_SERVE_SYNTH:---shape small --type f16}
# PL_SERVE_DEVICE=vulkan: the same test with the model on that device
# (test_vulkan_serve_batch.sh)
# PL_SERVE_ARGS: more server options (test_serve_batch_kv.sh: packed KV caches)
# shellcheck disable=SC2086
serve_start main --model "$PL_TMP/m.gguf" --name small --ctx 256 --parallel 4 --queue 32 --quiet \
    ${PL_SERVE_DEVICE:+--device "$PL_SERVE_DEVICE"} ${PL_SERVE_ARGS:-}

# PL_SERVE_TOPICS: how many of the 16 greedy requests (a slow device runs fewer)
"$PY" - "$PORT" "${PL_SERVE_TOPICS:-16}" <<'PY' >"$PL_TMP/py.out" 2>&1
import http.client, json, sys, threading, time

port = int(sys.argv[1])
failures = 0
def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)

topics = ["the sea", "mountains", "a red fox", "winter", "bread", "the moon", "rivers", "a lost key",
          "old trains", "bees", "a lighthouse", "rain", "chess", "a violin", "deserts", "the first snow"]
requests = [{"messages": [{"role": "user", "content": "Write about %s." % t}], "max_tokens": 16, "temperature": 0}
            for t in topics[:int(sys.argv[2])]]
requests += [{"messages": [{"role": "user", "content": "Say something about %s." % t}], "max_tokens": 16,
              "temperature": 0.8, "top_k": 40, "seed": 11 + i} for i, t in enumerate(topics[:4])]

def ask(body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    if r.status != 200:
        return ("HTTP %d %s" % (r.status, data[:200]), None, 0)
    d = json.loads(data)
    ch = d["choices"][0]
    return (ch["message"]["content"], ch["finish_reason"], d["usage"]["completion_tokens"])

def health():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", "/health")
    d = json.loads(c.getresponse().read())
    c.close()
    return d

passes = {"alone": 0, "together": 0}
def counted(kind, f):
    before = health()["forward_passes"]
    r = f()
    passes[kind] += health()["forward_passes"] - before
    return r

def one_at_a_time():
    t0 = time.time()
    out = [ask(b) for b in requests]
    return out, time.time() - t0

def all_at_once():
    out = [None] * len(requests)
    def worker(i):
        out[i] = ask(requests[i])
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(requests))]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, time.time() - t0

# two rounds of each, interleaved; the best time of each counts, so that a
# burst of load from elsewhere on the machine does not decide the check
alone, t_alone = counted("alone", one_at_a_time)
together, t_together = counted("together", all_at_once)
alone2, t2 = counted("alone", one_at_a_time)
together2, t4 = counted("together", all_at_once)
check(alone2 == alone, "one at a time, the second round differs from the first")
check(together2 == together, "all at once, the second round differs from the first")
t_alone, t_together = min(t_alone, t2), min(t_together, t4)

for i, (a, b) in enumerate(zip(alone, together)):
    check(a[1] is not None, "request %d failed alone: %s" % (i, a[0]))
    check(b[1] is not None, "request %d failed beside others: %s" % (i, b[0]))
    check(a == b, "request %d: alone %r, beside others %r" % (i, a, b))
distinct = set(a[0] for a in alone)
# (a random-weight model maps many prompts to one answer: 3 in 10 distinct)
check(len(distinct) >= max(4, 3 * len(requests) // 10), "the prompts give different answers (%d distinct of %d)" % (len(distinct), len(requests)))

tokens = sum(a[2] for a in alone)
rate_alone = tokens / t_alone
rate_together = sum(b[2] for b in together) / t_together
print("one at a time: %d tokens in %.2f s = %.1f tok/s" % (tokens, t_alone, rate_alone))
print("%d concurrent, --parallel 4: %d tokens in %.2f s = %.1f tok/s (%.2fx)"
      % (len(requests), sum(b[2] for b in together), t_together, rate_together, rate_together / rate_alone))
most = health()["most_sequences_in_a_pass"]
print("forward passes: %d one at a time, %d concurrent (%.2fx); most sequences in one pass: %d"
      % (passes["alone"], passes["together"], passes["together"] / max(passes["alone"], 1), most))
check(most == 4, "no forward pass served all 4 sequences")
check(passes["together"] < 0.6 * passes["alone"],
      "the concurrent rounds took %d forward passes, the one-at-a-time rounds %d: not decoded together"
      % (passes["together"], passes["alone"]))
print("(the rates above are information only)")
sys.exit(1 if failures else 0)
PY
script_verdict $? "$PL_TMP/py.out" "the batching checks failed"
serve_stop
done_testing
