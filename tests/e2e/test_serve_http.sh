# test_serve_http.sh -- `pocketllm serve` against bad and hostile clients,
# over raw HTTP (Debian python3): malformed JSON, wrong types, out-of-range
# numbers, unknown fields and endpoints, a body over --max-body (declared
# and chunked), a prompt longer than the context, a missing or wrong API
# key -- each gets its 4xx with an OpenAI-style error naming the problem,
# and /health answers after every one of them.  Then the queue: with
# --parallel 1 --queue 1, a third request is answered 503; a waiting
# stream gets SSE keep-alive comments; clients that hang up (while
# generating, while queued, during a long prompt) free their sequence and
# their place in the queue, and the server serves the next request.  The
# chat page's files with their Content-Security-Policy; --no-webui.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16
serve_start main --model "$PL_TMP/m.gguf" --name tiny --api-key k3y --ctx 2048 --parallel 1 --queue 1 \
    --max-body 64K --keepalive 0.2 -t 1

"$PY" - "$PORT" <<'PY' >"$PL_TMP/py.out" 2>&1
import http.client, json, socket, sys, time

port = int(sys.argv[1])
failures = 0
checks = 0
AUTH = {"Authorization": "Bearer k3y", "Content-Type": "application/json"}

def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)

def request(method, path, body=None, headers=AUTH, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data

def healthy(what):
    status, data = request("GET", "/health", headers={})
    check(status == 200 and json.loads(data)["status"] == "ok", "no /health after " + what)

def expect(status_want, body, word, what, path="/v1/chat/completions", headers=AUTH):
    status, data = request("POST", path, body, headers)
    check(status == status_want, "%s: status %d, wanted %d (%r)" % (what, status, status_want, data[:200]))
    try:
        err = json.loads(data)["error"]
        check(word.lower() in (err["message"] + " " + str(err.get("param"))).lower(),
              "%s: %r does not name %r" % (what, err, word))
    except Exception as e:
        check(False, "%s: not an OpenAI error object: %r (%s)" % (what, data[:200], e))
    healthy(what)

msg = lambda extra="": '{"messages":[{"role":"user","content":"hi"}]%s}' % extra
expect(400, "{", "JSON", "malformed JSON")
expect(400, '{"messages":[{"role":"user","content":"hi"}]} trailing', "after", "trailing bytes")
expect(400, "\xff\xfe", "JSON", "binary body")
expect(400, "", "JSON", "empty body")
expect(400, '{"messages":"hi"}', "messages", "wrong type")
expect(400, msg(',"max_tokens":-5'), "max_tokens", "negative max_tokens")
expect(400, msg(',"max_tokens":"ten"'), "max_tokens", "string max_tokens")
expect(400, msg(',"n":100000'), "n", "huge n")
expect(400, msg(',"temperature":1e309'), "temperature", "infinite temperature")
expect(400, msg(',"logit_bias":{"-1":1}'), "logit_bias", "token id -1")
expect(400, msg(',"frobnicate":true'), "frobnicate", "unknown field")
expect(400, msg(',"tools":[{"type":"function","function":{"name":""}}]'), "tools", "tools")
expect(400, '{"prompt":"%s"}' % ("word " * 3000), "context", "prompt longer than the context", "/v1/completions")
expect(400, msg(',"max_tokens":5000'), "max_tokens", "prompt + max_tokens past the context")
expect(413, '{"prompt":"%s"}' % ("x" * 70000), "larger", "body over --max-body", "/v1/completions")
expect(401, msg(), "key", "no API key", headers={"Content-Type": "application/json"})
expect(401, msg(), "key", "wrong API key", headers={"Authorization": "Bearer nope"})
expect(404, msg(), "endpoint", "unknown endpoint", "/v1/engines")
status, data = request("GET", "/v1/chat/completions")
check(status == 405, "GET on a POST endpoint: %d" % status)
status, data = request("GET", "/v1/models", headers={})
check(status == 401, "models without a key: %d" % status)

# a chunked body over the limit (no Content-Length to refuse it early)
s = socket.create_connection(("127.0.0.1", port), timeout=30)
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k3y\r\nTransfer-Encoding: chunked\r\n\r\n")
chunk = b"y" * 8192
try:
    for _ in range(10):
        s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    s.sendall(b"0\r\n\r\n")
    reply = s.recv(65536)
except OSError as e:
    reply = b""
s.close()
check(reply.startswith(b"HTTP/1.1 413"), "chunked body over the limit: %r" % reply[:60])
healthy("a chunked body over the limit")

# ---- the queue and hanging up --------------------------------------------
def health():
    return json.loads(request("GET", "/health", headers={})[1])

def open_stream(content, max_tokens):
    """A streamed request on a raw socket; returns the socket once the server
    has answered with its headers."""
    body = json.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": max_tokens,
                       "temperature": 0, "stream": True}).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k3y\r\n"
              b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    return s

def wait_for(pred, what, seconds=15):
    end = time.time() + seconds
    while time.time() < end:
        h = health()
        if pred(h):
            return h
        time.sleep(0.05)
    check(False, "%s (health: %r)" % (what, health()))

a = open_stream("Tell me a very long story.", 1900)   # runs
first = a.recv(4096)
check(first.startswith(b"HTTP/1.1 200"), "the running stream: %r" % first[:40])
wait_for(lambda h: h["sequences_busy"] == 1, "the first request holds the sequence")
b = open_stream("And another one.", 1900)              # waits in the queue
wait_for(lambda h: h["requests_waiting"] == 1, "the second request waits")
status, data = request("POST", "/v1/chat/completions", msg())
check(status == 503, "queue full: status %d" % status)
check(b"busy" in data, "503 says the server is busy: %r" % data[:200])
# the waiting stream hears keep-alive comments (--keepalive 0.2)
b.settimeout(5)
got = b""
end = time.time() + 5
while b": keep-alive" not in got and time.time() < end:
    try:
        got += b.recv(4096)
    except socket.timeout:
        break
check(b"HTTP/1.1 200" in got and b": keep-alive" in got, "a queued stream gets keep-alive comments: %r" % got[:200])
# hanging up frees the place in the queue, then the sequence
b.close()
wait_for(lambda h: h["requests_waiting"] == 0, "a queued client that hangs up leaves the queue")
check(health()["sequences_busy"] == 1, "the running request is untouched")
a.close()
wait_for(lambda h: h["sequences_busy"] == 0, "a generating client that hangs up frees its sequence")

# hanging up during a long prompt (a few prefill steps of 256 tokens)
long_prompt = " ".join("word%d" % i for i in range(450))  # about 1700 tokens
c = open_stream(long_prompt, 8)
wait_for(lambda h: h["sequences_busy"] == 1, "the long prompt starts", 10)
c.close()
wait_for(lambda h: h["sequences_busy"] == 0, "a client that hangs up during the prompt frees its sequence")
# a whole (not streamed) request whose client gives up
body = json.dumps({"messages": [{"role": "user", "content": "again"}], "max_tokens": 1900, "temperature": 0}).encode()
d = socket.create_connection(("127.0.0.1", port), timeout=30)
d.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k3y\r\nContent-Length: %d\r\n\r\n%s"
          % (len(body), body))
wait_for(lambda h: h["sequences_busy"] == 1, "the whole request starts")
d.close()
wait_for(lambda h: h["sequences_busy"] == 0, "a non-streaming client that hangs up frees its sequence")

# the chat page (test_webui.sh drives it in a browser): no key needed for
# the page, which holds none; the policy lets only its own script run
for path, kind in (("/", "text/html"), ("/ui/app.js", "text/javascript"), ("/ui/markdown.js", "text/javascript"),
                   ("/ui/style.css", "text/css")):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", path)
    r = c.getresponse()
    page = r.read()
    c.close()
    csp = r.getheader("Content-Security-Policy") or ""
    check(r.status == 200 and (r.getheader("Content-Type") or "").startswith(kind) and len(page) > 100,
          "GET %s: %d %s" % (path, r.status, r.getheader("Content-Type")))
    check("script-src 'self'" in csp and "unsafe" not in csp and "default-src 'none'" in csp, "GET %s: policy %r" % (path, csp))
    check(r.getheader("X-Content-Type-Options") == "nosniff", "GET %s: nosniff" % path)
status, data = request("GET", "/ui/nothing.js", headers={})
check(status == 404, "an unknown asset: %d" % status)
status, data = request("HEAD", "/", headers={})
check(status == 200, "HEAD /: %d" % status)

# and the server still serves
status, data = request("POST", "/v1/chat/completions", msg(',"max_tokens":4,"temperature":0'))
check(status == 200 and json.loads(data)["choices"][0]["finish_reason"] in ("stop", "length"),
      "a request after all that: %d %r" % (status, data[:200]))
print("http checks: %d, failed %d" % (checks, failures))
sys.exit(1 if failures else 0)
PY
script_verdict $? "$PL_TMP/py.out" "the HTTP checks failed"
serve_stop

# --no-webui: no page, a 404 that says why
serve_start nowebui --model "$PL_TMP/m.gguf" --name tiny --ctx 256 --parallel 1 --no-webui -t 1
"$PY" - "$PORT" <<'PY' >"$PL_TMP/py2.out" 2>&1
import http.client, json, sys
fails = 0
for path in ("/", "/ui/app.js"):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    if r.status != 404 or "--no-webui" not in json.loads(body)["error"]["message"]:
        print("FAIL: --no-webui GET %s: %d %r" % (path, r.status, body[:200]))
        fails += 1
sys.exit(1 if fails else 0)
PY
script_verdict $? "$PL_TMP/py2.out" "--no-webui still serves the page"
expect_grep "chat page at /" "$PL_TMP/main.log"
ok
grep -q "chat page" "$PL_TMP/nowebui.log" && fail "--no-webui's start line still offers the chat page"
serve_stop
done_testing
