# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 1, only when a shard marked archives ~unlisted (a shard lists no
# members: its ids are walk positions), a task per group of them: their
# entries on stdin (fsim-join --shard-tables --unlisted); `fsim-chunk
# --members-of` lists their members as make's merging run does. Prints
# the members' records (each followed by its archive's walk position, for
# fsim-join --renumber), then the members table with every line prefixed
# by T<TAB> (for fsim-join --shard-tables --members).
cat > "$t/in.tsv"
[ -s "$t/in.tsv" ] || exit 0
"$B/fsim-chunk" "$@" --members-of "$t/in.tsv" --files-out "$t/members.tsv" -o "$t/records.tsv"
fail_once members "$t/records.tsv"
cat "$t/records.tsv"
sed 's/^/T\t/' "$t/members.tsv"
