#!/usr/bin/env bash
# test.sh -- the whole suite from a fresh machine: install what is missing,
# build the release tree and run every test; build again with
# AddressSanitizer + UndefinedBehaviorSanitizer and run the tests there too;
# then run each fuzz target for a bounded time.  Exit status 0 only if all
# of it passed.  FUZZ_SECONDS (default 30) bounds each fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
JOBS=$(nproc)

step() { echo "==> $*" >&2; }

step "dependencies"
bash scripts/install-deps.sh

step "llama.cpp oracle"
ORACLE_DIR=
if [ "${POCKETLLM_NO_ORACLE:-0}" = 1 ]; then
  echo "POCKETLLM_NO_ORACLE=1: the comparisons with llama.cpp will report as skipped" >&2
else
  # a failure here is not fatal: the oracle tests then fail with the reason
  ORACLE_DIR=$(bash scripts/install-oracle.sh) || { echo "install-oracle failed" >&2; ORACLE_DIR=; }
fi
MTMD_DIR=
if [ -n "$ORACLE_DIR" ]; then
  step "llama.cpp's libmtmd (the multimodal oracle)"
  # not fatal either: only the tests that need libmtmd then fail, with the reason
  MTMD_DIR=$(bash scripts/install-mtmd.sh "$ORACLE_DIR") || { echo "install-mtmd failed" >&2; MTMD_DIR=; }
fi

step "release build"
PL_ORACLE_DIR=$ORACLE_DIR PL_MTMD_DIR=$MTMD_DIR bash scripts/build.sh
if [ "$(uname -m)" = aarch64 ] && [ "${POCKETLLM_NO_ARM64:-0}" != 1 ]; then
  # on an ARM64 machine the whole suite already runs natively on ARM; the
  # emulated tests are how an x86 machine checks the ARM build
  echo "native ARM64 host: the suite runs natively; the emulated ARM64 tests will report as skipped" >&2
  export POCKETLLM_NO_ARM64=1
fi
if [ "${POCKETLLM_NO_ARM64:-0}" = 1 ]; then
  echo "POCKETLLM_NO_ARM64=1: the ARM64 tests will report as skipped" >&2
else
  step "ARM64 cross build (the emulated tests' binaries)"
  # (without the Vulkan backend: its shaders are the x86 build's, and the
  # emulated tests run on the CPU; scripts/build-aarch64.sh builds it by default)
  # and only the binaries the emulated tests run, for the suite's time
  PL_AARCH64_VULKAN=OFF PL_AARCH64_TARGETS="pocketllm_cli pl_vision_encode pl_audio_tower test_quant_kernels test_ops test_cpu_tier test_matmul_batch test_moe_ops
    test_kv_packed pl_tok_tool pl_tok_gen" bash scripts/build-aarch64.sh
fi
step "release tests"
(cd build && ctest --output-on-failure -j "$JOBS")

step "sanitizer build (ASan + UBSan, clang)"
CC=clang cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPOCKETLLM_SANITIZE=ON -DPOCKETLLM_FUZZ=ON >/dev/null
cmake --build build-asan -j "$JOBS"
step "sanitizer tests"
# (the ARM64 tests run in the release tree only: they run the cross-built
# binaries, which the sanitizers do not instrument; the Vulkan batching test
# runs there only too: on lavapipe it
# takes minutes under the sanitizers, and its C paths are the CPU batching
# test's plus the Vulkan ones test_vk_* and test_vulkan_cli cover here; fit's
# two MoE tests, which walk every rung of the ladder with quantize and
# perplexity, run there only too: nine minutes under the sanitizers, for C
# paths test_fit_mmproj (fit's walk and its measurements), test_eval_cli
# (fit on a quantized source), test_serve_batch_moe (MoE passes) and
# test_vk_moe / test_moe_ops (the expert kernels) run here; the Python
# binding's tests run there only too: Debian's python3 cannot load a
# library built with the sanitizers without their runtime preloaded, and the
# C calls the binding makes are the CLI's and the server's, tested here;
# the chat page's browser test runs there only too: its C is the embedded
# files' handler, which test_serve_http fetches every file of here)
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$JOBS" -LE 'oracle|arm64' \
  -E '^e2e\.(test_vulkan_serve_batch|test_fit_moe|test_fit_plan|test_python|test_python_wheel|test_python_media|test_vulkan_python|test_webui)$')

step "the vocabulary mask under the sanitizers (the bundle's Qwen2 vocabulary)"
# (oracle.test_grammar_mask_bpe runs it in the release tree; the sanitizer
# tree has no oracle tests, and the mask walk's shortcuts are worth
# checking for memory errors on a real 151936-token vocabulary)
if [ -n "$ORACLE_DIR" ]; then
  ASAN_OPTIONS=detect_leaks=1 build-asan/pl_grammar_mask_check "$ORACLE_DIR/src/models/ggml-vocab-qwen2.gguf" \
    tests/grammar/mask/notes.json tests/grammar/mask/notes.txt tests/grammar/mask/short.json tests/grammar/mask/short.txt
elif [ "${POCKETLLM_NO_ORACLE:-0}" = 1 ]; then
  echo "SKIPPED: POCKETLLM_NO_ORACLE=1 -- no Qwen2 vocabulary for the mask check under the sanitizers" >&2
else
  echo "FAIL: the llama.cpp bundle did not install, so the mask check under the sanitizers cannot run" >&2
  exit 1
fi

step "fuzzing (${FUZZ_SECONDS}s per target, $JOBS at a time)"
# one fuzz target: seed a corpus, run it for FUZZ_SECONDS, keep its log
fuzz_one() {
  local fuzzer=$1 name corpus seeds
  name=$(basename "$fuzzer")
  corpus=$(mktemp -d /tmp/pl_corpus.XXXXXX)
  seeds="$ROOT/tests/fuzz/seeds/$name"
  if [ -f "$seeds.sh" ] && ! bash "$seeds.sh" "$corpus" "$ROOT"; then
    echo "FAIL: the seed script of $name failed" >&2
    touch "$FUZZ_LOGS/$name.failed"
  fi
  # one input may take at most 60 s (libFuzzer's default is 20 minutes:
  # a hang would hold the whole run that long before it failed); the input
  # that failed is printed in base64, to reproduce from the log alone
  mkdir -p "$FUZZ_LOGS/$name.art"
  if "$fuzzer" -max_total_time="$FUZZ_SECONDS" -timeout=60 -max_len=65536 -print_final_stats=0 \
      -artifact_prefix="$FUZZ_LOGS/$name.art/" "$corpus" >"$FUZZ_LOGS/$name.log" 2>&1; then
    echo "  $name: $(grep -E "^Done [0-9]+ runs" "$FUZZ_LOGS/$name.log" || echo done)" >&2
  else
    tail -50 "$FUZZ_LOGS/$name.log" >&2
    for art in "$FUZZ_LOGS/$name.art"/*; do
      [ -f "$art" ] || continue
      echo "the input ($(basename "$art"), $(stat -c %s "$art") bytes; base64 -d to reproduce with $fuzzer):" >&2
      head -c 16384 "$art" | base64 -w 0 >&2
      echo >&2
    done
    echo "FAIL: $name found a problem" >&2
    touch "$FUZZ_LOGS/$name.failed"
  fi
  rm -rf "$corpus"
}
FUZZ_LOGS=$(mktemp -d /tmp/pl_fuzz_logs.XXXXXX)
running=0
for fuzzer in build-asan/fuzz_*; do
  fuzz_one "$fuzzer" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
if ls "$FUZZ_LOGS"/*.failed >/dev/null 2>&1; then
  echo "FAIL: fuzzing found problems in: $(cd "$FUZZ_LOGS" && ls *.failed | sed 's/\.failed//' | tr '\n' ' ')" >&2
  exit 1
fi
rm -rf "$FUZZ_LOGS"
step "all tests passed"
