# test_arm64_static.sh -- the statically linked aarch64 CLI
# (build-aarch64/static/pocketllm): `file` calls it static, and it runs with
# no ARM library anywhere -- inside an empty chroot holding only itself, the
# emulator and the model (when this test runs as root; otherwise directly,
# which proves less and says so) -- giving the same ids as the dynamic ARM
# build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm64_lib.sh"
STATIC=$ARM_BUILD/static/pocketllm
MODEL=$PL_SHARED/models/stories260K.gguf
[ -x "$STATIC" ] || { echo "FAIL: no static CLI at $STATIC (scripts/build-aarch64.sh builds it)" >&2; exit 1; }
ok
file "$STATIC" | grep -q "ARM aarch64.*statically linked" || fail "not a static AArch64 executable: $(file "$STATIC")"

dyn=$(arm_wrap "$ARM_CPU_DOTPROD" pocketllm)
expect_rc 0 "$dyn" run --model "$MODEL" --prompt "Once upon a time" -n 32 --print-ids
want=$(cat "$PL_TMP/out")

if [ "$(id -u)" = 0 ]; then
    root=$PL_TMP/chroot
    mkdir -p "$root"
    cp "$STATIC" "$QEMU" "$MODEL" "$root/"
    run_static() { chroot "$root" "/$(basename "$QEMU")" -cpu "$ARM_CPU_DOTPROD" /pocketllm "$@"; }
    where="in an empty chroot"
    SMODEL=/stories260K.gguf
else
    run_static() { "$QEMU" -cpu "$ARM_CPU_DOTPROD" "$STATIC" "$@"; }
    where="directly (not root: no chroot, so the ARM libraries of this machine were not hidden)"
    SMODEL=$MODEL
fi
expect_rc 0 run_static run --model "$SMODEL" --prompt "Once upon a time" -n 32 --print-ids && {
    ok
    [ "$(cat "$PL_TMP/out")" = "$want" ] || fail "static CLI ids '$(cat "$PL_TMP/out")' differ from the dynamic build's '$want'"
}
expect_rc 0 run_static devices && expect_grep "kernels:      dotprod" "$PL_TMP/out"
expect_rc 0 run_static --version
echo "static CLI ran $where" >&2
done_testing
