# vulkan_lib.sh -- shared by tests/oracle/test_vulkan_*.sh: the oracle
# tests' rules (lib.sh) plus the Vulkan ones -- POCKETLLM_NO_VULKAN=1 skips
# (ctest reports it as skipped), and no usable Vulkan device fails with
# the reason.  Sets PL_DEVICE=vulkan, which forward_lib.sh passes to every
# run of ours.
. "$(dirname "$0")/lib.sh"
if [ "${POCKETLLM_NO_VULKAN:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_VULKAN=1 -- this Vulkan comparison with llama.cpp did not run" >&2
    exit 77
fi
if ! "$PL_BIN" run --model "$PL_SHARED/models/stories260K.gguf" --ids 1 -n 1 --device vulkan >"$PL_TMP/vk_probe" 2>&1; then
    echo "FAIL: no usable Vulkan device: $(tail -1 "$PL_TMP/vk_probe") (scripts/install-deps.sh installs Mesa's" \
         "lavapipe; POCKETLLM_NO_VULKAN=1 skips explicitly)" >&2
    exit 1
fi
export PL_DEVICE=vulkan
