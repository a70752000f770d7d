# test_serve_metrics.sh -- GET /metrics: a 404 without `serve --metrics`;
# with it, the Prometheus text format that Debian's python3-prometheus-client
# parses, and counters that move by exactly what each request did
# (serve_metrics_check.py: requests and errors by status, prompt and
# generated tokens against the usage answered, prompt-cache hits,
# embeddings, latency histograms' counts, idle gauges).  Model: a
# random-weight Qwen3 (tiny shape) with the real tokenizer and template.
. "$(dirname "$0")/serve_lib.sh"
"$PY" -c "import prometheus_client.parser" 2>/dev/null || {
    echo "FAIL: Debian's python3-prometheus-client is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
}
serve_bundle
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16

serve_start plain --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 1 -t 1
"$PY" - "$PORT" <<'PY' >"$PL_TMP/plain.out" 2>&1
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request("GET", "/metrics")
r = c.getresponse()
body = r.read().decode()
sys.exit(0 if r.status == 404 and "no such endpoint" in body else "without --metrics: %d %r" % (r.status, body[:200]))
PY
script_verdict $? "$PL_TMP/plain.out" "GET /metrics without --metrics is not a 404"
serve_stop

serve_start metrics --model "$PL_TMP/m.gguf" --name tiny --ctx 512 --parallel 2 --queue 3 -t 1 --metrics \
    --api-key k3y --pooling last
expect_grep "/metrics" "$SERVER_LOG"
"$PY" "$(dirname "$0")/serve_metrics_check.py" "$PORT" k3y >"$PL_TMP/check.out" 2>&1
script_verdict $? "$PL_TMP/check.out" "the /metrics checks failed"
ok
grep -q "metrics check: [0-9]* checks, 0 failed" "$PL_TMP/check.out" || fail "the metrics check did not report its checks"
serve_stop
done_testing
