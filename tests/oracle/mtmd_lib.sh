# mtmd_lib.sh -- shared by the tests against llama.cpp's libmtmd
# (test_mtmd_*.sh, test_image_prep.sh): the oracle tests' rules (lib.sh),
# plus pl_mtmd -- the program over libmtmd -- which, when missing, fails
# the test with the reason (POCKETLLM_NO_ORACLE=1 skips, as lib.sh says).
. "$(dirname "$0")/lib.sh"
if [ -z "${PL_MTMD:-}" ] || [ ! -x "$PL_MTMD" ]; then
    echo "FAIL: pl_mtmd (llama.cpp's libmtmd) is not built (PL_MTMD_DIR='${PL_MTMD_DIR:-}'); run" \
         "scripts/install-mtmd.sh \"\$(scripts/install-oracle.sh)\" and configure with -DPL_MTMD_DIR=<its output>," \
         "or set POCKETLLM_NO_ORACLE=1 to skip explicitly" >&2
    exit 1
fi
