#!/usr/bin/env bash
# bench_quantize.sh -- how fast `pocketllm quantize` is beside llama.cpp's
# quantizer (llama_model_quantize through the oracle), side by side in one
# run on the same input: a synth checkpoint at Qwen3-0.6B widths (vocabulary
# 151936) cut to a few layers, f16, each recipe quantized by both engines
# with the same thread count, interleaved round by round.  Prints wall and
# CPU seconds, peak resident memory, the ratios ours/llama.cpp (below 1 =
# we are faster), and whether the two files are byte-identical.
# Information only; never a pass/fail test.
#
# usage: bench/bench_quantize.sh BUILD_DIR [THREADS] [LAYERS] [RECIPE...]
#   BUILD_DIR  a build configured with -DPL_ORACLE_DIR (default recipes:
#              Q8_0 Q4_K_M IQ4_XS; THREADS 2; LAYERS 4)
set -euo pipefail
B=${1:?usage: bench_quantize.sh BUILD_DIR [THREADS] [LAYERS] [RECIPE...]}
TH=${2:-2}
LAYERS=${3:-4}
shift $(( $# >= 3 ? 3 : $# ))
RECIPES=("$@")
[ ${#RECIPES[@]} -gt 0 ] || RECIPES=(Q8_0 Q4_K_M IQ4_XS)
P=$B/pocketllm O=$B/pl_oracle
[ -x "$P" ] && [ -x "$O" ] || { echo "need $P and $O (configure with -DPL_ORACLE_DIR)" >&2; exit 1; }
D=$(mktemp -d /tmp/pl_bench_quantize.XXXXXX)
trap 'rm -rf "$D"' EXIT
"$P" synth --quiet --shape qwen3-0.6b --n-layer "$LAYERS" --type f16 "$D/in.gguf"
echo "input: qwen3-0.6b widths, $LAYERS layers, f16, $(du -m "$D/in.gguf" | cut -f1) MiB; $TH threads; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-8s %-9s %8s %8s %9s\n" recipe engine wall_s cpu_s rss_MiB
# run LABEL CMD...: time one run, print a row, echo "wall cpu"
run() {
    local label=$1 recipe=$2; shift 2
    /usr/bin/time -f "%e %U %S %M" -o "$D/t" "$@" >/dev/null 2>&1
    read -r wall user sys rss <"$D/t"
    local cpu; cpu=$(echo "$user + $sys" | bc -l)
    printf "%-8s %-9s %8.2f %8.2f %9d\n" "$recipe" "$label" "$wall" "$cpu" $((rss / 1024)) >&2
    echo "$wall $cpu"
}
for r in "${RECIPES[@]}"; do
    read -r ow oc < <(run pocketllm "$r" "$P" quantize --quiet -t "$TH" "$D/in.gguf" "$D/ours.gguf" "$r")
    read -r lw lc < <(run llama.cpp "$r" "$O" quantize "$D/in.gguf" "$D/ref.gguf" "$r" -t "$TH")
    same=no
    cmp -s "$D/ours.gguf" "$D/ref.gguf" && same=yes
    printf "%-8s ratio ours/llama.cpp: wall %.2f, cpu %.2f; files byte-identical: %s\n" "$r" \
        "$(echo "$ow / $lw" | bc -l)" "$(echo "$oc / $lc" | bc -l)" "$same"
done
