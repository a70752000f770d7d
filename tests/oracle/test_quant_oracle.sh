# test_quant_oracle.sh -- every quant format against llama.cpp itself:
#  decode   our to_float == ggml's to_float, bit for bit, on random, wild
#           (all bytes random) and edge blocks, and on rows llama.cpp quantized;
#  encode   our from_float bytes == ggml_quantize_chunk bytes on rows of
#           several lengths and distributions, without and with an imatrix;
#  act      our activation encoder (every tier) == the CPU backend's from_float;
#  vec_dot  our reference == ggml's generic scalar kernel (libggml-cpu-x64),
#           bit for bit; our fastest tier == ggml's chosen CPU backend within
#           the float-summation tolerance on random rows, bit for bit on
#           exact rows (power-of-two scales, small ints: every order is exact).
# Types come from the type table (pl_quant_tool types ...), so a new row is
# tested without editing this file.
. "$(dirname "$0")/lib.sh"
T=$PL_TOOLS/pl_quant_tool
D=$PL_TMP
[ -x "$T" ] || { fail "pl_quant_tool not built"; done_testing; exit 1; }

blocks_per_type() { case $1 in f16|bf16) echo 512 ;; *) echo 48 ;; esac; }

# ---- decode: random / wild / edge blocks ----------------------------------
while read -r type _ _ _; do
    case $type in f32|q8_1|q8_K) continue ;; esac   # ggml has no to_float for these
    for mode in random wild edge; do
        "$T" gen-blocks "$type" "$(blocks_per_type "$type")" 7 $mode "$D/b" || { fail "gen $type"; continue; }
        ok
        "$ORACLE" to-float "$type" "$D/b" "$D/theirs" 2>"$D/err" || { fail "oracle to-float $type: $(cat "$D/err")"; continue; }
        for tier in scalar avx2 avx512; do
            "$T" to-float "$type" "$D/b" "$D/ours" --tier $tier 2>/dev/null || continue
            ok
            "$T" cmp-bits "$D/ours" "$D/theirs" 2>"$D/err" || fail "decode $type ($mode blocks, $tier): $(cat "$D/err")"
        done
    done
done < <("$T" types decode)

# ---- encode: rows of several lengths, without and with an imatrix ---------
while read -r type _ _ _; do
    case $type in q8_1|q8_K) continue ;; esac       # activation-only: checked under act
    case $type in f32|f16|bf16|q4_0|q4_1|q5_0|q5_1|q8_0|iq4_nl|mxfp4) lens="32 96 512 4096" ;; *) lens="256 512 4096" ;; esac
    for n in $lens; do
        "$T" gen-rows "$n" 16 "$n" "$D/x" && "$T" gen-imatrix "$n" $((n + 1)) "$D/im" || { fail "gen rows"; continue; }
        for im in none imatrix; do
            extra_o=(); extra_t=()
            [ $im = imatrix ] && extra_o=(--imatrix-row "$D/im") && extra_t=(--imatrix "$D/im")
            ok
            "$ORACLE" quantize-chunk "$type" "$D/x" "$D/theirs" "$n" "${extra_o[@]}" 2>"$D/err" ||
                { fail "oracle quantize-chunk $type n=$n $im: $(cat "$D/err")"; continue; }
            "$T" quantize "$type" "$D/x" "$D/ours" "$n" "${extra_t[@]}" 2>"$D/err" ||
                { fail "quantize $type n=$n $im: $(cat "$D/err")"; continue; }
            "$T" cmp-bits "$D/ours" "$D/theirs" 2>"$D/err" || fail "encode $type n=$n $im: $(cat "$D/err")"
            # decode of what llama.cpp quantized
            [ "$type" = f32 ] && continue
            ok
            "$ORACLE" to-float "$type" "$D/theirs" "$D/f_theirs" 2>/dev/null &&
                "$T" to-float "$type" "$D/theirs" "$D/f_ours" &&
                "$T" cmp-bits "$D/f_ours" "$D/f_theirs" 2>"$D/err" || fail "decode of llama-quantized $type n=$n $im: $(cat "$D/err")"
        done
    done
done < <("$T" types encode)

# ---- activation encoders ---------------------------------------------------
while read -r type _ _ _; do
    case $type in f32) continue ;; esac
    n=512; [ "$type" = q8_K ] && n=1024
    "$T" gen-rows $n 16 99 "$D/x" || { fail "gen rows"; continue; }
    ok
    "$ORACLE" act-quantize "$type" "$D/x" "$D/theirs" $n 2>"$D/err" || { fail "oracle act $type: $(cat "$D/err")"; continue; }
    for tier in scalar avx2 avx512; do
        "$T" act "$type" "$D/x" "$D/ours" $n --tier $tier 2>/dev/null || continue
        ok
        "$T" cmp-bits "$D/ours" "$D/theirs" 2>"$D/err" || fail "act $type ($tier) vs the CPU backend: $(cat "$D/err")"
    done
done < <("$T" types act)

# ---- dot products ----------------------------------------------------------
while read -r type act wblk ablk; do
    case $type in f32|f16|bf16) n=1000 ;; *) n=4096 ;; esac
    rows=24
    for mode in random exact; do
        nn=$n; [ $mode = exact ] && nn=512
        bw=$((nn / wblk)); ba=$((nn / ablk))
        "$T" gen-blocks "$type" $((bw * rows)) 11 $mode "$D/w" && "$T" gen-blocks "$act" $((ba * rows)) 12 $mode "$D/a" ||
            { fail "gen $type"; continue; }
        ok
        "$ORACLE" vec-dot "$type" "$D/w" "$D/a" $nn "$D/generic" --variant x64 2>"$D/err" &&
            "$ORACLE" vec-dot "$type" "$D/w" "$D/a" $nn "$D/best" 2>>"$D/err" ||
            { fail "oracle vec-dot $type: $(cat "$D/err")"; continue; }
        "$T" vec-dot "$type" "$D/w" "$D/a" $nn "$D/ref" --tier scalar &&
            "$T" vec-dot "$type" "$D/w" "$D/a" $nn "$D/fast" || { fail "vec-dot $type"; continue; }
        "$T" cmp-bits "$D/ref" "$D/generic" 2>"$D/err" || fail "vec_dot $type ($mode): reference != ggml generic: $(cat "$D/err")"
        ok
        if [ $mode = exact ]; then
            "$T" cmp-dot "$type" "$D/w" "$D/a" $nn "$D/fast" "$D/best" --exact >"$D/out" 2>"$D/err" ||
                fail "vec_dot $type (exact rows): fastest tier != llama.cpp's CPU backend: $(cat "$D/err")"
        else
            "$T" cmp-dot "$type" "$D/w" "$D/a" $nn "$D/fast" "$D/best" >"$D/out" 2>"$D/err" ||
                fail "vec_dot $type (random rows): fastest tier vs llama.cpp's CPU backend: $(cat "$D/err")"
            cat "$D/out" >&2
        fi
    done
done < <("$T" types dot)

done_testing
