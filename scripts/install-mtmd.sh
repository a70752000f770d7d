#!/usr/bin/env bash
# install-mtmd.sh ORACLE_DIR -- build llama.cpp's multimodal library libmtmd
# (tools/mtmd of the v0.4.0 source bundle) for the oracle tests that drive
# it (tests/oracle/pl_mtmd.cpp).  The npm package ships no prebuilt libmtmd;
# its sources, compiled against the bundle's own headers, match the prebuilt
# libllama/libggml of the same release.  ORACLE_DIR is what
# scripts/install-oracle.sh prints.  Does nothing when it is already built
# (a .complete marker); prints the folder (ORACLE_DIR/mtmd) on stdout.
#
# The result is a static archive, libmtmd.a, not a shared library: only one
# test program links it, so there is nothing to install, no rpath to get
# right and no export list -- the program links just the objects it uses,
# the internal clip_* functions of the `info` verb included (a shared
# libmtmd would hide or expose them by its visibility flags), and the
# prebuilt libllama/libggml stay the only shared libraries, found through
# the program's own rpath.  Sources: the .cpp files of add_library(mtmd) in
# tools/mtmd/CMakeLists.txt (read from that file, so the list is the
# release's own), plus vendor/hash (the SHA-256 of mtmd-helper's bitmap
# ids).  Built without MTMD_VIDEO (no ffmpeg), as the CMake build does when
# LLAMA_SUBPROCESS is off.  About two minutes on two cores.
#
# A failure exits non-zero with the reason on stderr and leaves no folder;
# scripts/test.sh then configures without PL_MTMD_DIR, and only the tests
# that need libmtmd fail, saying why.
set -euo pipefail
ORACLE=${1:?usage: install-mtmd.sh ORACLE_DIR (what install-oracle.sh prints)}
SRC=$ORACLE/src
OUT=$ORACLE/mtmd
MTMD=$SRC/tools/mtmd
if [ -f "$OUT/.complete" ] && [ -f "$OUT/libmtmd.a" ]; then
  echo "$OUT"
  exit 0
fi
die() { echo "install-mtmd: $*" >&2; exit 1; }
[ -f "$MTMD/CMakeLists.txt" ] && [ -f "$SRC/include/llama.h" ] || die "no llama.cpp sources in $SRC (run scripts/install-oracle.sh)"
CXX=${CXX_FOR_MTMD:-g++}
command -v "$CXX" >/dev/null || die "no C++ compiler '$CXX' (Debian: apt-get install g++; scripts/install-deps.sh installs it)"
command -v ar >/dev/null || die "no 'ar' (Debian: binutils)"

# the library's sources, from its own CMake list
mapfile -t SOURCES < <(awk '/^add_library\(mtmd$/ {on = 1; next} on && /^ *\)/ {exit} on {print $1}' \
                         "$MTMD/CMakeLists.txt" | grep '\.cpp$')
[ "${#SOURCES[@]}" -gt 10 ] || die "could not read the source list of add_library(mtmd) in $MTMD/CMakeLists.txt"

TMP=$OUT.tmp
rm -rf "$TMP" "$OUT"
mkdir -p "$TMP/obj"
echo "install-mtmd: compiling ${#SOURCES[@]} sources of libmtmd with $CXX into $OUT" >&2
FLAGS=(-O2 -DNDEBUG -fPIC -pthread -w -I"$MTMD" -I"$SRC/vendor" -I"$SRC/include" -I"$SRC/ggml/include")
# one compile job: SRC_FILE OBJ_NAME [extra flags...]
compile() {
  local src=$1 obj=$2; shift 2
  "$CXX" "${FLAGS[@]}" "$@" -c "$src" -o "$TMP/obj/$obj.o" 2>"$TMP/obj/$obj.log" ||
    { echo "install-mtmd: $src failed to compile:" >&2; head -30 "$TMP/obj/$obj.log" >&2; return 1; }
}
export -f compile
export CXX TMP
JOBS=()
for s in "${SOURCES[@]}"; do JOBS+=("$MTMD/$s|$(echo "$s" | tr '/.' '__')|-std=c++17"); done
H=$SRC/vendor/hash
# (its own sources include each other from vendor/hash; sha1.c is C++, in a namespace)
JOBS+=("$H/hash.cpp|hash_cpp|-std=c++17 -I$H" "$H/sha1/sha1.c|sha1_c|-x c++ -std=c++17 -I$H"
       "$H/sha256/sha256.c|sha256_c|-x c -std=c11 -I$H" "$H/xxhash/xxhash.c|xxhash_c|-x c -std=c11 -I$H")
# (FLAGS as a string for the child shells: paths with spaces are not expected in the cache folder)
export FLAGS_STR="${FLAGS[*]}"
start=$(date +%s)
printf '%s\n' "${JOBS[@]}" | xargs -P "$(nproc)" -I{} bash -c '
  IFS="|" read -r src obj extra <<<"$1"
  read -ra FLAGS <<<"$FLAGS_STR"
  compile "$src" "$obj" $extra' _ {} || { rm -rf "$TMP"; die "compilation failed (see above)"; }
ar rcs "$TMP/libmtmd.a" "$TMP"/obj/*.o || { rm -rf "$TMP"; die "ar failed"; }
rm -rf "$TMP/obj"
mv "$TMP" "$OUT"
touch "$OUT/.complete"
echo "install-mtmd: built in $(( $(date +%s) - start )) s" >&2
echo "$OUT"
