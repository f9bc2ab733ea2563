# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 6 (a non-shared work folder), one task per group of consecutive
# bins: the bins' '#bin' and F lines (as fsim-binpack writes them) and
# their records sorted by hash, bin by bin, then the line source's L lines.
# Writes a bins file of its bins, analyses and verifies it (analyze-lib.sh);
# prints its slice of bins.tsv as `B<TAB>first bin<TAB>seq<TAB>line` when
# $BPARTS is empty (Spark writes it).
. "$S/analyze-lib.sh"
if [ "$LINES_ON" = 1 ]; then
  cat > "$t/all.tsv"
  line_pairs "$t/all.tsv"
  grep -v '^L' "$t/all.tsv" > "$t/in.tsv" || true
  rm -f "$t/all.tsv"
  set -- "$@" $LINE_OPTS --files "$FT" --line-pairs-from "$t/lines.tsv"
else
  cat > "$t/in.tsv"
fi
[ -s "$t/in.tsv" ] || exit 0
fb=$(head -n 1 "$t/in.tsv" | cut -f 2)
case $fb in *[!0-9]*|'') echo "fsim-spark: a bins task's input does not start with a #bin line" >&2; exit 2 ;; esac
if [ -n "$BPARTS" ]; then
  put_slice
else
  awk -v b="$fb" '{ printf "B\t%021d\t%012d\t%s\n", b, NR, $0 }' "$t/in.tsv"
fi
bins_file
analyze_run "$@"
