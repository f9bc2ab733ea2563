# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# The line source, one task: its pairs alone (fsim-analyze
# --line-pairs-only over the file table), the pair lines to stdout.
read x
"$B/fsim-analyze" -q -j "$THREADS" --tmpdir "$t" "$@" --files "$FT" --line-pairs-only -o "$t/lines.tsv"
grep -v '^#' "$t/lines.tsv" || true
