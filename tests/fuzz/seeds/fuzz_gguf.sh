#!/usr/bin/env bash
# Seeds for fuzz_gguf: the malformed-file classes and a valid file.
set -euo pipefail
"$2/build-asan/pl_mkbad" "$1" >/dev/null
