#!/usr/bin/env bash
# Evaluation corpus for `make quality`: several releases of Django (code plus
# its large reST documentation), downloaded as source distributions with
# pip, unpacked side by side as collections under $QDIR/corpus.
#
# Deterministic: pinned versions; the tarballs' SHA-256 are recorded in
# $QDIR/corpus.sha256 (pip checks them against PyPI).
# Text files only: files with a NUL byte are removed (images, .mo catalogs,
# shapefiles), and so are the translation catalogs (locale/*/LC_MESSAGES/*.po):
# ~100 languages share their msgid lines, which would add about a million
# cross-language candidate pairs, too many to diff for ground truth.
set -euo pipefail
QDIR=${QDIR:-quality-work}
VERSIONS=${VERSIONS:-"3.2.25 4.2.16 5.0.9 5.1.4"}
mkdir -p "$QDIR/dl"
corpus="$QDIR/corpus"
stamp="$QDIR/.corpus-done-$(echo $VERSIONS | tr ' ' '_')"
if [ -f "$stamp" ]; then echo "corpus: $corpus (cached)"; exit 0; fi
rm -rf "$corpus" "$QDIR"/.corpus-done-*; mkdir -p "$corpus"
for v in $VERSIONS; do
  if ! ls "$QDIR/dl/"[Dd]jango-"$v".tar.gz >/dev/null 2>&1; then
    pip download --quiet --no-deps --no-binary :all: -d "$QDIR/dl" "Django==$v"
  fi
  tgz=$(ls "$QDIR/dl/"[Dd]jango-"$v".tar.gz)
  mkdir -p "$corpus/django-$v"
  tar -xzf "$tgz" -C "$corpus/django-$v" --strip-components=1
done
(cd "$QDIR/dl" && sha256sum [Dd]jango-*.tar.gz) > "$QDIR/corpus.sha256"
python3 - "$corpus" <<'PY'
import os, sys
root = sys.argv[1]
removed = 0
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        parts = p.split(os.sep)
        drop = os.path.islink(p) or not os.path.isfile(p)
        if not drop and f.endswith('.po') and 'LC_MESSAGES' in parts:
            drop = True
        if not drop:
            with open(p, 'rb') as fh:
                drop = b'\0' in fh.read()
        if drop:
            os.remove(p); removed += 1
print(f"removed {removed} non-text or catalog files", file=sys.stderr)
PY
find "$corpus" -type d -empty -delete
touch "$stamp"
n=$(find "$corpus" -type f | wc -l); sz=$(du -sm "$corpus" | cut -f1)
echo "corpus: $corpus: $n files, ${sz} MB"
