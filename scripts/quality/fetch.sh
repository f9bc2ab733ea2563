#!/usr/bin/env bash
# Evaluation corpus for `make quality`: several releases of three projects
# from three ecosystems, unpacked side by side as folders under $QDIR/corpus:
#
# * Django (Python, PyPI sdists via pip): code, tests, the reST documentation,
#   ~100 translation catalogs per app (locale/*/LC_MESSAGES/*.po) and their
#   compiled .mo files, images and fonts;
# * moment (JavaScript, npm tarballs via `npm pack moment@V`): code, ~130
#   locale modules in several builds (src/, locale/, dist/, min/), TypeScript
#   declarations, minified bundles;
# * Bootstrap (CSS and JavaScript, npm tarballs): SCSS and JS sources and
#   what they build into: minified CSS and JS of one line each and their
#   source maps (one-line JSON of up to ~700 KB), the long lines that a
#   line diff cannot compare;
# * GNU bash (C, Debian's source packages: the upstream tarballs Debian
#   ships as bash_V.orig.tar.*, from deb.debian.org's pool): code, Texinfo,
#   man pages, HTML, PostScript and PDF manuals, tests, and ~40 translation
#   catalogs (po/*.po, 120-390 KB each: as large as a documentation
#   project's) with their compiled .gmo.
#
# Everything the archives hold is kept (binary files, catalogs, small files):
# the measurement is of what users keep in their repositories. Only symbolic
# links and special files are removed.
#
# Deterministic: pinned versions; the archives' SHA-256 are recorded in
# $QDIR/corpus.sha256 (pip checks them against PyPI, npm against the
# registry's integrity field, this script Debian's against the SHA-256 of
# Debian's Sources index, written below). A pool drops a version when no
# Debian release carries it any more: DEB_POOL names a mirror that keeps
# it (e.g. https://snapshot.debian.org/archive/debian/20251201T000000Z).
set -euo pipefail
QDIR=${QDIR:-quality-work}
VERSIONS=${VERSIONS:-"3.2.25 4.2.16 5.0.9 5.1.4"}
NPM_VERSIONS=${NPM_VERSIONS:-"2.24.0 2.27.0 2.29.4 2.30.1"}
BOOTSTRAP_VERSIONS=${BOOTSTRAP_VERSIONS:-"4.6.2 5.1.3 5.2.3 5.3.3"}
DEB_POOL=${DEB_POOL:-http://deb.debian.org/debian}
# bash in Debian 11, 12, 13 and unstable: file and SHA-256 (Sources.xz of
# each suite, 2026-11-27).
DEB_BASH="bash_5.1.orig.tar.xz d5eeee4f953c09826409d572e2e8996a2140d67eb8f382ce1f3a9d23883ad696
bash_5.2.15.orig.tar.gz 7a315bc0e9d90713159e4390ec1096a41e4f33cd8cc3d1a749a8e5ad56600f51
bash_5.2.37.orig.tar.xz 370704c9c859f4060b7df19055e43bb9b5fa09d887699cf6ba87885c5485d36a
bash_5.3.orig.tar.xz a70de6bb41f5e192534a5a1836b1d7fad9a8d4818a6e1506d70f38441552c17a"
mkdir -p "$QDIR/dl"
corpus="$QDIR/corpus"
stamp="$QDIR/.corpus-v4-done-$(echo $VERSIONS $NPM_VERSIONS $BOOTSTRAP_VERSIONS | tr ' ' '_')"
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
npm_release() { # package version: npm pack (the registry checks its integrity), unpacked
  if [ ! -f "$QDIR/dl/$1-$2.tgz" ]; then
    npm pack --silent --pack-destination "$QDIR/dl" "$1@$2" >/dev/null
  fi
  mkdir -p "$corpus/$1-$2"
  tar -xzf "$QDIR/dl/$1-$2.tgz" -C "$corpus/$1-$2" --strip-components=1
}
for v in $NPM_VERSIONS; do npm_release moment "$v"; done
for v in $BOOTSTRAP_VERSIONS; do npm_release bootstrap "$v"; done
while read -r f sum; do
  if [ ! -f "$QDIR/dl/$f" ]; then
    curl -fsSL --retry 3 -o "$QDIR/dl/$f.part" "$DEB_POOL/pool/main/b/bash/$f"
    mv "$QDIR/dl/$f.part" "$QDIR/dl/$f"
  fi
  echo "$sum  $QDIR/dl/$f" | sha256sum --quiet -c - ||
    { echo "fetch.sh: $QDIR/dl/$f: SHA-256 is not Debian's $sum" >&2; exit 1; }
  v=${f#bash_}; v=${v%.orig.tar.*}
  mkdir -p "$corpus/bash-$v"
  tar -xf "$QDIR/dl/$f" -C "$corpus/bash-$v" --strip-components=1
done <<< "$DEB_BASH"
(cd "$QDIR/dl" && sha256sum [Dd]jango-*.tar.gz moment-*.tgz bootstrap-*.tgz bash_*.orig.tar.*) > "$QDIR/corpus.sha256"
find "$corpus" \( -type l -o \! -type f \! -type d \) -delete
find "$corpus" -type d -empty -delete
chmod -R u+rwX "$corpus"
touch "$stamp"
n=$(find "$corpus" -type f | wc -l); sz=$(du -sm "$corpus" | cut -f1)
echo "corpus: $corpus: $n files, ${sz} MB"
