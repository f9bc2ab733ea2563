# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 3, one task per hash range (a non-shared work folder): the sorted
# records on stdin (page names for --site-names from the file table $FT),
# fsim-partition's kept records, edges, K lines and
# summaries on stdout.
cat > "$t/in.tsv"
"$B/fsim-partition" -q --emit-forest --files "$FT" "$@" -o "$t/out.tsv" "$t/in.tsv"
fail_once forest "$t/out.tsv"
cat "$t/out.tsv"
