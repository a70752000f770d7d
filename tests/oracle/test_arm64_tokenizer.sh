# test_arm64_tokenizer.sh -- llama.cpp's tokenizer test vectors (the whole of
# test_tok_vectors.sh) with the ARM64 build's tools and CLI under qemu.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/arm64_lib.sh"
tools=$PL_TMP/arm-tools
mkdir -p "$tools"
for t in pl_tok_tool pl_tok_gen; do
    [ -x "$ARM_BUILD/$t" ] || { echo "FAIL: $ARM_BUILD/$t is not built" >&2; exit 1; }
    cp "$(arm_wrap "$ARM_CPU_DOTPROD" "$t")" "$tools/$t"
done
PL_TOOLS=$tools PL_BIN=$(arm_wrap "$ARM_CPU_DOTPROD" pocketllm) bash "$(dirname "$0")/test_tok_vectors.sh"
