# quant_cases.sh -- sourced by the test_quant_oracle*.sh scripts: builds the
# three batches of a quant comparison with llama.cpp (our side: inputs and
# our outputs; llama.cpp's side; the comparisons), runs them and reports.
# quant_run PART: PART "main" is every decode, act and vec_dot check and the
# encodes of all types but iq1/iq2; "iq2" and "iq1" are the iq2_* and iq1_*
# encodes, split off because llama.cpp spends 20-25 s of single-threaded
# CPU building those codebooks' search tables before it quantizes anything,
# and as separate tests ctest can run them side by side.
# Types come from the type table (pl_quant_tool types ...), so a new row is
# tested without editing these files.
T=$PL_TOOLS/pl_quant_tool
D=$PL_TMP

# encode PART TYPE: does this part own the encodes of TYPE?
quant_part_encodes() {
    case $2 in iq1_*) [ "$1" = iq1 ] ;; iq2_*) [ "$1" = iq2 ] ;; *) [ "$1" = main ] ;; esac
}

quant_run() {
    local part=$1
    [ -x "$T" ] || { fail "pl_quant_tool not built"; return; }
    local TIERS
    TIERS=$("$T" tiers) || { fail "pl_quant_tool tiers"; return; }
    local OURS=$D/ours.batch THEIRS=$D/theirs.batch CMP=$D/cmp.batch
    : >"$OURS"; : >"$THEIRS"; : >"$CMP"
    local type act wblk ablk blk needs_im mode n p tier lens rows

    if [ "$part" = main ]; then
        # decode: random / wild (every byte random) / edge blocks, every tier
        while read -r type _ _ _ _; do
            case $type in f32|q8_1|q8_K) continue ;; esac   # ggml has no to_float for these
            local nb=48; case $type in f16|bf16) nb=512 ;; esac
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

        # activation encoders, every tier, against the CPU backend's from_float
        while read -r type _ _ _ _; do
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
        while read -r type act wblk ablk _; do
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
    fi

    # encode: rows of several lengths and distributions, without (where the
    # type runs without) and with an imatrix; then decode what llama.cpp wrote
    while read -r type _ blk _ needs_im; do
        case $type in q8_1|q8_K) continue ;; esac       # activation-only: checked under act
        quant_part_encodes "$part" "$type" || continue
        lens="256 512 4096"; [ "$blk" -lt 256 ] && lens="32 96 512 4096"
        for n in $lens; do
            p=$D/enc_${type}_$n
            rows=16; [ "$blk" = 256 ] && [ $n = 4096 ] && rows=4
            echo "gen-rows $n $rows $n $p.x" >>"$OURS"
            echo "gen-imatrix $n $((n + 1)) $p.im" >>"$OURS"
            if [ "$needs_im" = 0 ]; then
                echo "quantize $type $p.x $p.ours $n" >>"$OURS"
                echo "quantize-chunk $type $p.x $p.theirs $n" >>"$THEIRS"
                echo "cmp-bits $p.ours $p.theirs" >>"$CMP"
            fi
            echo "quantize $type $p.x $p.ours_im $n --imatrix $p.im" >>"$OURS"
            echo "quantize-chunk $type $p.x $p.theirs_im $n --imatrix-row $p.im" >>"$THEIRS"
            echo "cmp-bits $p.ours_im $p.theirs_im" >>"$CMP"
            [ "$type" = f32 ] && continue
            echo "to-float $type $p.theirs_im $p.dec_theirs" >>"$THEIRS"
            echo "to-float $type $p.theirs_im $p.dec_ours" >>"$CMP"
            echo "cmp-bits $p.dec_ours $p.dec_theirs" >>"$CMP"
        done
    done < <("$T" types encode)

    [ -s "$CMP" ] || { fail "no comparisons were generated for part $part"; return; }
    ok
    "$T" batch "$OURS" >"$D/o1" 2>"$D/e1" || fail "making inputs / our outputs: $(grep FAIL "$D/e1" | head -5)"
    ok
    "$ORACLE" quant-batch "$THEIRS" >"$D/o2" 2>"$D/e2" || fail "llama.cpp side: $(tail -3 "$D/e2")"
    "$T" batch "$CMP" >"$D/o3" 2>"$D/e3"
    local line
    while read -r line; do fail "${line#FAIL: }"; done < <(grep "^FAIL" "$D/e3")
    grep "^pl_quant_tool" "$D/e3" | head -20 >&2
    PL_CHECKS=$((PL_CHECKS + $(grep -c . "$CMP")))
    grep "tolerance" "$D/o3" >&2
    tail -1 "$D/o3" >&2
    grep -q ", 0 failed" "$D/o3" || fail "comparisons failed: $(tail -1 "$D/o3")"
}
