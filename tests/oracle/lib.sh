# lib.sh -- shared by the oracle tests: the e2e helpers, plus the rule that
# a missing oracle fails the test (with the reason) unless
# POCKETLLM_NO_ORACLE=1 says to skip it, in which case ctest reports a skip.
# Sourced once per test: vulkan_lib.sh and mtmd_lib.sh both source it, and
# a second pass would make a second scratch folder and lose the first's trap.
[ -n "${PL_ORACLE_LIB_SOURCED:-}" ] && return 0
PL_ORACLE_LIB_SOURCED=1
. "$(dirname "$0")/../e2e/lib.sh"
if [ "${POCKETLLM_NO_ORACLE:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_ORACLE=1 -- this comparison with llama.cpp did not run" >&2
    exit 77
fi
if [ -z "${PL_ORACLE:-}" ] || [ ! -x "$PL_ORACLE" ]; then
    echo "FAIL: the llama.cpp oracle is not built (PL_ORACLE_DIR='${PL_ORACLE_DIR:-}'); run scripts/install-oracle.sh" \
         "and configure with -DPL_ORACLE_DIR=<its output>, or set POCKETLLM_NO_ORACLE=1 to skip explicitly" >&2
    exit 1
fi
ORACLE=$PL_ORACLE
LLAMA_SRC=$PL_ORACLE_DIR/src
