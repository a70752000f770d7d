#!/usr/bin/env bash
# install-test-npm.sh [PACKAGE] -- put an npm package that only the tests
# use into a cache outside the repository (like install-oracle.sh), pinned
# to an exact version: `openai` (the default), the official client the
# server tests drive `pocketllm serve` with, or `puppeteer-core`, which
# drives Debian's Chromium in the chat page's browser test.  Does nothing
# when it is already there.  Prints the node_modules folder on stdout (for
# NODE_PATH); exit 1 when the install fails (the tests then fail: they
# never skip).
#   cache: ${POCKETLLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pocketllm}/npm-PACKAGE-VERSION
set -euo pipefail
PACKAGE=${1:-openai}
case $PACKAGE in
  openai) VERSION=6.49.0 ;;          # the newest release that runs on Node 18 (Debian 12's) and 20; 7.x wants Node 22
  puppeteer-core) VERSION=24.43.1 ;; # the newest release that runs on Node 18; 25.x wants Node 22
  *) echo "install-test-npm: no pinned version for '$PACKAGE'" >&2; exit 1 ;;
esac
CACHE=${POCKETLLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pocketllm}
DIR=$CACHE/npm-$PACKAGE-$VERSION
if [ -f "$DIR/.complete" ] && [ -f "$DIR/node_modules/$PACKAGE/package.json" ]; then
  echo "$DIR/node_modules"
  exit 0
fi
command -v npm >/dev/null || { echo "install-test-npm: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
echo "install-test-npm: fetching $PACKAGE@$VERSION into $DIR" >&2
mkdir -p "$CACHE"
TMP=$(mktemp -d "$DIR.tmp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
(
  cd "$TMP"
  npm i -E --ignore-scripts --no-audit --no-fund --no-package-lock "$PACKAGE@$VERSION" >&2
)
got=$(node -e 'console.log(require(process.argv[1]).version)' "$TMP/node_modules/$PACKAGE/package.json")
[ "$got" = "$VERSION" ] || { echo "install-test-npm: got $PACKAGE $got, wanted $VERSION" >&2; exit 1; }
touch "$TMP/.complete"
# another test may have finished the same install meanwhile: keep theirs
[ -f "$DIR/.complete" ] || rm -rf "$DIR"
if ! mv -T "$TMP" "$DIR" 2>/dev/null; then
  [ -f "$DIR/.complete" ] || { echo "install-test-npm: cannot move the install into $DIR" >&2; exit 1; }
fi
echo "$DIR/node_modules"
