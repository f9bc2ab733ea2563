#!/usr/bin/env bash
# Evaluation corpus for `make quality`: several releases of two projects from
# two ecosystems, unpacked side by side as folders under $QDIR/corpus:
#
# * Django (Python, PyPI sdists via pip): code, tests, the reST documentation,
#   ~100 translation catalogs per app (locale/*/LC_MESSAGES/*.po) and their
#   compiled .mo files, images and fonts;
# * moment (JavaScript, npm tarballs via `npm pack moment@V`): code, ~130
#   locale modules in several builds (src/, locale/, dist/, min/), TypeScript
#   declarations, minified bundles.
#
# Everything the archives hold is kept (binary files, catalogs, small files):
# the measurement is of what users keep in their repositories. Only symbolic
# links and special files are removed.
#
# Deterministic: pinned versions; the archives' SHA-256 are recorded in
# $QDIR/corpus.sha256 (pip checks them against PyPI, npm against the
# registry's integrity field).
set -euo pipefail
QDIR=${QDIR:-quality-work}
VERSIONS=${VERSIONS:-"3.2.25 4.2.16 5.0.9 5.1.4"}
NPM_VERSIONS=${NPM_VERSIONS:-"2.24.0 2.27.0 2.29.4 2.30.1"}
mkdir -p "$QDIR/dl"
corpus="$QDIR/corpus"
stamp="$QDIR/.corpus-v2-done-$(echo $VERSIONS $NPM_VERSIONS | tr ' ' '_')"
if [ -f "$stamp" ]; then echo "corpus: $corpus (cached)"; exit 0; fi
rm -rf "$corpus" "$QDIR"/.corpus-*; mkdir -p "$corpus"
for v in $VERSIONS; do
  if ! ls "$QDIR/dl/"[Dd]jango-"$v".tar.gz >/dev/null 2>&1; then
    pip download --quiet --no-deps --no-binary :all: -d "$QDIR/dl" "Django==$v"
  fi
  tgz=$(ls "$QDIR/dl/"[Dd]jango-"$v".tar.gz)
  mkdir -p "$corpus/django-$v"
  tar -xzf "$tgz" -C "$corpus/django-$v" --strip-components=1
done
for v in $NPM_VERSIONS; do
  if [ ! -f "$QDIR/dl/moment-$v.tgz" ]; then
    npm pack --silent --pack-destination "$QDIR/dl" "moment@$v" >/dev/null
  fi
  mkdir -p "$corpus/moment-$v"
  tar -xzf "$QDIR/dl/moment-$v.tgz" -C "$corpus/moment-$v" --strip-components=1
done
(cd "$QDIR/dl" && sha256sum [Dd]jango-*.tar.gz moment-*.tgz) > "$QDIR/corpus.sha256"
find "$corpus" \( -type l -o \! -type f \! -type d \) -delete
find "$corpus" -type d -empty -delete
chmod -R u+rwX "$corpus"
touch "$stamp"
n=$(find "$corpus" -type f | wc -l); sz=$(du -sm "$corpus" | cut -f1)
echo "corpus: $corpus: $n files, ${sz} MB"
