# test_chat_images.sh -- `pocketllm chat --mmproj` with /image: an image
# attached to a message, a bad path and a file that is not an image (a
# one-line error each; the chat goes on), a second image in a later turn,
# then a turn of text only.  Each reply (greedy) equals `pocketllm run
# --mmproj --image ...` on the prompt the template renders for the
# conversation so far (the attached images as media markers in front of
# the message's text).  Model: the random-weight Qwen3-VL pair of
# test_serve_images.sh.
. "$(dirname "$0")/serve_lib.sh"
. "$(dirname "$0")/vl_pair_lib.sh"
convert -size 96x64 gradient:red-blue "$PL_TMP/a.png" && convert -size 64x80 gradient:yellow-green "$PL_TMP/b.jpg" ||
    { echo "FAIL: ImageMagick could not make the test images" >&2; exit 1; }
printf 'this is text, not a picture\n' >"$PL_TMP/notimage.png"
COMMON=(--model "$PL_TMP/vl.gguf" --mmproj "$PL_TMP/mm.gguf" --image-max-tokens 16 --ctx 512 -t 1)

printf '/help\n/image %s\n/image %s\n/image %s\nDescribe.\n/image %s\nAnd this?\nThanks.\n' \
    "$PL_TMP/a.png" "$PL_TMP/nothere.png" "$PL_TMP/notimage.png" "$PL_TMP/b.jpg" |
    "$BIN" chat "${COMMON[@]}" -n 6 >"$PL_TMP/chat.out" 2>"$PL_TMP/chat.err"
rc=$?
ok
[ "$rc" = 0 ] || fail "chat exited $rc: $(head -c 400 "$PL_TMP/chat.err")"
expect_grep "/image PATH" "$PL_TMP/chat.out"
expect_grep "nothere.png" "$PL_TMP/chat.err"
expect_grep "not an image" "$PL_TMP/chat.err"
ok
[ "$(grep -c . "$PL_TMP/chat.err")" = 2 ] || fail "not one line per bad image: $(cat "$PL_TMP/chat.err")"

# the references, turn by turn: the history as the chat keeps it (each
# reply as the assistant's content) rendered as vl.jinja renders it (by
# hand, on bytes: a random model's reply need not be UTF-8), then run
"$PY" - "$BIN" "$PL_TMP" "${COMMON[@]}" <<'PY' >"$PL_TMP/py.out" 2>&1
import json, subprocess, sys
binary, tmp, common = sys.argv[1], sys.argv[2], sys.argv[3:]
out = open(tmp + "/chat.out", "rb").read()
M = "<__media__>"
failures = 0
def reference(history, images):
    # the template (vl.jinja) by hand, on bytes: a reply need not be UTF-8
    prompt = b"".join(b"<|im_start|>" + role + b"\n" + content + b"<|im_end|>\n" for role, content in history)
    prompt += b"<|im_start|>assistant\n"
    args = [binary.encode(), b"run"] + [a.encode() for a in common] + [b"--prompt", prompt, b"-n", b"6", b"--temp", b"0"]
    for f in images:
        args += [b"--image", (tmp + "/" + f).encode()]
    r = subprocess.run(args, capture_output=True, check=True).stdout
    return r[:-1]  # the text, then a newline
history, images, at = [], [], 0
for text, new in (("Describe.", ["a.png"]), ("And this?", ["b.jpg"]), ("Thanks.", [])):
    images += new
    history.append((b"user", (M * len(new) + text).encode()))
    want = reference(history, images)
    # the chat's output: the reply, then a newline
    found = out.find(want + b"\n", at)
    if not want or found < 0:
        failures += 1
        print("FAIL: turn %r: run answered %r; the chat printed %r" % (text, want, out[at:]))
        break
    at = found + len(want) + 1
    history.append((b"assistant", want))
print("chat images: %d failed" % failures)
sys.exit(1 if failures else 0)
PY
script_verdict $? "$PL_TMP/py.out" "the chat's replies differ from pocketllm run's"
done_testing
