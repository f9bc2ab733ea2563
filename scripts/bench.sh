#!/usr/bin/env bash
# Benchmarks: fsim's stages against the standard tools on the same input, in
# the same run, and docs/performance.md rewritten with the figures.
#
#   make bench                       # defaults below
#   FILES=20000 BIG_MB=200 make bench  # a quicker, smaller run
#
# Figures are medians of RUNS runs with a warm page cache; what matters is
# the ratio fsim / reference measured side by side, not absolute times.
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=${FILES:-100000}       # files in the tree (~10 KB each, ~300 folders)
SIZE=${SIZE:-10000}          # average file size
BIG_MB=${BIG_MB:-1024}       # size of the single large file
RUNS=${RUNS:-3}
BENCH=${BENCH:-bench-work}   # generated data (not committed)
OUT=${OUT:-docs/performance.md}
JOBS=$(nproc)

need() { command -v "$1" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }; }
need jdupes jdupes
need ssdeep ssdeep
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }

cargo build --release --quiet --bins
B=target/release
mkdir -p "$BENCH"
TREE=$BENCH/tree
if [ ! -f "$BENCH/tree.done" ]; then
  rm -rf "$TREE"
  $B/fsim-gen --bulk "$FILES" --bulk-size "$SIZE" --bulk-dirs 300 "$TREE"
  touch "$BENCH/tree.done"
fi
BIG=$BENCH/big.txt
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt $((BIG_MB * 1000000)) ]; then
  # Text-like, not random: the tree's documents concatenated until BIG_MB.
  : > "$BIG"
  while [ "$(stat -c %s "$BIG")" -lt $((BIG_MB * 1048576)) ]; do
    find "$TREE" -type f -name 'f00*' -print0 | sort -z | xargs -0 cat >> "$BIG"
  done
  truncate -s $((BIG_MB * 1048576)) "$BIG"
fi
TREE_BYTES=$(du -sb "$TREE" | cut -f1)
BIG_BYTES=$(stat -c %s "$BIG")

# measure NAME BYTES CMD...: median wall time and max peak RSS over RUNS runs
# (one warm-up run first). Sets WALL (s), RSS (MB).
measure() {
  local name=$1 bytes=$2; shift 2
  bash -c "$*" >/dev/null 2>&1 || true
  local walls=() rss=0
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%e %M' -o "$BENCH/time.out" bash -c "$*" >/dev/null 2>"$BENCH/stderr.out" || {
      echo "bench: '$*' failed:" >&2; cat "$BENCH/stderr.out" >&2; exit 1; }
    read -r w m < <(tail -1 "$BENCH/time.out")
    walls+=("$w")
    [ "$m" -gt "$rss" ] && rss=$m
  done
  WALL=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  RSS=$((rss / 1024))
  local mbs="-"
  [ "$bytes" -gt 0 ] && mbs=$(awk -v b="$bytes" -v w="$WALL" 'BEGIN { if (w > 0) printf "%.0f", b / 1e6 / w; else print "-" }')
  printf '%s\t%s\t%s\t%s\n' "$name" "$WALL" "$mbs" "$RSS" >> "$BENCH/rows.tsv"
  echo "bench: $name: ${WALL}s ${mbs} MB/s ${RSS} MB" >&2
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

rm -f "$BENCH/rows.tsv"
row() { # NAME FSIM_CMD REF_NAME REF_CMD BYTES TARGET
  local name=$1 fcmd=$2 rname=$3 rcmd=$4 bytes=$5 target=$6
  measure "$rname" "$bytes" "$rcmd"; local rw=$WALL rr=$RSS
  measure "$name" "$bytes" "$fcmd"; local fw=$WALL fr=$RSS
  printf '| %s | `%s` | %s s | %s MB | `%s` | %s s | %s MB | **%s** | %s |\n' \
    "$name" "$fcmd" "$fw" "$fr" "$rcmd" "$rw" "$rr" "$(ratio "$fw" "$rw")" "$target" >> "$BENCH/table.md"
}
: > "$BENCH/table.md"

T=$TREE; W=$BENCH
MD5_TREE="find $T -type f -print0 | xargs -0 -P$JOBS -n 5000 md5sum"
row "fsim-chunk avg 1000, tree" "$B/fsim-chunk -q -j $JOBS --files-out $W/f1000.tsv -o $W/c1000.tsv $T" "md5sum" "$MD5_TREE" "$TREE_BYTES" "≤ 1.1"
row "fsim-chunk avg 100, tree" "$B/fsim-chunk -q -j $JOBS --avg-size 100 --files-out $W/f100.tsv -o $W/c100.tsv $T" "md5sum" "$MD5_TREE" "$TREE_BYTES" "≤ 1.7"
row "fsim-chunk avg 1000, one ${BIG_MB} MiB file" "$B/fsim-chunk -q -j $JOBS --files-out $W/fbig.tsv -o $W/cbig.tsv $BIG" "md5sum" "md5sum $BIG" "$BIG_BYTES" "≤ 1.1"
row "fsim-chunk avg 1000, tree" "$B/fsim-chunk -q -j $JOBS --files-out $W/f1000.tsv -o $W/c1000.tsv $T" "ssdeep -r" "ssdeep -r $T" "$TREE_BYTES" "≤ 0.2"

RECS=$(grep -vc '^#' "$W/c100.tsv" || true)
row "fsim-sort --memory 128M, $RECS records" "$B/fsim-sort -q --memory 128M --tmpdir $W -o $W/s100.tsv $W/c100.tsv" "GNU sort" "LC_ALL=C sort -S 128M --parallel=$JOBS -T $W -o $W/g100.tsv $W/c100.tsv" "$(stat -c %s "$W/c100.tsv")" "≤ 0.33, RSS ≤ 160 MB"
cmp -s "$W/s100.tsv" "$W/g100.tsv" && SORT_SAME="identical" || SORT_SAME="DIFFERENT"

# Whole pipeline, fast pass, against jdupes (identical files only).
rm -rf "$W/run"
PIPE="make -s report BIN=./$B REPO=$T WORK=$W/run QUIET=-q && rm -rf $W/run"
row "whole pipeline avg 1000 (make report)" "$PIPE" "jdupes -r" "jdupes -r -q $T" "$TREE_BYTES" "≤ 2.5"
make -s report BIN=./$B REPO="$T" WORK="$W/run" QUIET=-q
jdupes -r -q "$T" > "$W/jdupes.out" || true
JD_SETS=$(awk 'BEGIN{n=0; inset=0} /^$/ {inset=0; next} { if (!inset) { n++; inset=1 } } END {print n}' "$W/jdupes.out")
FS_SETS=$(python3 -c "import json,sys; print(json.load(open('$W/run/report.json'))['summary']['identical_sets'])")

# Stages without a standard counterpart: synthetic inputs at the targets' scale.
PFILES=${PFILES:-15000000}; PGROUPS=${PGROUPS:-30000000}
cargo build --release --quiet --examples
if [ ! -f "$W/psorted.tsv" ]; then
  target/release/examples/sortpart-gen sorted "$PFILES" "$PGROUPS" "$W/pfiles.tsv" > "$W/psorted.tsv"
fi
PRECS=$(awk -F'\t' '/^#end chunks/ { for (i = 2; i <= NF; i++) if ($i ~ /^records=/) { sub("records=", "", $i); print $i } }' "$W/psorted.tsv")
: > "$BENCH/single.md"
single() { # NAME CMD ITEMS UNIT TARGET
  measure "$1" 0 "$2"
  local rate; rate=$(awk -v n="$3" -v w="$WALL" 'BEGIN { if (w > 0) printf "%.1f", n / w / 1e6; else print "-" }')
  printf '| %s | `%s` | %s s | %s M %s/s | %s MB | %s |\n' "$1" "$2" "$WALL" "$rate" "$4" "$RSS" "$5" >> "$BENCH/single.md"
}
single "fsim-partition, $PFILES files, $PGROUPS chunk groups" "$B/fsim-partition -q --files $W/pfiles.tsv -o $W/ppart.tsv $W/psorted.tsv" "$PRECS" "records" "RSS ≤ 100 MB, ≥ 10 M records/s"
rm -f "$W/ppart.tsv"
if [ ! -f "$W/apart.tsv" ]; then
  target/release/examples/gen_partition 52125 3800000 1 > "$W/apart.tsv"
  $B/fsim-binpack -q -o "$W/abins.tsv" "$W/apart.tsv"
fi
single "fsim-analyze, paper scale (52,125 files, 3.8 M records)" "$B/fsim-analyze -q -j $JOBS -o $W/apairs.tsv $W/abins.tsv" 3800000 "records" "≤ 2 s"

# fsim-query against an index of QFILES files (synthetic records; the
# queries are 100 real files of the tree: lookups cost the same).
QFILES=${QFILES:-1000000}
if [ ! -d "$W/qidx" ]; then
  target/release/examples/sortpart-gen sorted "$QFILES" $((QFILES * 3)) "$W/qfiles.tsv" > "$W/qsorted.tsv"
  $B/fsim-index -q --index "$W/qidx" --files "$W/qfiles.tsv" "$W/qsorted.tsv"
  rm -f "$W/qsorted.tsv"
fi
QUERIES=$(find "$T" -type f -name '*.txt' | sort | head -100 | tr '\n' ' ')
measure "fsim-query" 0 "$B/fsim-query --index $W/qidx $QUERIES"
QMS=$(awk -v w="$WALL" 'BEGIN { printf "%.2f", w * 1000 / 100 }')
printf '| fsim-query, index of %s files, 100 query files | `%s` | %s s | %s ms per query file | %s MB | ≤ 10 ms per query |\n' "$QFILES" "$B/fsim-query --index $W/qidx <100 files>" "$WALL" "$QMS" "$RSS" >> "$BENCH/single.md"

cat > "$OUT" <<EOF
# Performance

Generated by \`make bench\` (scripts/bench.sh) on $(date -u +%Y-%m-%d): $(nproc) cores,
$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //').
Median of $RUNS runs, warm page cache, side by side in one run; peak RSS from
\`/usr/bin/time\`. Absolute times on a shared machine drift: read the ratios.

Measured by hand, with their profiles: [fsim-binpack and fsim-analyze](performance-analyze.md),
[fsim-verify](performance-verify.md); incremental re-runs in [reliability.md](reliability.md).

Inputs: a generated tree of $FILES text documents (~$SIZE bytes each, $TREE_BYTES bytes
in 300 folders; \`fsim-gen --bulk $FILES\`), and one file of $BIG_BYTES bytes of the same text.

| fsim | command | time | RSS | reference | command | time | RSS | fsim / ref | target |
|---|---|---|---|---|---|---|---|---|---|
$(cat "$BENCH/table.md")

## Stages without a standard counterpart

| stage | command | time | rate | peak RSS | target |
|---|---|---|---|---|---|
$(cat "$BENCH/single.md")

Synthetic inputs: \`cargo run --release --example sortpart-gen -- sorted $PFILES $PGROUPS FILES.tsv\`
(sorted chunk stream, degree 1-4 plus a few ubiquitous chunks) and
\`cargo run --release --example gen_partition\` (the paper's example scale:
components of mostly 2-3 files, chunks in 2-10 files, 5% copies).

## Checks made in the same run

* fsim-sort output vs \`LC_ALL=C sort\` output: **$SORT_SAME**.
* Identical sets: fsim $FS_SETS, jdupes $JD_SETS.
EOF
echo "bench: wrote $OUT" >&2
