# test_vulkan_python.sh -- the Python binding on the Vulkan backend
# (lavapipe in CI): Model(device="vulkan") opens on the device, says so,
# and greedy generate gives `pocketllm run --device vulkan`'s ids on
# stories260K; logits equal `pocketllm logits --device vulkan`'s bytes.
# POCKETLLM_NO_VULKAN=1 skips it (exit 77); without a usable device it fails.
if [ "${POCKETLLM_NO_VULKAN:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_VULKAN=1 -- the binding's Vulkan test did not run" >&2
    exit 77
fi
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
MODEL=$PL_SHARED/models/stories260K.gguf
[ -f "$MODEL" ] || { echo "FAIL: $MODEL is missing (the shared models folder)" >&2; exit 1; }
expect_rc 0 "$PL_BIN" run -m "$MODEL" -p "Once upon a time" -n 24 -t 1 --device vulkan --print-ids || { done_testing; exit 1; }
want=$(tail -1 "$PL_TMP/out")
expect_rc 0 "$PL_BIN" logits -m "$MODEL" -p "Once upon a time" -t 1 --device vulkan --out "$PL_TMP/l.bin" ||
    { done_testing; exit 1; }
POCKETLLM_LIBRARY=$PL_LIB PYTHONPATH=$PL_SRC/python "$PY" - "$MODEL" "$PL_TMP/l.bin" >"$PL_TMP/py.out" 2>&1 <<'PYEOF'
import sys, pocketllm
model, logits = sys.argv[1], sys.argv[2]
assert any(d["id"].startswith("vulkan:") and d["usable"] for d in pocketllm.devices()), pocketllm.devices()
with pocketllm.Model(model, device="vulkan", n_threads=1) as m:
    assert m.device.startswith("vulkan:"), m.device
    got = m.logits("Once upon a time")
    data = got.tobytes() if hasattr(got, "tobytes") else b"".join(r.tobytes() for r in got)
    assert data == open(logits, "rb").read(), "the logits differ from pocketllm logits --device vulkan"
    print(" ".join(map(str, m.generate("Once upon a time", max_tokens=24).ids)))
PYEOF
script_verdict $? "$PL_TMP/py.out" "the binding on Vulkan failed"
[ "$(tail -1 "$PL_TMP/py.out")" = "$want" ] || fail "generate on Vulkan: $(tail -1 "$PL_TMP/py.out") vs run's $want"
ok
done_testing
