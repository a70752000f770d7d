#!/usr/bin/env bash
# Seeds for fuzz_json_schema: the schemas of tests/grammar (those the
# compiler takes and those it refuses by keyword).
set -euo pipefail
out=$1
src=$(cd "$(dirname "$0")/../../grammar" && pwd)
for f in "$src"/schemas/*.json "$src"/unsupported/*.json; do cp "$f" "$out/$(basename "$(dirname "$f")")_$(basename "$f")"; done
