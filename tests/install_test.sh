#!/usr/bin/env bash
# `make install PREFIX=...` into a temporary prefix, then the installed
# program run from another directory: it must find the installed data (the
# files under PREFIX/share/layerwise, not only its built-in copies).
#
#   MAKE=make BUILD=build bash tests/install_test.sh   (what `make install-tests` runs)
#
# Prints "ok - ..." or "FAIL - ..." per check and "N passed, M failed";
# exits non-zero if any check failed.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
cd "$ROOT" || exit 1

NAME=install . "$ROOT/tests/sh_lib.sh"
PREFIX=$TMP/prefix
LW=$PREFIX/bin/layerwise

if out=$($MAKE --no-print-directory BUILD="$BUILD" install PREFIX="$PREFIX" 2>&1); then
    ok "make install PREFIX=$PREFIX"
else
    notok "make install PREFIX=$PREFIX exits 0" "$out"
    finish
fi
[ -x "$LW" ] && ok "the program is installed executable" || notok "no executable $LW"

missing=""
for f in data/*/*.json; do
    [ -f "$PREFIX/share/layerwise/${f#data/}" ] || missing="$missing ${f#data/}"
done
[ -z "$missing" ] && ok "every shipped data file is installed" || notok "not installed:$missing"

# From another directory, with no LAYERWISE_DATA: the installed copies are
# the ones read. Renaming the network and cluster inside them shows it.
mkdir -p "$TMP/elsewhere"
sed -i 's/"name": "lenet5"/"name": "installed-lenet5"/' "$PREFIX/share/layerwise/networks/lenet5.json"
sed -i 's/"name": "p100-4x4"/"name": "installed-p100-4x4"/' "$PREFIX/share/layerwise/clusters/p100-4x4.json"
out=$(cd "$TMP/elsewhere" && env -u LAYERWISE_DATA "$LW" search -n lenet5 -c p100-4x4 -g 4 --json 2>&1)
rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q '"network":[[:space:]]*"installed-lenet5"' &&
    printf '%s' "$out" | grep -q '"cluster":[[:space:]]*"installed-p100-4x4"'; then
    ok "run from another directory, it reads PREFIX/share/layerwise"
else
    notok "run from another directory, it reads PREFIX/share/layerwise (rc $rc)" "$out"
fi
out=$(cd "$TMP/elsewhere" && env -u LAYERWISE_DATA "$LW" search -n vgg16 -c dgx1-v100 -g 8 2>&1)
[ $? -eq 0 ] && ok "another shipped network and cluster by name" || notok "vgg16 on dgx1-v100 by name" "$out"

# The manual's pages (data/doc/*.md).
missing=""
for f in data/doc/*.md; do
    cmp -s "$f" "$PREFIX/share/doc/layerwise/$(basename "$f")" || missing="$missing $f"
done
[ -z "$missing" ] && ok "the pages of data/doc are installed in PREFIX/share/doc/layerwise" ||
    notok "not installed in PREFIX/share/doc/layerwise:$missing"

# The man page, as built from the option table; `man -l` reads it where man
# is installed.
MANPAGE=$PREFIX/share/man/man1/layerwise.1
if [ -f "$MANPAGE" ] && cmp -s "$MANPAGE" "$BUILD/layerwise.1"; then
    ok "the man page is installed in PREFIX/share/man/man1"
else
    notok "the man page is installed as $MANPAGE, the same as $BUILD/layerwise.1"
fi
if command -v man >/dev/null; then
    out=$(MANWIDTH=80 man -l "$MANPAGE" 2>&1)
    printf '%s' "$out" | grep -q "^SYNOPSIS" && ok "man -l shows the installed page" || notok "man -l $MANPAGE" "$out"
    out=$(MANPATH=$PREFIX/share/man MANWIDTH=80 man layerwise 2>&1)
    printf '%s' "$out" | grep -q "^EXIT STATUS" && ok "man layerwise finds it under PREFIX/share/man" ||
        notok "MANPATH=$PREFIX/share/man man layerwise" "$out"
fi
finish
