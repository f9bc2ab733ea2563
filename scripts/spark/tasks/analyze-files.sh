# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 6 on a shared POSIX work folder, one task per group of consecutive
# bins: its input the line `T<TAB>task`, its bins' '#bin' and F lines and
# the line source's L lines; its records read from the route files
# $ROUTED/k-*.r<task> (in range order: (hash, id) order) and put after
# their bin's F lines (split by bin with fsim-sort --split-by-file). Writes
# its slice of bins.tsv, then analyses and verifies its bins (analyze-lib.sh).
. "$S/analyze-lib.sh"
cat > "$t/all.tsv"
[ -s "$t/all.tsv" ] || exit 0
task=$(head -n 1 "$t/all.tsv" | sed -n 's/^T\t\([0-9]*\)$/\1/p')
[ -n "$task" ] || { echo "fsim-spark: a bins task's input does not start with its T line" >&2; exit 2; }
if [ "$LINES_ON" = 1 ]; then
  line_pairs "$t/all.tsv"
  set -- "$@" $LINE_OPTS --files "$FT" --line-pairs-from "$t/lines.tsv"
fi
grep '^[#F]' "$t/all.tsv" > "$t/head.tsv"
rm -f "$t/all.tsv"
fb=$(head -n 1 "$t/head.tsv" | cut -f 2)
nb=$(grep -c '^#bin' "$t/head.tsv" || true)
cat "$ROUTED"/k-*.r"$(printf '%05d' "$task")" > "$t/rec.tsv"
if [ "$nb" -gt 1 ]; then
  awk '/^#bin/ { b++ } /^F/ { print $2 "\t" b - 1 }' "$t/head.tsv" > "$t/fmap.tsv"
  "$B/fsim-sort" -q --split-by-file "$t/fmap.tsv" -o "$t/bin" "$t/rec.tsv"
  awk -v d="$t" '/^#bin/ { if (f) close(f); f = sprintf("%s/h.%05d", d, b++) } { print > f }' "$t/head.tsv"
  i=0
  while [ "$i" -lt "$nb" ]; do
    n=$(printf '%05d' "$i"); cat "$t/h.$n" "$t/bin.r$n"; rm -f "$t/h.$n" "$t/bin.r$n"; i=$((i + 1))
  done > "$t/in.tsv"
else
  cat "$t/head.tsv" "$t/rec.tsv" > "$t/in.tsv"
fi
put_slice
bins_file
analyze_run "$@"
