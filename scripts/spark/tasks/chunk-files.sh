# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 1 on a shared POSIX work folder, one task per shard: the shard
# index on stdin. The records are split by hash range as they are cut,
# into $PARTS/shard-<i>.r<range> (`fsim-sort --split-ranges`: each a chunk
# file, records in input order), the map side of the sort by files; the
# shard's file table goes to $TABLES/files-<i>.tsv (its trailer has the
# records' count and digest); nothing to stdout.
read i
o=$(printf '%s/shard-%05d' "$PARTS" "$i")
tbl=$(printf '%s/files-%05d.tsv' "$TABLES" "$i")
"$B/fsim-chunk" "$@" --shard "$i/$SHARDS" --files-out "$t/files.tsv" -o - -- "$REPO" \
  | "$B/fsim-sort" -q --split-ranges "$NPARTS" -o "$o" -
fail_once chunk "$t/files.tsv"
mv "$t/files.tsv" "$TABLES/.${tbl##*/}.$$"
mv "$TABLES/.${tbl##*/}.$$" "$tbl"
