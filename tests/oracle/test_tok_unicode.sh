# test_tok_unicode.sh -- the Unicode facts the pre-tokenizers read are
# llama.cpp's: for every code point, the category class, White_Space and
# the simple lowercase mapping of our tables (generated at build time from
# Debian's unicode-data, Unicode 15.0, plus the Unicode 15.1 additions)
# equal those of llama.cpp v0.4.0's src/unicode-data.cpp (Unicode 15.1).
. "$(dirname "$0")/tok_lib.sh"
DATA=$LLAMA_SRC/src/unicode-data.cpp
[ -f "$DATA" ] || { fail "$DATA is missing"; done_testing; exit; }
expect_rc 0 "$TOOL" unicode "$PL_TMP/ours" || { done_testing; exit; }
ok
/usr/bin/python3 - "$DATA" "$PL_TMP/ours" >"$PL_TMP/report" 2>&1 <<'PY' || fail "$(cat "$PL_TMP/report")"
import re, sys
src = open(sys.argv[1], encoding='utf-8').read()
def section(name):
    return src.split(name + ' = {')[1].split('};')[0]
ranges = [(int(a, 16), int(b, 16)) for a, b in re.findall(r'\{0x([0-9A-F]+), 0x([0-9A-F]+)\}', section('unicode_ranges_flags'))]
flags = {}
for (lo, f), (hi, _) in zip(ranges, ranges[1:]):
    if f != 1:
        for cp in range(lo, hi):
            flags[cp] = f
for cp in (int(x, 16) for x in re.findall(r'0x([0-9A-F]+)', section('unicode_set_whitespace'))):
    flags[cp] = flags.get(cp, 1) | 0x100
lower = {int(a, 16): int(b, 16) for a, b in re.findall(r'\{0x([0-9A-F]+), 0x([0-9A-F]+)\}', section('unicode_map_lowercase'))}
ours_flags, ours_lower, version = {}, {}, '?'
for line in open(sys.argv[2]):
    if line.startswith('#'):
        version = line[1:].strip(); continue
    cp, f, lo = (int(x, 16) for x in line.split())
    if f != 1: ours_flags[cp] = f
    if lo != cp: ours_lower[cp] = lo
bad = [cp for cp in range(0x110000) if flags.get(cp, 1) != ours_flags.get(cp, 1)]
badl = [cp for cp in range(0x110000) if lower.get(cp, cp) != ours_lower.get(cp, cp)]
for cp in bad[:10]:
    print('U+%04X: llama.cpp flags %#x, ours %#x' % (cp, flags.get(cp, 1), ours_flags.get(cp, 1)))
for cp in badl[:10]:
    print('U+%04X: llama.cpp lowercase %#x, ours %#x' % (cp, lower.get(cp, cp), ours_lower.get(cp, cp)))
print('unicode: ours %s: %d code points with other flags, %d with another lowercase' % (version, len(bad), len(badl)))
sys.exit(1 if bad or badl else 0)
PY
cat "$PL_TMP/report"
done_testing
