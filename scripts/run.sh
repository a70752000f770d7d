#!/usr/bin/env bash
# run.sh -- the main job from a fresh machine: install what is missing,
# build, and run PocketLLM on the one real checkpoint we have
# (../shared/models/stories260K.gguf, or MODEL=path).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
MODEL=${MODEL:-../shared/models/stories260K.gguf}
./build/pocketllm devices
./build/pocketllm inspect "$MODEL"
