# Stage 6 when no file shares a kept chunk (no bin), one task: the bins
# file is its header and trailer ($BINS_HEAD, $BINS_TRAILER); the line
# source, if on, runs in it over the file table (as make runs it), then the
# same analysis and verification (analyze-lib.sh).
. "$S/analyze-lib.sh"
read x
printf '%s\n%s\n' "$BINS_HEAD" "$BINS_TRAILER" > "$t/bins.tsv"
[ "$LINES_ON" != 1 ] || set -- "$@" $LINE_OPTS --files "$FT"
analyze_run "$@"
