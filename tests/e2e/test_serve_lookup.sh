# test_serve_lookup.sh -- speculative decoding in `pocketllm serve
# --lookup N`: each decoding sequence drafts by prompt lookup and verifies
# in the shared batched pass.  Every answer -- greedy, sampled with a seed,
# with log-probabilities, a stop string, a JSON schema, a length limit --
# must equal the plain server's answer to the same request (text,
# finish_reason, token count, log-probabilities), sent alone and all at
# once (--parallel 4); /health reports the drafts and the share kept (with
# prompts that repeat themselves, some are kept), /metrics counts them, a
# plain server reports none.  Bad options are refused.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16
serve_start plain --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 4 --quiet
PLAIN=$PORT PLAIN_PID=$SERVER_PID
serve_start spec --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 4 --quiet --metrics --lookup 3 \
    --draft-max 6
SPEC=$PORT

"$PY" - "$PLAIN" "$SPEC" <<'PY' >"$PL_TMP/py.out" 2>&1
import http.client, json, sys, threading

plain, spec = int(sys.argv[1]), int(sys.argv[2])
failures = 0
def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)

def call(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request(method, path, json.dumps(body) if body is not None else None, {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data

def ask(port, body):
    st, data = call(port, "POST", "/v1/chat/completions", body)
    if st != 200:
        return ("HTTP %d %s" % (st, data[:200]),)
    d = json.loads(data)
    ch = d["choices"][0]
    return (ch["message"]["content"], ch["finish_reason"], d["usage"]["completion_tokens"],
            json.dumps(ch.get("logprobs"), sort_keys=True))

rep = "one two three four five one two three four five one two three four five"
requests = [{"messages": [{"role": "user", "content": "%s %s" % (rep, t)}], "max_tokens": 40, "temperature": 0}
            for t in ["again", "and again", "once more", "repeat it", "go on"]]
requests += [{"messages": [{"role": "user", "content": "%s, %s" % (rep, t)}], "max_tokens": 30, "temperature": 0.9,
              "top_k": 40, "seed": 5 + i} for i, t in enumerate(["sampled", "drawn", "random"])]
requests.append({"messages": [{"role": "user", "content": rep}], "max_tokens": 12, "temperature": 0,
                 "logprobs": True, "top_logprobs": 3})
requests.append({"messages": [{"role": "user", "content": rep + " stop"}], "max_tokens": 40, "temperature": 0,
                 "stop": ["e"]})
requests.append({"messages": [{"role": "user", "content": rep + " json"}], "max_tokens": 40, "temperature": 0,
                 "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema":
                     {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}}})

want = [ask(plain, b) for b in requests]
for w in want:
    check(not w[0].startswith("HTTP"), "plain server: %s" % (w,))
alone = [ask(spec, b) for b in requests]
together = [None] * len(requests)
def worker(i):
    together[i] = ask(spec, requests[i])
threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(requests))]
for t in threads: t.start()
for t in threads: t.join()
for i, w in enumerate(want):
    check(alone[i] == w, "request %d alone: %r, plain %r" % (i, alone[i][:3], w[:3]))
    check(together[i] == w, "request %d concurrent: %r, plain %r" % (i, together[i][:3], w[:3]))

h = json.loads(call(spec, "GET", "/health")[1])
sp = h.get("speculative")
print("speculative:", sp)
check(sp and sp["lookup"] == 3 and sp["drafted"] > 0 and 0 < sp["accepted"] <= sp["drafted"],
      "/health speculative: %r" % (sp,))
if sp and sp["drafted"]:
    check(abs(sp["acceptance_rate"] - sp["accepted"] / sp["drafted"]) < 1e-6, "acceptance_rate: %r" % (sp,))
check(json.loads(call(plain, "GET", "/health")[1]).get("speculative", "missing") is None,
      "a plain server's /health has speculative null")
m = call(spec, "GET", "/metrics")[1].decode()
for name in ("pocketllm_speculative_drafted_total", "pocketllm_speculative_accepted_total"):
    line = [l for l in m.splitlines() if l.startswith(name + " ")]
    check(line and int(line[0].split()[1]) > 0, "/metrics lacks %s > 0" % name)
print("%d requests, alone and concurrent, equal to the plain server's" % len(requests))
sys.exit(1 if failures else 0)
PY
script_verdict $? "$PL_TMP/py.out" "serve --lookup differs from plain serving"
serve_stop
SERVER_PID=$PLAIN_PID
serve_stop

expect_rc 2 "$BIN" serve --model "$PL_TMP/m.gguf" --draft "$PL_TMP/m.gguf" && expect_grep "prompt lookup" "$PL_TMP/err"
expect_rc 2 "$BIN" serve --model "$PL_TMP/m.gguf" --lookup 9
expect_rc 2 "$BIN" serve --model "$PL_TMP/m.gguf" --lookup 2 --draft-min 4 --draft-max 2
done_testing
