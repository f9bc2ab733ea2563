# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 1, one task per shard (a non-shared work folder): the shard index
# on stdin; prints the chunk records, then the shard's file table with
# every line prefixed by T<TAB>.
read i
"$B/fsim-chunk" "$@" --shard "$i/$SHARDS" --files-out "$t/files.tsv" -o "$t/chunks.tsv" -- "$REPO"
fail_once chunk "$t/chunks.tsv"
cat "$t/chunks.tsv"
sed 's/^/T\t/' "$t/files.tsv"
