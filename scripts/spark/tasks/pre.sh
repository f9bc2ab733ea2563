# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Sourced first by every task of fsim-spark (docs/distributed.md). Spark
# runs a task as `/bin/bash -c BOOTSTRAP` (fsim_spark.py's `transform`):
# the bootstrap exports the task's variables, sets its arguments (the
# binaries' options, "$@"), finds this folder ($S) and sources this file,
# then the task's own script. Rows come on stdin, lines go to stdout.
#
# Here: the binaries in $B (shipped ones in the task's working folder, or
# in the SparkFiles root in local mode), the file table in $FT, the
# driver's folder as the working folder where it exists (a relative
# --repo, as make's), a private temp folder $t, and the failure injection
# of the tests: FSIM_SPARK_FAIL_ONCE=<stage>:<dir> makes the first task of
# <stage> to run fail once, after writing part of its output (stages:
# chunk, members, forest, analyze, report; several: chunk,analyze:<dir>).
set -e
set -o pipefail
export LC_ALL=C
if [ "$B" = . ] && [ ! -x ./fsim-chunk ]; then B=$B_DRIVER; fi
case $B in /*) ;; *) B=$PWD/$B ;; esac
FT=$FILES_DRIVER; [ -f "$FT" ] || FT=$PWD/files.tsv
if [ -d "$DRIVER_CWD" ]; then cd "$DRIVER_CWD"; fi
fail_once() {
  case ",${FSIM_SPARK_FAIL_ONCE%%:*}," in
    *",$1,"*) d=${FSIM_SPARK_FAIL_ONCE#*:}
            if mkdir -p "$d" && mkdir "$d/$1" 2>/dev/null; then
              head -n 3 "$2" || true
              echo "fsim-spark: injected failure in a $1 task" >&2
              exit 3
            fi ;;
  esac
}
t=$(mktemp -d "${TMPDIR:-/tmp}/fsim-spark.XXXXXX")
trap 'rm -rf "$t"' EXIT
