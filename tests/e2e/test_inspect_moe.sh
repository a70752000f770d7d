# test_inspect_moe.sh -- `pocketllm inspect` on mixtures of experts (text
# and --json): the architecture line carries the expert count, the count
# used per token and the FFN widths synth was asked for; the expert tensors
# are listed 3-D by kind and type with the bytes of one expert; and the
# parameters and bytes split into always read / experts / one token equal
# what gguf_dir.py computes from the file's own directory and the GGUF
# format's block sizes (not from our reader), on moe_lib.sh's two files.  A
# dense model shows none of it.
. "$(dirname "$0")/moe_lib.sh"
A=$MOE_A B=$MOE_B

# check FILE ARCH-LINE: text, --tensors and --json against the file itself
check() {
    expect_rc 0 "$BIN" inspect "$1" || return
    expect_grep "architecture:    $2" "$PL_TMP/out"
    cp "$PL_TMP/out" "$PL_TMP/text"
    expect_rc 0 "$BIN" inspect --tensors "$1" || return
    cp "$PL_TMP/out" "$PL_TMP/listing"
    expect_rc 0 "$BIN" inspect --json --tensors "$1" || return
    /usr/bin/python3 - "$1" "$PL_TMP/out" "$PL_TMP/text" "$PL_TMP/listing" >"$PL_TMP/py" 2>&1 <<'PY'
import json, re, sys
import gguf_dir
keys, tensors = gguf_dir.read(sys.argv[1])
d = json.load(open(sys.argv[2]))
text, listing = open(sys.argv[3]).read(), open(sys.argv[4]).read()
bad = []
want = gguf_dir.moe_split(keys, tensors)
for k, v in want.items():
    if d["moe"][k] != v: bad.append(f"json moe.{k} {d['moe'][k]}, the file says {v}")
    label = {"always_read": "always read", "experts": "experts", "per_token": "one token"}[k]
    if not re.search(rf"^  {label} +{v['parameters']} parameters +{v['bytes']} bytes ", text, re.M):
        bad.append(f"text lacks '{label} {v['parameters']} parameters {v['bytes']} bytes'")
# the expert tensors: 3-D, one expert's bytes, grouped by kind and type
groups = {}
for t in tensors:
    if not gguf_dir.is_experts(t): continue
    per = t["bytes"] // t["ne"][2]
    kind = t["name"].split(".")[2]
    g = groups.setdefault((kind, t["type"], tuple(t["ne"])), [0, per])
    g[0] += 1
    row = re.search(rf"^{re.escape(t['name'])} +{t['type']} +{t['ne'][0]} x {t['ne'][1]} x {t['ne'][2]} .*"
                    rf"\({t['ne'][2]} experts of {per} bytes\)$", listing, re.M)
    if not row: bad.append(f"--tensors lacks {t['name']} as 3-D with {per} bytes per expert")
    j = next(x for x in d["tensors"] if x["name"] == t["name"])
    if j.get("experts") != t["ne"][2] or j.get("bytes_per_expert") != per or j["shape"] != t["ne"]:
        bad.append(f"json tensor {j}")
got = {(g["kind"], g["type"], tuple(g["shape"])): [g["tensors"], g["bytes_per_expert"]] for g in d["moe"]["expert_tensors"]}
if got != groups: bad.append(f"json expert_tensors {got}, the file's {groups}")
for (kind, ty, ne), (n, per) in groups.items():
    if not re.search(rf"^  {kind} +{ne[0]} x {ne[1]} x {ne[2]} +{ty} +x{n} +{per} bytes per expert", text, re.M):
        bad.append(f"text lacks the group {kind} {ty} x{n} of {per} bytes per expert")
# ... and the keys
arch = keys["general.architecture"]
for k, key in (("expert_count", "expert_count"), ("expert_used_count", "expert_used_count"),
               ("expert_ffn", "expert_feed_forward_length"), ("shared_expert_ffn", "expert_shared_feed_forward_length")):
    if d["moe"][k] != keys.get(f"{arch}.{key}", 0): bad.append(f"json moe.{k} {d['moe'][k]}")
if d["moe"]["token_embd_looked_up"] != any(t["name"] == "output.weight" for t in tensors): bad.append("token_embd_looked_up")
for b in bad: print("MISMATCH:", b)
print(f"{arch}: one token reads {want['per_token']['bytes']} of {sum(t['bytes'] for t in tensors)} bytes; "
      f"{len(groups)} expert tensor groups")
sys.exit(1 if bad else 0)
PY
    script_verdict $? "$PL_TMP/py" "inspect of $(basename "$1") differs from the file"
}
check "$A" "qwen3moe (mixture of experts: 16 experts, 4 used per token, expert FFN 256, no shared expert)"
expect_grep "ffn_down_exps 256 x 256 x 16     q6_K    x2" "$PL_TMP/text"
check "$B" "qwen2moe (mixture of experts: 5 experts, 3 used per token, expert FFN 48, shared expert FFN 80)"

# a dense model: no experts anywhere
expect_rc 0 "$BIN" synth --quiet --shape tiny --type f16 "$PL_TMP/d.gguf"
expect_rc 0 "$BIN" inspect "$PL_TMP/d.gguf"
ok
grep -qE "mixture of experts|^experts:" "$PL_TMP/out" && fail "a dense model's inspect shows experts"
expect_rc 0 "$BIN" inspect --json --tensors "$PL_TMP/d.gguf"
ok
grep -qE '"moe"|"bytes_per_expert"' "$PL_TMP/out" && fail "a dense model's inspect --json shows experts"
done_testing
