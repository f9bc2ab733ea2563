# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stages 2 and 3 on a shared POSIX work folder, one task per hash range:
# the range's number on stdin. Its files of all chunk tasks are sorted by
# `fsim-sort --records-only` (within $SORT_MEMORY when set) into
# $SORTED/part-<range>-r (the range of sorted.tsv), then fsim-partition's
# kept records go to $KEPT/part-<range>-r, the rest (edges, K lines,
# summaries) to $FOREST/f-<range>; nothing to stdout.
read r
n=$(printf '%05d' "$r")
"$B/fsim-sort" -q -j 1 --records-only ${SORT_MEMORY:+--memory "$SORT_MEMORY"} --tmpdir "$t" \
  -o "$SORTED/part-$n-r" "$CHUNKS"/shard-*.r$n
"$B/fsim-partition" -q --emit-forest --files "$FT" "$@" -o "$t/out.tsv" "$SORTED/part-$n-r"
fail_once forest "$t/out.tsv"
grep '^[0-9a-f]' "$t/out.tsv" > "$KEPT/.part-$n-r.$$" || true
mv "$KEPT/.part-$n-r.$$" "$KEPT/part-$n-r"
grep -v '^[0-9a-f]' "$t/out.tsv" > "$FOREST/.f-$n.$$" || true
mv "$FOREST/.f-$n.$$" "$FOREST/f-$n"
