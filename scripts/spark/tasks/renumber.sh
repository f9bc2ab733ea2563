# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 2, only when a file was skipped while chunking (its walk position
# is then not its id): a partition's chunk records on stdin, renumbered by
# the driver's moved.tsv (fsim-join --renumber); the last line is the
# part's `#records<TAB>COUNT:DIGEST`, which the driver gives back to
# `fsim-join --shard-tables --records` as it is.
M=$MOVED_DRIVER; [ -f "$M" ] || M=$PWD/moved.tsv
"$B/fsim-join" --renumber "$M" -
