#!/usr/bin/env bash
# install-test-npm.sh -- put the npm packages that only the tests use into a
# cache outside the repository (like install-oracle.sh): the official
# `openai` client, pinned to an exact version, which the server tests drive
# `pocketllm serve` with.  Does nothing when it is already there.  Prints
# the node_modules folder on stdout (for NODE_PATH); exit 1 when the
# install fails (the tests then fail: they never skip).
#   cache: ${POCKETLLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pocketllm}/npm-openai-6.49.0
set -euo pipefail
OPENAI_VERSION=6.49.0 # the newest release that runs on Node 18 (Debian 12's) and 20; 7.x wants Node 22
CACHE=${POCKETLLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pocketllm}
DIR=$CACHE/npm-openai-$OPENAI_VERSION
if [ -f "$DIR/.complete" ] && [ -f "$DIR/node_modules/openai/package.json" ]; then
  echo "$DIR/node_modules"
  exit 0
fi
command -v npm >/dev/null || { echo "install-test-npm: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
echo "install-test-npm: fetching openai@$OPENAI_VERSION into $DIR" >&2
mkdir -p "$CACHE"
TMP=$(mktemp -d "$DIR.tmp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
(
  cd "$TMP"
  npm i -E --ignore-scripts --no-audit --no-fund --no-package-lock "openai@$OPENAI_VERSION" >&2
)
got=$(node -e 'console.log(require(process.argv[1]).version)' "$TMP/node_modules/openai/package.json")
[ "$got" = "$OPENAI_VERSION" ] || { echo "install-test-npm: got openai $got, wanted $OPENAI_VERSION" >&2; exit 1; }
touch "$TMP/.complete"
# another test may have finished the same install meanwhile: keep theirs
[ -f "$DIR/.complete" ] || rm -rf "$DIR"
if ! mv -T "$TMP" "$DIR" 2>/dev/null; then
  [ -f "$DIR/.complete" ] || { echo "install-test-npm: cannot move the install into $DIR" >&2; exit 1; }
fi
echo "$DIR/node_modules"
