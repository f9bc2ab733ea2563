# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Shell functions of the analysis tasks (analyze.sh, analyze-files.sh,
# zero.sh), sourced after pre.sh.

# put_slice: the task's slice of bins.tsv ($t/in.tsv, its first bin $fb)
# written as $BPARTS/part-00000-b<fb>.
put_slice() {
  o=$(printf '%s/part-00000-b%010d' "$BPARTS" "$fb")
  cp "$t/in.tsv" "$BPARTS/.${o##*/}.$$"
  mv "$BPARTS/.${o##*/}.$$" "$o"
}

# bins_file: the task's bins file ($t/bins.tsv) from its slice ($t/in.tsv):
# fsim-binpack --seal gives it the plan's header ($BINS_HEAD, with the
# slice's number of bins) and its own trailer (its records' count and
# digest, its bins and files), so fsim-analyze checks it like any bins file.
bins_file() {
  printf '%s\n' "$BINS_HEAD" > "$t/plan-head.tsv"
  "$B/fsim-binpack" -q --seal "$t/plan-head.tsv" -o "$t/bins.tsv" "$t/in.tsv"
  rm -f "$t/in.tsv" "$t/rec.tsv" "$t/plan-head.tsv"
}

# line_pairs ALL: the line source's pairs routed to this task (the L lines
# of the file ALL) into $t/lines.tsv.
line_pairs() {
  { grep '^L' "$1" || true; } | cut -f 2- > "$t/lines.tsv"
}

# analyze_run OPTIONS...: the analysis and verification of the task's bins
# file ($t/bins.tsv), fsim-analyze given OPTIONS; the outputs printed as
# `TAG<TAB>a<TAB>b<TAB>seq<TAB>line` (P pairs, V verified pairs, R regions;
# seq: order within the task), their headers and trailers as
# `TAG<TAB>#<TAB>line`. fsim-verify gets --min-percent $VMIN when set.
analyze_run() {
  "$B/fsim-analyze" -q -j "$THREADS" --tmpdir "$t" "$@" -o "$t/pairs.tsv" "$t/bins.tsv"
  fail_once analyze "$t/pairs.tsv"
  tag P "$t/pairs.tsv"
  [ "$VERIFY" != 0 ] || return 0
  if [ "$REGIONS" = 1 ]; then set -- --regions "$t/regions.tsv"; else set --; fi
  "$B/fsim-verify" -q --files "$FT" ${VMIN:+--min-percent "$VMIN"} "$@" -j "$THREADS" -o "$t/verified.tsv" "$t/pairs.tsv"
  tag V "$t/verified.tsv"
  if [ "$REGIONS" = 1 ]; then tag R "$t/regions.tsv"; fi
}

tag() {
  awk -v k="$1" '/^#/ { printf "%s\t#\t%s\n", k, $0; next }
    { printf "%s\t%s\t%012d\t%s\n", k, substr($0, 1, 21), NR, $0 }' "$2"
}
