# test_inspect_mmproj.sh -- `pocketllm inspect` on an mmproj: the vision
# tower section (text and --json) shows the hyperparameters synth was asked
# for -- the real Qwen3-VL-2B vision config (hidden 1024, 16 heads, MLP
# 4096, patch 16, spatial merge 2, 2304 = 48 x 48 learned positions, out
# width 2048, DeepStack at blocks 5, 11, 17, eps 1e-6, mean/std 0.5) cut to
# the --vision-layers asked -- and which types each weight group has, before
# and after `pocketllm quantize ... q8_0` (which must leave the patch
# embedding, the position table, norms and biases alone, as llama-quantize
# does).  A text model gets no such section.
. "$(dirname "$0")/lib.sh"
BIN=$PL_BIN
M=$PL_TMP/mm.gguf Q=$PL_TMP/mm_q8.gguf
expect_rc 0 "$BIN" synth --shape qwen3vl-2b --mmproj "$M" --vision-layers 12 --type f16 --seed 3 --quiet
expect_rc 0 "$BIN" inspect "$M"
cp "$PL_TMP/out" "$PL_TMP/text"
for kv in "projector qwen3vl_merger" "width 1024" "blocks 12" "heads 16" "head_dim 64" "ff 4096" "patch 16" \
          "merge 2" "image_size 768" "position_table 48 x 48" "projection_width 2048" "deepstack_layers 2 (5,11)" \
          "token_width 6144" "eps 1e-06" "image_mean 0.5 0.5 0.5" "image_std 0.5 0.5 0.5" \
          "types.blocks f16 x48" "types.deepstack f16 x4" "types.merger f16 x2"; do
    ok
    awk '/^vision tower:/ { on = 1; next } on && /^[^ ]/ { on = 0 } on { $1 = $1; print }' "$PL_TMP/text" |
        grep -qx -- "$kv" || fail "inspect's vision tower section lacks '$kv': $(grep -A30 '^vision tower' "$PL_TMP/text" | tr '\n' ';')"
done
expect_rc 0 "$BIN" inspect --json "$M"
python3 - "$PL_TMP/out" >"$PL_TMP/py" 2>&1 <<'PY'
import json, sys
v = json.load(open(sys.argv[1])).get("vision")
want = {"projector": "qwen3vl_merger", "width": 1024, "blocks": 12, "heads": 16, "head_dim": 64, "ff": 4096,
        "patch": 16, "merge": 2, "image_size": 768, "projection_width": 2048, "deepstack_layers": [5, 11],
        "token_width": 6144, "image_mean": [0.5] * 3, "image_std": [0.5] * 3}
bad = [f"{k}: {v.get(k) if v else None!r}, expected {w!r}" for k, w in want.items() if not v or v.get(k) != w]
if v and abs(v.get("eps", 0) - 1e-6) > 1e-12: bad.append(f"eps {v.get('eps')}")
if v and v["types"]["blocks"] != {"f16": 48}: bad.append(f"types.blocks {v['types']['blocks']}")
for b in bad: print("MISMATCH:", b)
sys.exit(1 if bad else 0)
PY
script_verdict $? "$PL_TMP/py" "inspect --json's vision object differs from what synth was asked for"

# q8_0: the 2-D matrices of the blocks, DeepStack mergers and merger; the rest kept
expect_rc 0 "$BIN" quantize --quiet "$M" "$Q" q8_0
expect_rc 0 "$BIN" inspect "$Q"
kept=$(grep -E "^ +types\.(patch_embd|position_embd|norms\+biases) " "$PL_TMP/text" | awk '{ $1 = $1; print }')
[ "$(printf '%s\n' "$kept" | wc -l)" = 3 ] || fail "the f16 mmproj's section lacks the kept groups: $kept"
mapfile -t kept_lines <<<"$kept"
for kv in "types.blocks q8_0 x48" "types.deepstack q8_0 x4" "types.merger q8_0 x2" "${kept_lines[@]}" "blocks 12"; do
    ok
    awk '/^vision tower:/ { on = 1; next } on && /^[^ ]/ { on = 0 } on { $1 = $1; print }' "$PL_TMP/out" |
        grep -qx -- "$kv" || fail "the q8_0 mmproj's section lacks '$kv': $(grep 'types\.' "$PL_TMP/out" | tr '\n' ';')"
done
# a text model: no vision section
expect_rc 0 "$BIN" synth --arch qwen3 --n-layer 1 --n-embd 64 --n-head 2 --n-head-kv 1 --head-dim 32 --n-ff 128 \
    --quiet "$PL_TMP/t.gguf"
expect_rc 0 "$BIN" inspect "$PL_TMP/t.gguf"
ok
grep -q "^vision tower:" "$PL_TMP/out" && fail "a text model's inspect shows a vision tower section"
done_testing
