# test_chat_cli.sh -- `pocketllm chat` as a person uses it, through a
# pseudo-terminal (Debian python3's pty): a few turns, Ctrl-C in the middle
# of a reply (the reply stops, the program stays and prompts again), a turn
# after it, Ctrl-D at the prompt (a clean exit, status 0); in a second run,
# Ctrl-C at the prompt (also a clean exit).  History is kept: a turn's reply
# differs from the same message in a fresh conversation (greedy decoding,
# so each reply is deterministic).  Model: a random-weight Qwen3 (tiny) with
# the real tokenizer and Qwen3 template.
. "$(dirname "$0")/serve_lib.sh"
serve_bundle
serve_model "$PL_TMP/m.gguf" --shape tiny --type f16
ARGS=(--model "$PL_TMP/m.gguf" --ctx 4096 -n 150 -t 1)

# reference replies through a pipe (no terminal: no prompts, no colours)
printf 'Go on.\n' | "$BIN" chat "${ARGS[@]}" >"$PL_TMP/fresh.out" 2>"$PL_TMP/fresh.err"
ok
[ $? = 0 ] || fail "chat through a pipe failed: $(head -c 300 "$PL_TMP/fresh.err")"
printf 'Hello\nGo on.\n' | "$BIN" chat "${ARGS[@]}" >"$PL_TMP/two.out" 2>"$PL_TMP/two.err"
ok
[ "$(wc -l <"$PL_TMP/two.out")" -ge 2 ] || fail "two turns through a pipe gave: $(head -c 300 "$PL_TMP/two.out")"
ok
[ "$(tail -n 1 "$PL_TMP/two.out")" != "$(tail -n 1 "$PL_TMP/fresh.out")" ] ||
    fail "the second turn's reply equals a fresh conversation's: the history was not used"

"$PY" - "$BIN" "$PL_TMP/fresh.out" "${ARGS[@]}" <<'PY' >"$PL_TMP/py.out" 2>&1
import os, pty, re, select, sys, time

binary, fresh_path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
fresh = open(fresh_path, encoding="utf-8", errors="replace").read().strip()
failures = 0
def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)

class Chat:
    def __init__(self):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(binary, [binary, "chat"] + args)
        self.out = b""
    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return None
        if not data:
            return None
        self.out += data
        return True
    def wait_for(self, pattern, seconds, start=0):
        end = time.time() + seconds
        while time.time() < end:
            if re.search(pattern, self.out[start:]):
                return True
            if self.read(0.1) is None:
                break
        return re.search(pattern, self.out[start:]) is not None
    def send(self, data):
        os.write(self.fd, data)
    def exit_status(self, seconds=10):
        end = time.time() + seconds
        while time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            self.read(0.1)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        return "still running"

PROMPT = rb"(^|\n)> $"
c = Chat()
check(c.wait_for(PROMPT, 30), "no first prompt: %r" % c.out[-300:])
# turn 1
mark = len(c.out)
c.send(b"Hello\r")
check(c.wait_for(PROMPT, 60, mark), "turn 1 did not end with a prompt: %r" % c.out[-300:])
# turn 2, cut short with Ctrl-C once the reply is streaming
mark = len(c.out)
c.send(b"Tell me a long story.\r")
end = time.time() + 30
while len(c.out) - mark < 60 and time.time() < end:
    if c.read(0.05) is None:
        break
check(not re.search(PROMPT, c.out[mark:]), "the reply ended before Ctrl-C could be sent (too short for this test)")
c.send(b"\x03")
check(c.wait_for(rb"\[stopped\]", 10, mark), "Ctrl-C did not stop the reply: %r" % c.out[-300:])
check(c.wait_for(PROMPT, 10, mark), "no prompt after Ctrl-C: %r" % c.out[-300:])
# turn 3: the program is still there, and remembers
mark = len(c.out)
c.send(b"Go on.\r")
check(c.wait_for(PROMPT, 60, mark), "turn 3 did not end with a prompt: %r" % c.out[-300:])
reply = c.out[mark:].decode("utf-8", "replace")
reply = re.sub(r"\x1b\[[0-9;]*m", "", reply).replace("\r", "")
reply = reply.split("\n", 1)[1] if "\n" in reply else ""   # after the echoed input line
reply = re.sub(r"\n> $", "", reply).strip()
check(reply and reply != fresh, "turn 3 equals a fresh conversation's reply: history lost (%r)" % reply[:120])
# Ctrl-D at the prompt: a clean exit
c.send(b"\x04")
status = c.exit_status()
check(status == 0, "Ctrl-D at the prompt: exit status %r" % status)

# a second run: Ctrl-C at the prompt
c = Chat()
check(c.wait_for(PROMPT, 30), "no first prompt (second run)")
c.send(b"\x03")
status = c.exit_status()
check(status == 0, "Ctrl-C at the prompt: exit status %r" % status)
print("chat checks: %d failed" % failures)
sys.exit(1 if failures else 0)
PY
script_verdict $? "$PL_TMP/py.out" "the terminal checks failed"
done_testing
