#!/usr/bin/env bash
# run.sh -- the main job from a fresh machine: install what is missing,
# build, show what the host and the checkpoint are, and generate text with
# the one real checkpoint we have (../shared/models/stories260K.gguf, or
# MODEL=path; PROMPT and N_TOKENS change the prompt and length).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
MODEL=${MODEL:-../shared/models/stories260K.gguf}
PROMPT=${PROMPT:-Once upon a time}
./build/pocketllm devices
./build/pocketllm inspect "$MODEL"
echo
./build/pocketllm run --model "$MODEL" --prompt "$PROMPT" -n "${N_TOKENS:-128}"
echo
