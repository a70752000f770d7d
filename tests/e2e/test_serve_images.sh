# test_serve_images.sh -- images through `pocketllm serve --mmproj`, driven
# by the official `openai` npm client (serve_images_client.js): a base64
# PNG and a base64 JPEG in one message, whole and streamed, answered as
# `pocketllm run --mmproj --image` answers the prompt the template renders
# (greedy); images in two messages; file:// inside and outside
# --allow-image-path; every bad image (corrupt, truncated, not an image,
# empty, bad base64, remote URLs, file:// refused) a 400 naming its part;
# the server still serving afterwards; a server without --mmproj refuses
# images.  Model: a random-weight Qwen3-VL pair from `pocketllm synth`
# (vl_pair_lib.sh) with the string-content path of the Qwen3-VL-Instruct template
# (ChatML, no thinking).  The images are made here with ImageMagick.
. "$(dirname "$0")/serve_lib.sh"
NODE_MODULES=$(bash "$PL_SRC/scripts/install-test-npm.sh" 2>"$PL_TMP/npm.err") || {
    echo "FAIL: the openai npm client could not be installed: $(tail -3 "$PL_TMP/npm.err")" >&2
    exit 1
}
. "$(dirname "$0")/vl_pair_lib.sh"

mkdir -p "$PL_TMP/img/allowed"
convert -size 96x64 gradient:red-blue "$PL_TMP/img/a.png" &&
    convert -size 64x80 gradient:yellow-green -quality 90 "$PL_TMP/img/b.jpg" &&
    convert -size 72x72 radial-gradient:white-black "$PL_TMP/img/allowed/c.png" &&
    convert -size 32x32 xc:orange "$PL_TMP/img/outside.png" || { echo "FAIL: ImageMagick could not make the test images" >&2; exit 1; }

# small images, a small budget: the tower's share of the time stays small
IMG=(--image-max-tokens 16)
serve_start main --model "$PL_TMP/vl.gguf" --mmproj "$PL_TMP/mm.gguf" "${IMG[@]}" --allow-image-path "$PL_TMP/img/allowed" \
    --ctx 512 --parallel 2 -t 1
MAIN_BASE=$BASE/v1 MAIN_PID=$SERVER_PID MAIN_LOG=$SERVER_LOG
serve_start nofile --model "$PL_TMP/vl.gguf" --mmproj "$PL_TMP/mm.gguf" "${IMG[@]}" --ctx 40 --parallel 1 -t 1
NOFILE_BASE=$BASE/v1 NOFILE_PID=$SERVER_PID NOFILE_LOG=$SERVER_LOG
serve_start text --model "$PL_TMP/vl.gguf" --ctx 256 --parallel 1 -t 1
TEXT_BASE=$BASE/v1

BASE=$MAIN_BASE NOFILE_BASE=$NOFILE_BASE TEXT_BASE=$TEXT_BASE BIN=$BIN MODEL_FILE=$PL_TMP/vl.gguf MMPROJ=$PL_TMP/mm.gguf \
    TMPL_MODEL=$PL_TMP/vl.gguf DIR=$PL_TMP/img RUN_ARGS="${IMG[*]} --ctx 512 -t 1" NODE_PATH=$NODE_MODULES \
    node "$(dirname "$0")/serve_images_client.js" >"$PL_TMP/node.out" 2>"$PL_TMP/node.err"
script_verdict $? "$PL_TMP/node.out" "the openai client's image checks failed: $(head -c 3000 "$PL_TMP/node.err")"
ok
grep -q "openai images client: [0-9]* checks, 0 failed" "$PL_TMP/node.out" || fail "the client did not report its checks"

serve_stop
SERVER_PID=$MAIN_PID SERVER_LOG=$MAIN_LOG serve_stop
SERVER_PID=$NOFILE_PID SERVER_LOG=$NOFILE_LOG serve_stop
done_testing
