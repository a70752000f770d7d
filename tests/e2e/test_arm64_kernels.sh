# test_arm64_kernels.sh -- the ARM64 build under qemu, one CPU model per
# tier: the binaries are AArch64; on each model the kernel tier chosen at
# run time is the expected one (neon on a Cortex-A53, dotprod on a
# Cortex-A76, i8mm on "max") and POCKETLLM_CPU_TIER caps it along the
# chain; every kernel test passes on every tier against the scalar
# reference (test_quant_kernels runs each tier the model supports, test_ops
# the NEON row kernels, test_matmul_batch the tiles and rows in mul_mat,
# test_moe_ops the mixture of experts' grouped products and router);
# `devices` lists the ARM features.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm64_lib.sh"

for f in pocketllm libpocketllm.so test_quant_kernels test_ops test_cpu_tier test_matmul_batch test_moe_ops test_kv_packed; do
    ok
    file -L "$ARM_BUILD/$f" | grep -q "ARM aarch64" || fail "$ARM_BUILD/$f is not an AArch64 binary: $(file -L "$ARM_BUILD/$f")"
done

# tier selection, by CPU model and by cap
while read -r cpu cap want; do
    env=(PL_EXPECT_TIER="$want")
    [ "$cap" = - ] || env+=(POCKETLLM_CPU_TIER="$cap")
    t=$(arm_wrap "$cpu" test_cpu_tier "${env[@]}")
    expect_rc 0 "$t" && echo "$cpu, cap $cap: $(grep '^kernel tier' "$PL_TMP/err")" >&2
done <<'EOF_TIERS'
cortex-a53 - neon
cortex-a76 - dotprod
max        - i8mm
max        dotprod dotprod
max        neon    neon
max        scalar  scalar
cortex-a53 i8mm    neon
EOF_TIERS

# the kernel tests: each model runs every tier it supports (scalar and
# neon on the A53; plus dotprod on the A76; plus i8mm on max)
# (PL_TEST_EMULATED: test_ops leaves out its tower-sized attention case,
# minutes under qemu for kernels its smaller cases run on every tile;
# PL_TEST_SKIP_GENERIC on the models after the A53: test_ops' and
# test_kv_packed's generic table is the same code with the same scalar
# tier on every model, and the A53, which allows the fewest instructions,
# already runs it -- the NEON table, whose quant tier each model changes,
# runs on all three)
for cpu in "$ARM_CPU_NEON" "$ARM_CPU_DOTPROD" "$ARM_CPU_I8MM"; do
    skip=PL_TEST_SKIP_GENERIC=0
    [ "$cpu" = "$ARM_CPU_NEON" ] || skip=PL_TEST_SKIP_GENERIC=1
    for prog in test_quant_kernels test_ops test_matmul_batch test_moe_ops test_kv_packed; do
        t=$(arm_wrap "$cpu" "$prog" PL_TEST_EMULATED=1 "$skip")
        if expect_rc 0 "$t"; then
            grep -h "^tier " "$PL_TMP/err" "$PL_TMP/out" | sed "s/^/$cpu $prog: /" >&2
        else
            grep -h "CHECK failed" "$PL_TMP/err" | head -5 >&2
        fi
    done
done

# devices names the features and the tier
d=$(arm_wrap "$ARM_CPU_I8MM" pocketllm)
expect_rc 0 "$d" devices && {
    expect_grep "arm-dotprod" "$PL_TMP/out"
    expect_grep "arm-i8mm" "$PL_TMP/out"
    expect_grep "kernels:      i8mm (tiers here: scalar neon dotprod i8mm)" "$PL_TMP/out"
}
d=$(arm_wrap "$ARM_CPU_NEON" pocketllm)
expect_rc 0 "$d" devices --json && {
    expect_grep '"kernel_tier":	"neon"' "$PL_TMP/out"
    ok
    grep -q "arm-dotprod" "$PL_TMP/out" && fail "a Cortex-A53 reports dotprod"
}
done_testing
