# serve_metrics_check.py -- GET /metrics of `pocketllm serve --metrics`
# (run by test_serve_metrics.sh with Debian's python3): the page must parse
# with the Prometheus client's own text-format parser
# (prometheus_client.parser.text_string_to_metric_families), every family
# named pocketllm_* with its HELP and TYPE, histograms cumulative, and the
# counters must move by exactly what each request did: requests by endpoint
# and status, errors by status, prompt and generated tokens (against the
# usage the server answered), prompt-cache hits and reused tokens (a prompt
# sent twice), embeddings, the time-to-first-token and between-token
# histograms' counts; the gauges when idle.  Arguments: PORT API_KEY.
import http.client
import json
import sys
import time

from prometheus_client.parser import text_string_to_metric_families

port, key = int(sys.argv[1]), sys.argv[2]
checks = failures = 0
AUTH = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


def request(method, path, body=None, headers=AUTH):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    ctype = r.getheader("Content-Type")
    c.close()
    return r.status, data, ctype


def scrape():
    """{(sample name, frozenset(labels)): value}, and the families by name."""
    status, data, ctype = request("GET", "/metrics", headers={})  # no key needed, like /health
    check(status == 200, "GET /metrics: %d" % status)
    check(ctype and ctype.startswith("text/plain; version=0.0.4"), "content type %r" % ctype)
    text = data.decode()
    samples, families = {}, {}
    for fam in text_string_to_metric_families(text):
        families[fam.name] = fam
        for s in fam.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples, families, text


def val(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def moved(before, after, name, want, what, **labels):
    d = val(after, name, **labels) - val(before, name, **labels)
    check(d == want, "%s: %s%s moved by %g, wanted %g" % (what, name, labels or "", d, want))


def until(pred, what):
    """Counters of a stream are added when its connection ends: poll a little."""
    for _ in range(100):
        s = scrape()[0]
        if pred(s):
            return s
        time.sleep(0.05)
    check(False, what)
    return scrape()[0]


# ---- the page itself ------------------------------------------------------------
s0, fams, text = scrape()
for line in text.splitlines():
    if line.startswith("#"):
        check(line.split()[1] in ("HELP", "TYPE") and line.split()[2].startswith("pocketllm_"), "comment line %r" % line)
    elif line:
        check(line.startswith("pocketllm_"), "sample line %r" % line)
want_types = {
    "pocketllm_requests": "counter", "pocketllm_errors": "counter", "pocketllm_prompt_tokens": "counter",
    "pocketllm_prompt_cache_hits": "counter", "pocketllm_prompt_cache_misses": "counter",
    "pocketllm_prompt_cache_tokens": "counter", "pocketllm_generated_tokens": "counter",
    "pocketllm_embedding_inputs": "counter", "pocketllm_embedding_tokens": "counter",
    "pocketllm_time_to_first_token_seconds": "histogram", "pocketllm_time_per_output_token_seconds": "histogram",
    "pocketllm_request_duration_seconds": "histogram", "pocketllm_queue_depth": "gauge",
    "pocketllm_queue_capacity": "gauge", "pocketllm_slots_busy": "gauge", "pocketllm_slots_total": "gauge",
    "pocketllm_forward_passes": "counter", "pocketllm_tokens_evaluated": "counter",
}
for name, typ in want_types.items():
    check(name in fams and fams[name].type == typ,
          "family %s of type %s: %s" % (name, typ, fams[name].type if name in fams else "missing"))
    check(name not in fams or fams[name].documentation, "family %s has no HELP text" % name)
check(val(s0, "pocketllm_slots_total") == 2, "slots_total is --parallel 2")
check(val(s0, "pocketllm_queue_capacity") == 3, "queue_capacity is --queue 3")

# ---- a completion, then the same prompt again: the cache --------------------------
body = json.dumps({"prompt": "The history of the sea, told slowly:", "max_tokens": 8, "temperature": 0})
st, data, _ = request("POST", "/v1/completions", body)
check(st == 200, "completion: %d %r" % (st, data[:200]))
u1 = json.loads(data)["usage"] if st == 200 else {"prompt_tokens": 0, "completion_tokens": 0}
s1 = scrape()[0]
moved(s0, s1, "pocketllm_requests_total", 1, "a completion", endpoint="/v1/completions", status="200")
moved(s0, s1, "pocketllm_prompt_tokens_total", u1["prompt_tokens"], "a completion")
moved(s0, s1, "pocketllm_generated_tokens_total", u1["completion_tokens"], "a completion")
moved(s0, s1, "pocketllm_prompt_cache_misses_total", 1, "a completion")
moved(s0, s1, "pocketllm_prompt_cache_hits_total", 0, "a completion")
moved(s0, s1, "pocketllm_time_to_first_token_seconds_count", 1, "a completion")
moved(s0, s1, "pocketllm_time_per_output_token_seconds_count", u1["completion_tokens"] - 1, "a completion")
moved(s0, s1, "pocketllm_request_duration_seconds_count", 2, "a completion (and the scrape before it)")
check(val(s1, "pocketllm_forward_passes_total") > val(s0, "pocketllm_forward_passes_total"), "forward passes moved")
check(val(s1, "pocketllm_tokens_evaluated_total") - val(s0, "pocketllm_tokens_evaluated_total") >= u1["prompt_tokens"],
      "tokens evaluated moved by at least the prompt")

st, data, _ = request("POST", "/v1/completions", body)
u2 = json.loads(data)["usage"] if st == 200 else {"prompt_tokens": 0}
s2 = scrape()[0]
moved(s1, s2, "pocketllm_prompt_cache_hits_total", 1, "the same prompt again")
# (its last token is evaluated again, for its logits)
moved(s1, s2, "pocketllm_prompt_cache_tokens_total", u2["prompt_tokens"] - 1, "the same prompt again")
moved(s1, s2, "pocketllm_requests_total", 1, "the same prompt again", endpoint="/v1/completions", status="200")

# ---- a streamed chat: counted when its stream ends ---------------------------------
chat = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 6, "temperature": 0, "stream": True,
                   "stream_options": {"include_usage": True}})
st, data, _ = request("POST", "/v1/chat/completions", chat)
usage = None
for line in data.decode().splitlines():
    if line.startswith("data: {") and '"usage"' in line:
        u = json.loads(line[6:]).get("usage")
        usage = u or usage
check(st == 200 and usage, "streamed chat: %d, usage %r" % (st, usage))
usage = usage or {"prompt_tokens": 0, "completion_tokens": 0}
s3 = until(lambda s: val(s, "pocketllm_requests_total", endpoint="/v1/chat/completions", status="200")
           > val(s2, "pocketllm_requests_total", endpoint="/v1/chat/completions", status="200"),
           "the streamed chat is never counted")
moved(s2, s3, "pocketllm_requests_total", 1, "a streamed chat", endpoint="/v1/chat/completions", status="200")
moved(s2, s3, "pocketllm_generated_tokens_total", usage["completion_tokens"], "a streamed chat")
moved(s2, s3, "pocketllm_prompt_tokens_total", usage["prompt_tokens"], "a streamed chat")

# ---- embeddings ------------------------------------------------------------------------
st, data, _ = request("POST", "/v1/embeddings", json.dumps({"input": ["one", "two words"], "encoding_format": "float"}))
check(st == 200, "embeddings: %d %r" % (st, data[:200]))
eu = json.loads(data)["usage"] if st == 200 else {"prompt_tokens": 0}
s4 = scrape()[0]
moved(s3, s4, "pocketllm_embedding_inputs_total", 2, "embeddings")
moved(s3, s4, "pocketllm_embedding_tokens_total", eu["prompt_tokens"], "embeddings")
moved(s3, s4, "pocketllm_requests_total", 1, "embeddings", endpoint="/v1/embeddings", status="200")
moved(s3, s4, "pocketllm_generated_tokens_total", 0, "embeddings")

# ---- errors by status -------------------------------------------------------------------
request("POST", "/v1/completions", '{"prompt":"x","max_tokens":-3}')          # 400
request("POST", "/v1/embeddings", '{"input":"x","bogus":1}')                  # 400
request("POST", "/v1/completions", '{"prompt":"x"}', {"Authorization": "Bearer wrong"})  # 401
request("GET", "/no/such/thing")                                               # 404
request("GET", "/v1/chat/completions")                                         # 405
s5 = scrape()[0]
moved(s4, s5, "pocketllm_errors_total", 2, "two bad requests", status="400")
moved(s4, s5, "pocketllm_errors_total", 1, "a wrong key", status="401")
moved(s4, s5, "pocketllm_errors_total", 1, "an unknown path", status="404")
moved(s4, s5, "pocketllm_errors_total", 1, "a GET of a POST endpoint", status="405")
moved(s4, s5, "pocketllm_requests_total", 1, "a bad embeddings request", endpoint="/v1/embeddings", status="400")
moved(s4, s5, "pocketllm_requests_total", 1, "an unknown path", endpoint="other", status="404")
moved(s4, s5, "pocketllm_requests_total", 1, "scrapes", endpoint="/metrics", status="200")
moved(s4, s5, "pocketllm_prompt_tokens_total", 0, "refused requests")

# ---- histograms and gauges ---------------------------------------------------------------
_, fams, _ = scrape()
for name in ("pocketllm_time_to_first_token_seconds", "pocketllm_time_per_output_token_seconds",
             "pocketllm_request_duration_seconds"):
    buckets = [(float(s.labels["le"]), s.value) for s in fams[name].samples if s.name == name + "_bucket"]
    count = [s.value for s in fams[name].samples if s.name == name + "_count"]
    check(buckets and buckets[-1][0] == float("inf") and count and buckets[-1][1] == count[0],
          "%s: +Inf bucket equals the count" % name)
    check(all(a[1] <= b[1] and a[0] < b[0] for a, b in zip(buckets, buckets[1:])), "%s: buckets cumulative" % name)
s6 = scrape()[0]
check(val(s6, "pocketllm_slots_busy") == 0 and val(s6, "pocketllm_queue_depth") == 0, "idle: no busy slot, empty queue")

print("metrics check: %d checks, %d failed" % (checks, failures))
sys.exit(1 if failures else 0)
