# test_forward_qwen3vl.sh -- the qwen3vl text architecture (Qwen3-VL's text
# model) on text prompts against llama.cpp: random-weight checkpoints from
# `pocketllm synth --arch qwen3vl` (rope.dimension_sections and
# n_deepstack_layers written as the converter writes them), a small untied
# shape in f32 and f16, llama.cpp's Q4_K_M of it, and the real Qwen3-VL-2B
# text widths cut to two layers in f16.  Greedy ids identical up to
# llama.cpp's first undecidable step, teacher-forced argmax agreement on
# every decidable position, the largest logit difference within the bounds
# the qwen3 tests use.  Also: the loader refuses malformed sections.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/forward_lib.sh"

check() { forward_check "$@" 32; }

small=(--arch qwen3vl --n-embd 256 --n-layer 4 --n-head 4 --n-head-kv 2 --head-dim 64 --n-ff 512 --untied --seed 5)
for type in f32 f16; do
    expect_rc 0 "$BIN" synth --quiet "${small[@]}" --type $type "$PL_TMP/vl-$type.gguf" || continue
done
expect_rc 0 "$BIN" inspect "$PL_TMP/vl-f16.gguf" && {
    expect_grep "architecture:    qwen3vl" "$PL_TMP/out"
    expect_grep "rope.dimension_sections                [12, 10, 10, 0]" "$PL_TMP/out"
    expect_grep "n_deepstack_layers                     3" "$PL_TMP/out"
}
check "qwen3vl small f32" "$PL_TMP/vl-f32.gguf" f32 0.0005 1e-5
check "qwen3vl small f16" "$PL_TMP/vl-f16.gguf" f16 0.01 1e-3
expect_rc 0 "$ORACLE" quantize "$PL_TMP/vl-f16.gguf" "$PL_TMP/vl-q4km.gguf" Q4_K_M -t 1 &&
    check "qwen3vl small Q4_K_M" "$PL_TMP/vl-q4km.gguf" f16 0.2 2e-2

# the real 2B text widths (vocabulary 151936, tied), two layers
expect_rc 0 "$BIN" synth --quiet --shape qwen3vl-2b --n-layer 2 --type f16 --seed 3 "$PL_TMP/vl2b.gguf" &&
    check "qwen3vl-2b (2 layers) f16" "$PL_TMP/vl2b.gguf" f16 0.1 1e-3
rm -f "$PL_TMP"/vl2b.gguf

# malformed sections are refused with the key's name: the four int32 of
# the array patched in a copy of the small file
for bad in "0 0 0 0" "40 40 0 0" "-1 20 20 0"; do
    cp "$PL_TMP/vl-f16.gguf" "$PL_TMP/bad.gguf"
    /usr/bin/python3 - "$PL_TMP/bad.gguf" $bad <<'PY'
import struct, sys
path, vals = sys.argv[1], [int(v) for v in sys.argv[2:6]]
data = bytearray(open(path, "rb").read())
key = b"qwen3vl.rope.dimension_sections"
at = data.index(key) + len(key) + 4 + 4 + 8  # value type, element type, count
data[at:at + 16] = struct.pack("<4i", *vals)
open(path, "wb").write(data)
PY
    expect_rc 1 "$BIN" run --model "$PL_TMP/bad.gguf" --prompt x -n 1 && expect_grep "rope.dimension_sections" "$PL_TMP/err"
done
done_testing
