#!/usr/bin/env bash
# Build the "releases" tree of docs/measurements/2026-11-27-releases.md:
# eight Django releases as PyPI ships them (sdists unpacked, top folder
# django-<version>) beside each release's HTML documentation, built by
# Sphinx from that release's own docs/ (django-<version>-html), the kind of
# repository the 10x target names ("source releases of a web
# framework + its HTML docs"). make bench measures it when given
# RELEASES_TREE=$DIR/tree (scripts/bench.py, section "Whole default run on
# a real repository").
#
#   DIR=releases-work bash scripts/quality/releases.sh
#
# Sphinx is pinned per release: 3.5.4 for 3.0/3.1 (their conf.py predates
# Sphinx 6; Sphinx 3.5 runs on Python 3.8 at most: PY38, default pyenv's),
# 4.5.0 for 3.2-4.1, 7.4 for 4.2 on. No network but the package index:
# the intersphinx links to Python's docs render as text (warnings only).
# About 12 minutes of builds on 2 cores; the tree is 668 MB, 62,037 files.
set -euo pipefail
DIR=${DIR:-releases-work}
PY38=${PY38:-$(ls -d /root/.pyenv/versions/3.8.*/bin/python3 2>/dev/null | tail -1)}
VERSIONS=${VERSIONS:-"3.0.14 3.1.14 3.2.25 4.0.10 4.1.13 4.2.16 5.0.9 5.1.4"}
mkdir -p "$DIR/dl" "$DIR/tree" "$DIR/doctrees" "$DIR/logs"
DIR=$(cd "$DIR" && pwd)

sphinx_for() { # version -> the venv that builds its docs
  case $1 in
    3.0.* | 3.1.*) echo sphinx3 ;;
    3.2.* | 4.0.* | 4.1.*) echo sphinx4 ;;
    *) echo sphinx7 ;;
  esac
}

venv() { # name python pip-requirements...
  local name=$1 py=$2; shift 2
  [ -x "$DIR/venv-$name/bin/sphinx-build" ] && return
  "$py" -m venv "$DIR/venv-$name"
  "$DIR/venv-$name/bin/pip" install --quiet "$@"
}

for v in $VERSIONS; do
  [ -d "$DIR/tree/django-$v" ] && continue
  python3 -m pip download --quiet --no-deps --no-binary :all: "django==$v" -d "$DIR/dl"
  tar xzf "$DIR/dl/Django-$v.tar.gz" -C "$DIR/tree" --transform "s,^Django-$v,django-$v,"
done

for v in $VERSIONS; do
  s=$(sphinx_for "$v")
  case $s in
    sphinx3)
      [ -n "$PY38" ] || { echo "releases.sh: Django $v's docs need Sphinx 3.5, which runs on Python 3.8: set PY38" >&2; exit 2; }
      venv sphinx3 "$PY38" "Sphinx==3.5.4" "docutils<0.17" "jinja2<3.1" "markupsafe<2.1" \
        "alabaster<0.7.14" "sphinxcontrib-applehelp<1.0.5" "sphinxcontrib-devhelp<1.0.3" \
        "sphinxcontrib-htmlhelp<2.0.2" "sphinxcontrib-serializinghtml<1.1.6" \
        "sphinxcontrib-qthelp<1.0.4" "pygments<2.15" ;;
    sphinx4)
      venv sphinx4 python3 "Sphinx==4.5.0" "docutils<0.18" "jinja2<3.1" "alabaster<0.7.14" \
        "sphinxcontrib-applehelp<1.0.5" "sphinxcontrib-devhelp<1.0.3" \
        "sphinxcontrib-htmlhelp<2.0.2" "sphinxcontrib-serializinghtml<1.1.6" \
        "sphinxcontrib-qthelp<1.0.4" ;;
    sphinx7) venv sphinx7 python3 "Sphinx>=7,<8" ;;
  esac
  out=$DIR/tree/django-$v-html
  [ -f "$out/index.html" ] && continue
  rm -rf "$out" "$DIR/doctrees/$v"
  echo "releases.sh: Django $v's docs ($s)" >&2
  "$DIR/venv-$s/bin/sphinx-build" -q -b html -j 1 -d "$DIR/doctrees/$v" \
    "$DIR/tree/django-$v/docs" "$out" > "$DIR/logs/$v.log" 2>&1 ||
    { echo "releases.sh: sphinx-build failed for $v: $DIR/logs/$v.log" >&2; exit 1; }
done
echo "releases.sh: $(du -sb "$DIR/tree" | cut -f1) bytes, $(find "$DIR/tree" -type f | wc -l) files in $DIR/tree" >&2
