# test_quant_oracle.sh -- every quant format against llama.cpp itself:
#  decode   our to_float (every tier) == ggml's to_float, bit for bit, on
#           random, wild (all bytes random) and edge blocks, and on rows
#           llama.cpp quantized;
#  encode   our from_float bytes == ggml_quantize_chunk bytes on rows of
#           several lengths and distributions, without and with an imatrix;
#  act      our activation encoder (every tier) == the CPU backend's from_float;
#  vec_dot  our reference == ggml's generic scalar kernel (libggml-cpu-x64),
#           bit for bit; our fastest tier == the CPU backend ggml picks here,
#           within the float-summation tolerance (pl_quant_tool cmp-dot) on
#           random rows, bit for bit on exact rows (power-of-two scales,
#           small integers: every summation order gives the same float).
# Types come from the type table (pl_quant_tool types ...), so a new row is
# tested without editing this file.  The work runs as three batches (make
# inputs and our outputs; llama.cpp's outputs; compare) to load llama.cpp once.
. "$(dirname "$0")/lib.sh"
T=$PL_TOOLS/pl_quant_tool
D=$PL_TMP
[ -x "$T" ] || { fail "pl_quant_tool not built"; done_testing; exit 1; }
TIERS=$("$T" tiers) || { fail "pl_quant_tool tiers"; done_testing; exit 1; }
OURS=$D/ours.batch; THEIRS=$D/theirs.batch; CMP=$D/cmp.batch
: >"$OURS"; : >"$THEIRS"; : >"$CMP"

# decode: random / wild / edge blocks
while read -r type _ _ _; do
    case $type in f32|q8_1|q8_K) continue ;; esac   # ggml has no to_float for these
    nb=48; case $type in f16|bf16) nb=512 ;; esac
    for mode in random wild edge; do
        p=$D/dec_${type}_$mode
        echo "gen-blocks $type $nb 7 $mode $p.in" >>"$OURS"
        echo "to-float $type $p.in $p.theirs" >>"$THEIRS"
        for tier in $TIERS; do
            echo "to-float $type $p.in $p.$tier --tier $tier" >>"$OURS"
            echo "cmp-bits $p.$tier $p.theirs" >>"$CMP"
        done
    done
done < <("$T" types decode)

# encode: rows of several lengths, without and with an imatrix; then the
# decode of what llama.cpp wrote
while read -r type _ blk _; do
    case $type in q8_1|q8_K) continue ;; esac       # activation-only: checked under act
    lens="256 512 4096"; [ "$blk" -lt 256 ] && lens="32 96 512 4096"
    for n in $lens; do
        p=$D/enc_${type}_$n
        echo "gen-rows $n 16 $n $p.x" >>"$OURS"
        echo "gen-imatrix $n $((n + 1)) $p.im" >>"$OURS"
        echo "quantize $type $p.x $p.ours $n" >>"$OURS"
        echo "quantize $type $p.x $p.ours_im $n --imatrix $p.im" >>"$OURS"
        echo "quantize-chunk $type $p.x $p.theirs $n" >>"$THEIRS"
        echo "quantize-chunk $type $p.x $p.theirs_im $n --imatrix-row $p.im" >>"$THEIRS"
        echo "cmp-bits $p.ours $p.theirs" >>"$CMP"
        echo "cmp-bits $p.ours_im $p.theirs_im" >>"$CMP"
        [ "$type" = f32 ] && continue
        echo "to-float $type $p.theirs_im $p.dec_theirs" >>"$THEIRS"
        echo "to-float $type $p.theirs_im $p.dec_ours" >>"$CMP"
        echo "cmp-bits $p.dec_ours $p.dec_theirs" >>"$CMP"
    done
done < <("$T" types encode)

# activation encoders
while read -r type _ _ _; do
    [ "$type" = f32 ] && continue
    n=512; [ "$type" = q8_K ] && n=1024
    p=$D/act_$type
    echo "gen-rows $n 20 99 $p.x" >>"$OURS"
    echo "act-quantize $type $p.x $p.theirs $n" >>"$THEIRS"
    for tier in $TIERS; do
        echo "act $type $p.x $p.$tier $n --tier $tier" >>"$OURS"
        echo "cmp-bits $p.$tier $p.theirs" >>"$CMP"
    done
done < <("$T" types act)

# dot products: 24 rows each, random (long rows) and exact (512)
while read -r type act wblk ablk; do
    for mode in random exact; do
        n=4096; [ $mode = exact ] && n=512
        case $type in f32|f16|bf16) [ $mode = random ] && n=1000 ;; esac
        p=$D/dot_${type}_$mode
        echo "gen-blocks $type $((n / wblk * 24)) 11 $mode $p.w" >>"$OURS"
        echo "gen-blocks $act $((n / ablk * 24)) 12 $mode $p.a" >>"$OURS"
        echo "vec-dot $type $p.w $p.a $n $p.ref --tier scalar" >>"$OURS"
        echo "vec-dot $type $p.w $p.a $n $p.fast" >>"$OURS"
        echo "vec-dot $type $p.w $p.a $n $p.generic --variant x64" >>"$THEIRS"
        echo "vec-dot $type $p.w $p.a $n $p.best" >>"$THEIRS"
        echo "cmp-bits $p.ref $p.generic" >>"$CMP"
        if [ $mode = exact ]; then
            echo "cmp-dot $type $p.w $p.a $n $p.fast $p.best --exact" >>"$CMP"
        else
            echo "cmp-dot $type $p.w $p.a $n $p.fast $p.best" >>"$CMP"
        fi
    done
done < <("$T" types dot)

ok
"$T" batch "$OURS" >"$D/o1" 2>"$D/e1" || fail "making inputs / our outputs: $(grep FAIL "$D/e1" | head -5)"
ok
"$ORACLE" quant-batch "$THEIRS" >"$D/o2" 2>"$D/e2" || fail "llama.cpp side: $(tail -3 "$D/e2")"
"$T" batch "$CMP" >"$D/o3" 2>"$D/e3"
while read -r line; do fail "$line"; done < <(grep -A1 -B3 "^FAIL" "$D/e3" | grep -v "^--")
PL_CHECKS=$((PL_CHECKS + $(grep -c . "$CMP")))
grep "tolerance" "$D/o3" >&2
tail -1 "$D/o3" >&2
grep -q ", 0 failed" "$D/o3" || fail "comparisons failed: $(tail -1 "$D/o3")"
done_testing
