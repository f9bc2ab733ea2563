# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 6 when no file shares a kept chunk (no bin), one task: the bins
# file of no bin (the plan's header, $BINS_HEAD, sealed); the line
# source, if on, runs in it over the file table (as make runs it), then the
# same analysis and verification (analyze-lib.sh).
. "$S/analyze-lib.sh"
read x
: > "$t/in.tsv"
bins_file
[ "$LINES_ON" != 1 ] || set -- "$@" $LINE_OPTS --files "$FT"
analyze_run "$@"
