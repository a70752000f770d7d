#!/usr/bin/env bash
# arm_kernels.sh -- ARM64 speed, for a user with a board or phone (there is
# no ARM machine where PocketLLM is developed, and emulation says nothing
# about speed): builds PocketLLM natively with llama.cpp's prebuilt ARM64
# build as the comparison (npm @node-llama-cpp/linux-arm64@3.21.1, through
# scripts/install-oracle.sh), then runs bench/compare -- pocketllm bench and
# llama.cpp interleaved on the same random-weight Qwen3-0.6B files, same
# threads and depth -- once per kernel tier this CPU runs (POCKETLLM_CPU_TIER
# caps ours; llama.cpp picks its own best variant each time), and prints the
# tables with the ratios.
#
#   bench/arm_kernels.sh [-t THREADS] [--types F16,Q8_0,Q4_0,Q4_K_M] [-p 512 -n 128 -d 512]
#                        [--rounds 2] [--tiers "neon dotprod i8mm"] [--json DIR]
#
# Needs: cmake, gcc, libcjson-dev, libmicrohttpd-dev, npm, git (Debian/
# Ubuntu/Raspberry Pi OS: scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=$(nproc) TYPES=F16,Q8_0,Q4_0,Q4_K_M PP=512 TG=128 DEPTH=512 ROUNDS=2 TIERS= JSON=
while [ $# -gt 0 ]; do
  case "$1" in
    -t) THREADS=$2; shift 2 ;;
    --types) TYPES=$2; shift 2 ;;
    -p) PP=$2; shift 2 ;;
    -n) TG=$2; shift 2 ;;
    -d) DEPTH=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --tiers) TIERS=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "arm_kernels: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$(uname -m)" != aarch64 ] && [ -z "${PL_ARM_BENCH_ANY_ARCH:-}" ]; then
  echo "arm_kernels: this is a $(uname -m) machine; run it on an ARM64 board (emulated timings mean nothing)" >&2
  exit 1
fi
ORACLE_DIR=$(bash scripts/install-oracle.sh)
PL_ORACLE_DIR=$ORACLE_DIR bash scripts/build.sh >/dev/null
[ -x build/pl_oracle ] || { echo "arm_kernels: the llama.cpp oracle did not build" >&2; exit 1; }
build/pocketllm devices | sed -n '/^cpu:/,/kernels:/p'
[ -n "$TIERS" ] || TIERS=$(build/pocketllm devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu"]["kernel_tiers"])')
echo "tiers measured: $TIERS; $THREADS threads; pp$PP, tg$TG at depth $DEPTH; $(date -u '+%Y-%m-%d %H:%M UTC')"
for tier in $TIERS; do
  echo
  echo "== pocketllm on the $tier tier (POCKETLLM_CPU_TIER=$tier) beside llama.cpp"
  POCKETLLM_CPU_TIER=$tier bench/compare --build build --synth "qwen3-0.6b:$TYPES" -t "$THREADS" \
    -p "$PP" -n "$TG" -d "$DEPTH" --rounds "$ROUNDS" ${JSON:+--json "$JSON/arm-$tier.json"}
done
