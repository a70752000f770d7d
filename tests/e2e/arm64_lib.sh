# arm64_lib.sh -- shared by the ARM64 tests (tests/*/test_arm64_*.sh): the
# cross-built tree (scripts/build-aarch64.sh, $PL_ARM_BUILD) run under
# Debian's qemu-aarch64-static with a chosen CPU model.  POCKETLLM_NO_ARM64=1
# skips (ctest reports a skip); a missing build or emulator fails with the
# reason.  Source after lib.sh.
if [ "${POCKETLLM_NO_ARM64:-0}" = 1 ]; then
    echo "SKIPPED: POCKETLLM_NO_ARM64=1 -- this ARM64 test did not run" >&2
    exit 77
fi
ARM_BUILD=${PL_ARM_BUILD:-$PL_SRC/build-aarch64}
QEMU=$(command -v qemu-aarch64-static || true)
[ -n "$QEMU" ] || { echo "FAIL: qemu-aarch64-static not found (scripts/build-aarch64.sh installs qemu-user-static)" >&2; exit 1; }
[ -x "$ARM_BUILD/pocketllm" ] ||
    { echo "FAIL: no ARM64 build in $ARM_BUILD (run scripts/build-aarch64.sh, or point PL_ARM_BUILD at one)" >&2; exit 1; }
# CPU models that select each tier: a Cortex-A53 has NEON only, a Cortex-A76
# adds dotprod, qemu's "max" adds i8mm (and everything else)
ARM_CPU_NEON=cortex-a53
ARM_CPU_DOTPROD=cortex-a76
ARM_CPU_I8MM=max

# arm_wrap CPU PROGRAM [ENV=VALUE...] : prints the path of a script that runs
# $ARM_BUILD/PROGRAM under qemu with that CPU model (and the environment
# settings given), so it can stand wherever a test expects one executable
arm_wrap() {
    local cpu=$1 prog=$2
    shift 2
    local w=$PL_TMP/arm-$cpu-$prog${1:+-$(echo "$*" | tr -c 'A-Za-z0-9' _)}
    {
        echo '#!/bin/sh'
        for kv in "$@"; do echo "export $kv"; done
        echo "exec \"$QEMU\" -cpu $cpu \"$ARM_BUILD/$prog\" \"\$@\""
    } >"$w"
    chmod +x "$w"
    echo "$w"
}
