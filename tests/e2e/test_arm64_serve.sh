# test_arm64_serve.sh -- one server round trip on the ARM64 build: `serve`
# under qemu (dotprod tier) answers a greedy completion and a chat
# completion over loopback, and its answers are the x86 server's for the
# same requests on the same random-weight Qwen3 in Q4_K_M (real tokenizer
# and template).
. "$(dirname "$0")/serve_lib.sh"
. "$(dirname "$0")/arm64_lib.sh"
serve_bundle
serve_model "$PL_TMP/f16.gguf" --shape tiny --type f16
X86_BIN=$BIN
# Q4_K_M: the k-quant tiles prefill the prompt, the rows kernels decode
expect_rc 0 "$BIN" quantize --quiet "$PL_TMP/f16.gguf" "$PL_TMP/m.gguf" Q4_K_M || exit 1

ask() { # ask PORT OUT: a completion and a chat completion, their texts in OUT
    "$PY" - "$1" >"$2" <<'PY'
import http.client, json, sys
port = int(sys.argv[1])
def post(path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    assert r.status == 200, (path, r.status, data[:300])
    return json.loads(data)
a = post("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 12, "temperature": 0})
assert a["usage"]["completion_tokens"] == 12, a["usage"]
print(json.dumps(a["choices"][0]["text"]))
b = post("/v1/chat/completions", {"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 10, "temperature": 0})
print(json.dumps(b["choices"][0]["message"]["content"]), b["choices"][0]["finish_reason"])
PY
}

BIN=$(arm_wrap "$ARM_CPU_DOTPROD" pocketllm)
serve_start arm --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 1 -t 1
ask "$PORT" "$PL_TMP/arm.txt"
script_verdict $? "$PL_TMP/arm.txt" "the ARM64 server's round trip failed"
serve_stop

BIN=$X86_BIN
serve_start x86 --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 1 -t 1
ask "$PORT" "$PL_TMP/x86.txt"
script_verdict $? "$PL_TMP/x86.txt" "the x86 server's round trip failed"
serve_stop
ok
cmp -s "$PL_TMP/arm.txt" "$PL_TMP/x86.txt" ||
    fail "the ARM64 server answered '$(cat "$PL_TMP/arm.txt")', the x86 one '$(cat "$PL_TMP/x86.txt")'"
done_testing
