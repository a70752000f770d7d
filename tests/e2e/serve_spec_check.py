# serve_spec_check.py -- shared by test_serve_lookup.sh and
# test_serve_draft.sh: a server with speculative decoding must answer every
# request exactly as a plain server of the same model does -- text,
# finish_reason, token count, log-probabilities -- greedy, sampled with a
# seed, with logprobs, a stop string, a JSON schema, a length limit, a
# prompt longer than the batch; sent one after the other (later prompts
# share their start with earlier ones, so sequences are reused from the
# prompt cache) and all at once.  Then /health's `speculative` must name
# the way of drafting and count drafts with some kept, and /metrics must
# count them.
#
# usage: serve_spec_check.py PLAIN_PORT SPEC_PORT LOOKUP DRAFT_NAME MIN_KEPT
#   LOOKUP: the --lookup the server runs with (0: none); DRAFT_NAME: the
#   draft model's name, or "-" for none; MIN_KEPT: the least share of the
#   drafts that must be kept -- a bound the way of drafting makes certain
#   (the model as its own draft keeps about all of them); above 0, some
#   must be kept; 0: none need be (an unrelated draft model)
import http.client
import json
import sys
import threading

plain, spec = int(sys.argv[1]), int(sys.argv[2])
lookup, draft_name, min_kept = int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
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


def user(text):
    return [{"role": "user", "content": text}]


rep = "one two three four five one two three four five one two three four five"
requests = [{"messages": user("%s %s" % (rep, t)), "max_tokens": 40, "temperature": 0}
            for t in ["again", "and again", "once more", "repeat it", "go on"]]
requests += [{"messages": user("%s, %s" % (rep, t)), "max_tokens": 30, "temperature": 0.9, "top_k": 40, "seed": 5 + i}
             for i, t in enumerate(["sampled", "drawn", "random"])]
requests.append({"messages": user(rep), "max_tokens": 12, "temperature": 0, "logprobs": True, "top_logprobs": 3})
requests.append({"messages": user(rep + " stop"), "max_tokens": 40, "temperature": 0, "stop": ["e"]})
requests.append({"messages": user(rep + " json"), "max_tokens": 40, "temperature": 0,
                 "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {
                     "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}}})
# longer than a small --batch: the prompt is evaluated in chunks (and a
# draft model catches up on it in chunks)
requests.append({"messages": user(" ".join([rep] * 6) + " long"), "max_tokens": 24, "temperature": 0})
# a conversation going on: its start is held by a sequence already
requests.append({"messages": user("%s again" % rep) + [{"role": "assistant", "content": "four five"},
                                                        {"role": "user", "content": "and then?"}],
                 "max_tokens": 24, "temperature": 0.7, "seed": 1})

want = [ask(plain, b) for b in requests]
for w in want:
    check(not w[0].startswith("HTTP"), "plain server: %s" % (w,))
alone = [ask(spec, b) for b in requests]
together = [None] * len(requests)


def worker(i):
    together[i] = ask(spec, requests[i])


threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(requests))]
for t in threads:
    t.start()
for t in threads:
    t.join()
for i, w in enumerate(want):
    check(alone[i] == w, "request %d alone: %r, plain %r" % (i, alone[i][:3], w[:3]))
    check(together[i] == w, "request %d concurrent: %r, plain %r" % (i, together[i][:3], w[:3]))

h = json.loads(call(spec, "GET", "/health")[1])
sp = h.get("speculative")
print("speculative:", sp)
want_name = None if draft_name == "-" else draft_name
check(sp and sp["lookup"] == lookup and sp["draft_model"] == want_name and sp["drafted"] > 0 and
      (0 < sp["accepted"] or min_kept == 0) and sp["accepted"] <= sp["drafted"], "/health speculative: %r" % (sp,))
if sp and sp["drafted"]:
    check(abs(sp["acceptance_rate"] - sp["accepted"] / sp["drafted"]) < 1e-6, "acceptance_rate: %r" % (sp,))
    check(sp["acceptance_rate"] >= min_kept, "kept %.3f of the drafts, fewer than %.3f" % (sp["acceptance_rate"], min_kept))
check(json.loads(call(plain, "GET", "/health")[1]).get("speculative", "missing") is None,
      "a plain server's /health has speculative null")
m = call(spec, "GET", "/metrics")[1].decode()
for name, least in (("pocketllm_speculative_drafted_total", 1),
                    ("pocketllm_speculative_accepted_total", 1 if min_kept > 0 else 0)):
    line = [ln for ln in m.splitlines() if ln.startswith(name + " ")]
    check(line and int(line[0].split()[1]) >= least, "/metrics lacks %s >= %d" % (name, least))
print("%d requests, alone and concurrent, equal to the plain server's" % len(requests))
sys.exit(1 if failures else 0)
