# test_kv_quant.sh -- the bytes a packed KV cache holds equal llama.cpp's:
# rows of every distribution pl_quant_tool makes, through the CPU backend's
# kv_store (how a session writes its cache) and through llama.cpp's CPU
# backend from_float of the same type (what ggml_set_rows writes a cache
# row with), byte for byte, for every cache type.  Rows of 1024 (a Qwen3
# 8B KV row) and of 32 (one block: a head of 32).  A row whose block is all
# zeros is left out for iq4_nl: llama.cpp's quantizer leaves stale indices
# under its zero scale there (the same values, other bytes).
. "$(dirname "$0")/lib.sh"
QT=$PL_TOOLS/pl_quant_tool
for n in 1024 32; do
    expect_rc 0 "$QT" gen-rows $n 24 20261206 "$PL_TMP/rows.f32"
    for t in f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl; do
        expect_rc 0 "$ORACLE" act-quantize $t "$PL_TMP/rows.f32" "$PL_TMP/theirs.$t" $n
        expect_rc 0 "$QT" kv-store $t "$PL_TMP/rows.f32" "$PL_TMP/ours.$t" $n
        ok
        if [ $t = iq4_nl ]; then
            # compare block by block, skipping all-zero input blocks
            bad=$(/usr/bin/python3 - "$PL_TMP/rows.f32" "$PL_TMP/ours.$t" "$PL_TMP/theirs.$t" <<'PY'
import struct, sys
x = open(sys.argv[1], 'rb').read(); a = open(sys.argv[2], 'rb').read(); b = open(sys.argv[3], 'rb').read()
nb = len(x) // 128; bad = 0; zero = 0
assert len(a) == len(b) == nb * 18, (len(a), len(b), nb)
for i in range(nb):
    if all(v == 0.0 for v in struct.unpack('<32f', x[i*128:(i+1)*128])): zero += 1; continue
    bad += a[i*18:(i+1)*18] != b[i*18:(i+1)*18]
print(bad, zero)
PY
)
            echo "kv-store iq4_nl rows of $n: blocks differing, all-zero blocks skipped: $bad" >&2
            [ "${bad%% *}" = 0 ] || fail "kv-store iq4_nl rows of $n: ${bad%% *} blocks differ from llama.cpp's"
        else
            cmp -s "$PL_TMP/ours.$t" "$PL_TMP/theirs.$t" || fail "kv-store $t rows of $n differ from llama.cpp's set_rows encoding"
        fi
    done
done
# a weight type is not a cache type
expect_rc 1 "$QT" kv-store q4_K "$PL_TMP/rows.f32" "$PL_TMP/x" 32
done_testing
