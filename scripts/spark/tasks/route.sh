# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 5 on a shared POSIX work folder, one task per hash range: the
# range's number on stdin; its kept records ($KEPT/part-<range>-r) split by
# analysis task with the file -> task map $ROUTE into
# $ROUTED/k-<range>.r<task>.
read r
n=$(printf '%05d' "$r")
"$B/fsim-sort" -q --split-by-file "$ROUTE" -o "$ROUTED/k-$n" "$KEPT/part-$n-r"
