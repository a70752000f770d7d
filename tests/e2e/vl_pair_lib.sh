# vl_pair_lib.sh -- shared by test_serve_images.sh and test_chat_images.sh
# (source it after serve_lib.sh): the random-weight Qwen3-VL pair both
# drive, $PL_TMP/vl.gguf + $PL_TMP/mm.gguf, with the string-content path
# of the Qwen3-VL-Instruct template (ChatML, no thinking) in
# $PL_TMP/vl.jinja; and ImageMagick's convert, which makes their images
# (missing: the test fails with the reason).
command -v convert >/dev/null || { echo "FAIL: ImageMagick's convert is missing (scripts/install-deps.sh)" >&2; exit 1; }

# what Qwen3-VL-Instruct's template renders for messages whose content is a
# string -- which a conversation with images is, once flattened
cat >"$PL_TMP/vl.jinja" <<'JINJA'
{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
JINJA
# the Qwen3-VL-2B text widths (2 layers, its own untied head over the
# built-in byte vocabulary: the real 151936-row head would make every step
# slow) and the Qwen3-VL-2B tower cut to 6 blocks (one DeepStack tap, as
# the 2-layer text model expects)
"$BIN" synth --quiet --arch qwen3vl --n-embd 2048 --n-layer 2 --n-head 16 --n-head-kv 8 --head-dim 128 --n-ff 6144 \
    --untied --type f16 --seed 3 --template "$PL_TMP/vl.jinja" "$PL_TMP/vl.gguf" 2>"$PL_TMP/synth.err" &&
    "$BIN" synth --quiet --shape qwen3vl-2b --mmproj "$PL_TMP/mm.gguf" --vision-layers 6 2>>"$PL_TMP/synth.err" || {
    echo "FAIL: pocketllm synth of the Qwen3-VL pair failed: $(tail -3 "$PL_TMP/synth.err")" >&2
    exit 1
}
