#!/usr/bin/env python3
"""fsim-spark: the fsim pipeline on Apache Spark (PySpark), docs/distributed.md.

fsim's own binaries do the work; every stage is a Spark SQL script
transformation (`SELECT TRANSFORM ... USING`), whose tasks run them. No record
goes through Python; on a shared POSIX work folder none goes through the JVM
either (the sort and the routing are by files); otherwise Spark's shuffles
and sorts on text DataFrames move them. Python, on the driver, handles file
names, summary lines and what is O(files).

1. chunking: one task per shard runs `fsim-chunk --shard I/N` (file ids are
   walk positions), its records split by hash range (`fsim-sort
   --split-ranges`) on a shared folder; the driver merges the shards' file
   tables into files.tsv;
2. the sort: range r's task sorts the r-th files of every shard (`fsim-sort
   --records-only`), or Spark sorts the ranges; WORK/sorted.parts/part-*
   concatenated is fsim-sort's sorted.tsv;
3. partitioning: every hash range is reduced by `fsim-partition
   --emit-forest --kept-counts` to its kept records (WORK/partition.parts),
   a spanning forest of its file graph and per-file kept counts; the driver
   merges the forests with one union-find (smallest id labels, as
   fsim-partition);
4. the bin plan from per-component figures: the per-file counts summed per
   component by Spark (O(components) to the driver), `fsim-binpack
   --components` on the driver;
5. the kept records routed to their analysis task (`fsim-sort
   --split-by-file` per range, or a broadcast join in Spark), each task
   taking consecutive bins, writing its slice of bins.tsv, analysing its
   bins (fsim-analyze, with its share of the line source's pairs, which one
   task computes) and verifying their pairs (fsim-verify, where the
   repository is mounted); the pairs, verified pairs and regions are sorted
   by Spark and written as ranges;
6. the reports: a task per format (fsim-report within --memory).

The outputs are byte-identical to `make report` with the same settings:
files.tsv, plan.tsv, report.* as files; sorted, partition, bins, pairs,
verified and regions as WORK/NAME.parts/part-*, which concatenated in name
order are make's NAME.tsv (the driver writes only their part-00000 header
and part-99999 tail: no record or pair is copied through it).
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

M128 = (1 << 128) - 1
K1 = 0x9E3779B97F4A7C15F39CC0605CEDC835
K2 = 0xD6E8FEB86659FD93A0F43B2B7BD22E41
FEATURE_METHODS = {"sif", "mod", "min", "sketch", "bsw-min", "supershingle", "oneperm", "bbit"}
# formats::CHUNK_PARAM_KEYS: the chunking parameters, in the order the
# stages after fsim-chunk write them.
CHUNK_PARAM_KEYS = ["method", "avg", "min", "max", "div", "div2", "window", "hash", "n", "bits", "anchors",
                    "k", "s", "b", "fold-case", "collapse-whitespace", "strip-html"]
BINARIES = ["fsim-chunk", "fsim-sort", "fsim-partition", "fsim-binpack", "fsim-analyze", "fsim-verify", "fsim-report"]


def mix128(x):
    """records::mix128."""
    x = (x * K1) & M128
    x ^= x >> 67
    return (x * K2) & M128


def record_mix(h, f, ln):
    """records::ChunkRecord::mix."""
    return mix128((h ^ (f << 96) ^ (ln << 64)) & M128)


def hex128(v):
    return "%032x" % v


# Shell preamble of every task (run by Spark as `/bin/bash -c SCRIPT`): the
# binaries in $B, and the failure injection of the tests:
# FSIM_SPARK_FAIL_ONCE=<stage>:<dir> makes the first task of <stage> to run
# fail once, after writing part of its output (stages: chunk, forest,
# analyze; several: chunk,analyze:<dir>).
PRE = r"""
set -e
set -o pipefail
export LC_ALL=C
if [ "$B" = . ] && [ ! -x ./fsim-chunk ]; then B=$B_DRIVER; fi
case $B in /*) ;; *) B=$PWD/$B ;; esac
FT=$FILES_DRIVER; [ -f "$FT" ] || FT=$PWD/files.tsv
# In the driver's folder where it exists (a relative --repo, as make's).
if [ -d "$DRIVER_CWD" ]; then cd "$DRIVER_CWD"; fi
fail_once() {
  case ",${FSIM_SPARK_FAIL_ONCE%%:*}," in
    *",$1,"*) d=${FSIM_SPARK_FAIL_ONCE#*:}
            if mkdir -p "$d" && mkdir "$d/$1" 2>/dev/null; then
              head -n 3 "$2" || true
              echo "fsim-spark: injected failure in a $1 task" >&2
              exit 3
            fi ;;
  esac
}
t=$(mktemp -d "${TMPDIR:-/tmp}/fsim-spark.XXXXXX")
trap 'rm -rf "$t"' EXIT
"""

# Stage 1, one task per shard: the shard index on stdin; writes the chunk
# records, then the shard's file table with every line prefixed by T<TAB>.
CHUNK_SH = PRE + r"""
read i
"$B/fsim-chunk" "$@" --shard "$i/$SHARDS" --files-out "$t/files.tsv" -o "$t/chunks.tsv" -- "$REPO"
fail_once chunk "$t/chunks.tsv"
cat "$t/chunks.tsv"
sed 's/^/T\t/' "$t/files.tsv"
"""

# The same when the work folder is a shared POSIX folder: the records are
# split by hash range as they are cut, into $PARTS/shard-<i>.r<range>
# (`fsim-sort --split-ranges`: each a chunk file, records in input order),
# the map side of the sort by files; the shard's file table goes to
# $TABLES/files-<i>.tsv (its trailer has the records' count and digest),
# nothing to stdout.
CHUNK_FILES_SH = PRE + r"""
read i
o=$(printf '%s/shard-%05d' "$PARTS" "$i")
tbl=$(printf '%s/files-%05d.tsv' "$TABLES" "$i")
"$B/fsim-chunk" "$@" --shard "$i/$SHARDS" --files-out "$t/files.tsv" -o - -- "$REPO" \
  | "$B/fsim-sort" -q --split-ranges "$NPARTS" -o "$o" -
fail_once chunk "$t/files.tsv"
mv "$t/files.tsv" "$TABLES/.${tbl##*/}.$$"
mv "$TABLES/.${tbl##*/}.$$" "$tbl"
"""

# Stage 3, one task per hash range: sorted records on stdin.
FOREST_SH = PRE + r"""
cat > "$t/in.tsv"
"$B/fsim-partition" -q --emit-forest "$@" -o "$t/out.tsv" "$t/in.tsv"
fail_once forest "$t/out.tsv"
cat "$t/out.tsv"
"""

# The same on a shared POSIX folder, with the sort: the range's number on
# stdin; its files of all chunk tasks sorted by `fsim-sort --records-only`
# into $SORTED/part-<range>-r (the range of sorted.tsv), then the kept
# records go to $KEPT/part-<range>-r, the K lines to $FOREST/k-<range>, the
# rest (edges, summaries) to $FOREST/f-<range>; nothing to stdout.
SORT_FOREST_SH = PRE + r"""
read r
n=$(printf '%05d' "$r")
"$B/fsim-sort" -q -j 1 --records-only --memory "$SORT_MEMORY" --tmpdir "$t" -o "$SORTED/part-$n-r" "$CHUNKS"/shard-*.r$n
"$B/fsim-partition" -q --emit-forest "$@" -o "$t/out.tsv" "$SORTED/part-$n-r"
fail_once forest "$t/out.tsv"
grep '^[0-9a-f]' "$t/out.tsv" > "$KEPT/.part-$n-r.$$" || true
mv "$KEPT/.part-$n-r.$$" "$KEPT/part-$n-r"
grep '^K' "$t/out.tsv" > "$FOREST/.k-$n.$$" || true
grep -v '^[0-9a-fK]' "$t/out.tsv" > "$FOREST/.f-$n.$$" || true
mv "$FOREST/.k-$n.$$" "$FOREST/k-$n"
mv "$FOREST/.f-$n.$$" "$FOREST/f-$n"
"""

# The line source, one task: its pairs alone (fsim-analyze --line-pairs-only
# over the file table), the pair lines to stdout.
LINES_SH = PRE + r"""
read x
"$B/fsim-analyze" -q -j "$THREADS" --tmpdir "$t" "$@" --files "$FT" --line-pairs-only -o "$t/lines.tsv"
grep -v '^#' "$t/lines.tsv" || true
"""

# The analysis and verification of the task's bins file ($t/bins.tsv);
# the outputs printed as tagged lines (below).
ANALYZE_RUN_SH = r"""
"$B/fsim-analyze" -q -j "$THREADS" --tmpdir "$t" "$@" -o "$t/pairs.tsv" "$t/bins.tsv"
fail_once analyze "$t/pairs.tsv"
tag() { awk -v k="$1" '/^#/ { printf "%s\t#\t%s\n", k, $0; next } { printf "%s\t%s\t%012d\t%s\n", k, substr($0, 1, 21), NR, $0 }' "$2"; }
tag P "$t/pairs.tsv"
if [ "$VERIFY" != 0 ]; then
  if [ "$REGIONS" = 1 ]; then set -- --regions "$t/regions.tsv"; else set --; fi
  "$B/fsim-verify" -q --files "$FT" --min-percent "$VMIN" "$@" -j "$THREADS" -o "$t/verified.tsv" "$t/pairs.tsv"
  tag V "$t/verified.tsv"
  if [ "$REGIONS" = 1 ]; then tag R "$t/regions.tsv"; fi
fi
"""

# Shell functions of the bins tasks. put_slice: the task's slice of
# bins.tsv ($t/in.tsv, its first bin $fb) written as
# $BPARTS/part-00000-b<fb>. bins_file: the task's bins file ($t/bins.tsv)
# from that slice, its records ($t/rec.tsv, sorted: their count and digest
# from fsim-partition's summary) and its numbers of bins and files ($nb,
# $nf).
BINS_FILE_SH = r"""
put_slice() {
  o=$(printf '%s/part-00000-b%010d' "$BPARTS" "$fb")
  cp "$t/in.tsv" "$BPARTS/.${o##*/}.$$"
  mv "$BPARTS/.${o##*/}.$$" "$o"
}
bins_file() {
  sum=$("$B/fsim-partition" -q --emit-forest --files-count "$NFILES" "$t/rec.tsv" \
    | sed -n 's/^#forest\t.*\trecords=\([0-9]*\)\tdigest=\([0-9a-f]*\)\t.*/records=\1\tdigest=\2/p')
  [ -n "$sum" ]
  {
    printf '%sbins=%s%s\n' "$BINS_PRE" "$nb" "$BINS_POST"
    cat "$t/in.tsv"
    printf '#end bins\t%s\tbins=%s\tfiles=%s\n' "$sum" "$nb" "$nf"
  } > "$t/bins.tsv"
  rm -f "$t/in.tsv" "$t/rec.tsv"
}
"""

# On a shared POSIX folder, one task per hash range: the range's number on
# stdin; its kept records ($KEPT/part-<range>-r) split by analysis task
# with the file -> task map $ROUTE into $ROUTED/k-<range>.r<task>.
ROUTE_SH = PRE + r"""
read r
n=$(printf '%05d' "$r")
"$B/fsim-sort" -q --split-by-file "$ROUTE" -o "$ROUTED/k-$n" "$KEPT/part-$n-r"
"""

# Stage 4 on a shared POSIX folder: the same task as ANALYZE_SH, its input
# the line `T<TAB>task`, its bins' '#bin' and F lines and the line
# source's L lines; its records read from the route files
# $ROUTED/k-*.r<task> (in range order: (hash, id) order) and put after
# their bin's F lines (split by bin with fsim-sort --split-by-file).
ANALYZE_FILES_SH = PRE + BINS_FILE_SH + r"""
cat > "$t/all.tsv"
[ -s "$t/all.tsv" ] || exit 0
task=$(head -n 1 "$t/all.tsv" | sed -n 's/^T\t\([0-9]*\)$/\1/p')
[ -n "$task" ] || { echo "fsim-spark: a bins task's input does not start with its T line" >&2; exit 2; }
if [ -n "$LINE_OPTS" ]; then
  { grep '^L' "$t/all.tsv" || true; } | cut -f 2- > "$t/lines.tsv"
  set -- "$@" $LINE_OPTS --files "$FT" --line-pairs-from "$t/lines.tsv"
fi
grep '^[#F]' "$t/all.tsv" > "$t/head.tsv"
rm -f "$t/all.tsv"
fb=$(head -n 1 "$t/head.tsv" | cut -f 2)
nb=$(grep -c '^#bin' "$t/head.tsv" || true)
nf=$(grep -c '^F' "$t/head.tsv" || true)
cat "$ROUTED"/k-*.r$(printf '%05d' "$task") > "$t/rec.tsv"
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
""" + ANALYZE_RUN_SH

# Stage 4, one task per group of consecutive bins: the bins' '#bin' and F
# lines (as fsim-binpack writes them) and their records sorted by hash, bin
# by bin.
# The task writes a bins file of its bins (the records' count and digest
# from fsim-partition's summary of them), analyses it, verifies its pairs,
# and prints the pairs (P), verified pairs (V) and regions (R) as
# `TAG<TAB>a<TAB>b<TAB>seq<TAB>line` (seq: order within the task), their
# headers and trailers as `TAG<TAB>#<TAB>line`; its slice of bins.tsv as
# `B<TAB>first bin<TAB>seq<TAB>line` when the work folder is not shared.
ANALYZE_SH = PRE + BINS_FILE_SH + r"""
if [ -n "$LINE_OPTS" ]; then
  # The line source's pairs routed here (L lines, after the bins).
  cat > "$t/all.tsv"
  { grep '^L' "$t/all.tsv" || true; } | cut -f 2- > "$t/lines.tsv"
  grep -v '^L' "$t/all.tsv" > "$t/in.tsv" || true
  rm -f "$t/all.tsv"
  set -- "$@" $LINE_OPTS --files "$FT" --line-pairs-from "$t/lines.tsv"
else
  cat > "$t/in.tsv"
fi
[ -s "$t/in.tsv" ] || exit 0
# The task's slice of bins.tsv (its bins are consecutive): on a shared
# POSIX work folder written as $BPARTS/part-00000-b<first bin>, else
# printed as B lines for Spark to write.
fb=$(head -n 1 "$t/in.tsv" | cut -f 2)
case $fb in *[!0-9]*|'') echo "fsim-spark: a bins task's input does not start with a #bin line" >&2; exit 2 ;; esac
if [ -n "$BPARTS" ]; then
  put_slice
else
  awk -v b="$fb" '{ printf "B\t%021d\t%012d\t%s\n", b, NR, $0 }' "$t/in.tsv"
fi
grep '^[#F]' "$t/in.tsv" > "$t/head.tsv"
nb=$(grep -c '^#bin' "$t/head.tsv" || true)
nf=$(grep -c '^F' "$t/head.tsv" || true)
if [ "$nb" -gt 1 ]; then
  grep -v '^[#F]' "$t/in.tsv" | sort > "$t/rec.tsv" || true
else
  grep -v '^[#F]' "$t/in.tsv" > "$t/rec.tsv" || true
fi
bins_file
""" + ANALYZE_RUN_SH

# When no file shares a kept chunk (no bin), one task: the bins file is
# its header and trailer ($BINS_HEAD, $BINS_TRAILER); the line source, if
# any, runs in it over the file table (as make runs it), then the same
# analysis and verification.
ZERO_SH = PRE + r"""
read x
printf '%s\n%s\n' "$BINS_HEAD" "$BINS_TRAILER" > "$t/bins.tsv"
[ -z "$LINE_OPTS" ] || set -- "$@" $LINE_OPTS --files "$FT"
""" + ANALYZE_RUN_SH


# Stage 6 on a shared POSIX folder, a task per report format: the formats
# on stdin; the pairs read from their parts ($SRC/part-*, in name order: the
# whole file), the report written to $OUT/report.<format> (atomically, by
# fsim-report); the format printed when done.
REPORT_FILES_SH = PRE + r"""
fail_once report /dev/null
while read -r fmt; do
  case $fmt in txt) name=text ;; *) name=$fmt ;; esac
  if [ "$fmt" = html ]; then more="--html-max-views $HTML_MAX_VIEWS"; else more=; fi
  cat "$SRC"/part-* | "$B/fsim-report" "$@" --format "$name" $more --files "$FT" --tmpdir "$t" -o "$OUT/report.$fmt" -
  echo "$fmt"
done
"""

# The same when the work folder is not shared: the pairs on stdin, every
# format in $FORMATS written in turn, each printed as
# `<format><TAB><line number><TAB><base64 line>`.
REPORT_SH = PRE + r"""
cat > "$t/in.tsv"
fail_once report /dev/null
for fmt in $FORMATS; do
  case $fmt in txt) name=text ;; *) name=$fmt ;; esac
  if [ "$fmt" = html ]; then more="--html-max-views $HTML_MAX_VIEWS"; else more=; fi
  "$B/fsim-report" "$@" --format "$name" $more --files "$FT" --tmpdir "$t" -o "$t/report" "$t/in.tsv"
  base64 -w 65536 "$t/report" | awk -v f="$fmt" '{ printf "%s\t%012d\t%s\n", f, NR, $0 }'
done
"""


def log(msg):
    print("fsim-spark: " + msg, file=sys.stderr, flush=True)


def run(cmd):
    r = subprocess.run(cmd)
    if r.returncode != 0:
        sys.exit("fsim-spark: failed (%d): %s" % (r.returncode, shlex.join(cmd)))


def parse_params(line):
    """'#fsim kind v1\tk=v...' -> (prefix, [(k, v)...])."""
    fields = line.split("\t")
    return fields[0], [tuple(f.split("=", 1)) for f in fields[1:]]


def get(params, key):
    for k, v in params:
        if k == key:
            return v
    return None


def join_params(prefix, params):
    return "\t".join([prefix] + ["%s=%s" % kv for kv in params])


def sql_str(s):
    """A Spark SQL string literal."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sum_trailers(lines):
    """Trailers of parts of one file, summed: counts added, digests added mod 2^128."""
    pre, acc = None, None
    for line in lines:
        p, ps = parse_params(line)
        if acc is None:
            pre, acc = p, [[k, v] for k, v in ps]
            continue
        if p != pre or [k for k, _ in ps] != [k for k, _ in acc]:
            sys.exit("fsim-spark: the tasks' trailers differ: %r and %r" % (line, join_params(pre, acc)))
        for kv, (k, v) in zip(acc, ps):
            if k == "digest":
                kv[1] = hex128((int(kv[1], 16) + int(v, 16)) & M128)
            else:
                kv[1] = str(int(kv[1]) + int(v))
    return join_params(pre, [tuple(kv) for kv in acc])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fsim-spark", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="folder to analyse, readable at the same path on every executor")
    ap.add_argument("--work", required=True, help="output folder: a local path or any Hadoop-compatible URI")
    ap.add_argument("--master", default=None, help="Spark master (default: spark-submit's, else local[2])")
    ap.add_argument("--bin", default=None, help="folder of the fsim binaries on every node (default: PATH)")
    ap.add_argument("--ship", action="store_true", help="ship the binaries with SparkContext.addFile instead")
    ap.add_argument("--shards", type=int, default=0, help="chunk tasks (default: 2 x default parallelism)")
    ap.add_argument("--partitions", type=int, default=0, help="hash ranges (default: 2 x default parallelism)")
    ap.add_argument("--max-failures", type=int, default=4, help="attempts per task (spark.task.maxFailures)")
    ap.add_argument("--avg", default="100")
    ap.add_argument("--method", default="tttd")
    ap.add_argument("--chunk-opts", default="", help="more fsim-chunk options, as make's METHOD_OPTS")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="threads of the driver-side stages")
    ap.add_argument("--capacity", default="1G")
    ap.add_argument("--floor", default="10")
    ap.add_argument("--min-percent", default="50")
    ap.add_argument("--lines", default="4K", help="make's LINES: the line source's size limit (0: none)")
    ap.add_argument("--catalogs", default="1", help="make's CATALOGS: 1 to compare translation catalogs line by line")
    ap.add_argument("--line-floor", default="30", help="make's LINE_FLOOR")
    ap.add_argument("--min-bytes", default="0")
    ap.add_argument("--verify", default="1")
    ap.add_argument("--regions", default="0", help="make's REGIONS: 1 to write the regions of every verified pair")
    ap.add_argument("--formats", default="txt json")
    ap.add_argument("--memory", default="256M", help="make's MEMORY: each sort task's and each report's budget")
    ap.add_argument("--html-max-views", default="200")
    ap.add_argument("--local-dir", default=None, help="driver staging folder when --work is not local")
    a = ap.parse_args(argv)

    from pyspark import SparkConf, StorageLevel
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as fn

    t_start = time.time()
    # The line source (make's LINE_OPTS, only with verification): one task
    # computes its pairs over the file table, the bins tasks take them.
    line_opts = []
    if a.verify != "0":
        line_opts = ["--line-pairs-below", a.lines, "--line-catalogs" if a.catalogs == "1" else "--no-line-catalogs",
                     "--line-min-percent", a.line_floor]
    lines_on = bool(line_opts) and (a.catalogs == "1" or not re.fullmatch(r"0+[KMGTkmgt]?", a.lines))
    conf = SparkConf().setAppName("fsim-spark")
    master = a.master or conf.get("spark.master", None) or "local[2]"
    # Local mode ignores spark.task.maxFailures: local[N,F] is how it retries.
    if master.startswith("local[") and "," not in master:
        master = "%s,%d]" % (master[:-1], a.max_failures)
    conf.setMaster(master)
    conf.set("spark.task.maxFailures", str(a.max_failures))
    if master.startswith("local"):
        # Local mode's executors share the driver's heap (two cached
        # stages of records at a time).
        conf.setIfMissing("spark.driver.memory", "2g")
        # A short-lived JVM: C1 only (measured: 28 -> 21 CPU-s of the JVM on
        # 20,000 files, docs/distributed.md; C2's compile threads cost more
        # than they win back in such a run).
        conf.setIfMissing("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    conf.setIfMissing("spark.ui.enabled", "false")
    conf.setIfMissing("spark.ui.showConsoleProgress", "false")
    # Script transformations without Hive: the executors' JVMs pipe the rows.
    conf.setIfMissing("spark.sql.catalogImplementation", "in-memory")
    # The scripts are SQL literals: no ${...} substitution in them.
    conf.set("spark.sql.variable.substitute", "false")
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    par = sc.defaultParallelism
    shards = a.shards or 2 * par
    nparts = a.partitions or 2 * par
    # The only shuffle without an explicit count (the plan's per-component
    # sums) gets as many partitions as the hash ranges, not Spark's 200.
    if not conf.contains("spark.sql.shuffle.partitions"):
        spark.conf.set("spark.sql.shuffle.partitions", str(nparts))
    disk = StorageLevel.MEMORY_AND_DISK

    # Binaries: --bin DIR on every node, PATH, or shipped with addFile.
    bindir = a.bin or os.path.dirname(shutil.which("fsim-chunk") or "")
    if not bindir or not os.path.exists(os.path.join(bindir, "fsim-chunk")):
        sys.exit("fsim-spark: fsim binaries not found: give --bin DIR or put them on PATH")
    bindir = os.path.abspath(bindir)
    from pyspark import SparkFiles

    task_bin = bindir
    if a.ship:
        for b in BINARIES:
            sc.addFile(os.path.join(bindir, b))
        # YARN and standalone executors find the files in their working
        # folder; local mode in the SparkFiles root.
        task_bin = SparkFiles.getRootDirectory()

    # Work folder: local, or staged locally and copied with Hadoop's API.
    remote = "://" in a.work and not a.work.startswith("file:")
    if remote:
        local = a.local_dir or tempfile.mkdtemp(prefix="fsim-spark-")
        work_uri = a.work.rstrip("/")
    else:
        local = os.path.abspath(a.work[7:] if a.work.startswith("file:") else a.work)
        work_uri = "file://" + local
    os.makedirs(local, exist_ok=True)
    L = lambda name: os.path.join(local, name)  # noqa: E731
    # As given: the file table records the root as given (make does the
    # same), so a relative --repo only works where tasks share the cwd.
    repo = a.repo
    bins = {b: os.path.join(bindir, b) for b in BINARIES}
    q = ["-q"]

    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "B": "." if a.ship else task_bin,
        "B_DRIVER": task_bin,
        "REPO": repo,
        "SHARDS": str(shards),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "FSIM_SPARK_FAIL_ONCE": os.environ.get("FSIM_SPARK_FAIL_ONCE", ""),
        "DRIVER_CWD": os.getcwd(),
        "FILES_DRIVER": "",
    }

    views = [0]

    def transform(df, script, *args, **more):
        """df's `line` column piped, partition by partition, through the
        script (bash, run by the executor's JVM): a DataFrame of its lines."""
        views[0] += 1
        view = "fsim_in_%d" % views[0]
        df.select("line").createOrReplaceTempView(view)
        pre = "".join("export %s=%s\n" % (k, shlex.quote(v)) for k, v in list(env.items()) + list(more.items()))
        body = pre + "set -- %s\n" % shlex.join(list(args)) + script
        fmt = r"ROW FORMAT DELIMITED FIELDS TERMINATED BY '\001'"
        return spark.sql(
            "SELECT TRANSFORM(line) %s USING %s AS (line STRING) %s FROM %s" % (fmt, sql_str(body), fmt, view)
        )

    def table_df(rows, schema, name):
        """A DataFrame of driver-side rows (O(files)): on a shared folder
        written as a file that Spark reads (converting many Python rows
        through py4j costs ~10 us each), else created from the rows. The
        last column may hold tabs."""
        if not shared:
            return spark.createDataFrame(list(rows), schema)
        # (Spark's file sources skip names that start with '.' or '_'.)
        os.makedirs(L("driver-tables"), exist_ok=True)
        path = os.path.join(L("driver-tables"), name + ".tsv")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for r in rows:
                f.write("\t".join(str(x) for x in r) + "\n")
        cols = [c.split() for c in schema.split(",")]
        parts = fn.split(fn.col("value"), "\t", len(cols))
        return spark.read.text("file://" + path).select(
            *[parts.getItem(i).cast(t).alias(c) for i, (c, t) in enumerate(cols)])

    timings = []

    jvm_pid = sc._jvm.java.lang.ProcessHandle.current().pid()
    last_cpu = [jvm_cpu(jvm_pid)]
    log("Spark session: %.2f s (JVM CPU %.1f s)" % (time.time() - t_start, last_cpu[0][0]))

    def mark(what, t0):
        timings.append((what, time.time() - t0))
        c = jvm_cpu(jvm_pid)
        lc = last_cpu[0]
        log("%s: %.2f s (JVM CPU %.1f s, its tasks %.1f s)" % (what, time.time() - t0, c[0] - lc[0], c[1] - lc[1]))
        last_cpu[0] = c

    first = fn.substring("line", 1, 1)

    # ---- 1. chunk the shards -------------------------------------------
    t0 = time.time()
    chunk_opts = q + ["--method", a.method, "--avg-size", a.avg] + shlex.split(a.chunk_opts) + ["-j", "1"]
    shard_df = spark.range(0, shards, 1, shards).selectExpr("cast(id as string) as line")
    # On a shared POSIX folder (local mode, one machine, a shared mount) the
    # tasks write the records to files that Spark's text source reads;
    # otherwise they come back through the script transformation, cached.
    # FSIM_SPARK_UNSHARED=1 (tests) takes that path with a local --work.
    shared = not remote and os.environ.get("FSIM_SPARK_UNSHARED") != "1"
    if not shared and not remote:
        log("FSIM_SPARK_UNSHARED=1: the path of a non-shared work folder")
    chunk_parts = L("chunks.parts")
    if shared:
        shutil.rmtree(chunk_parts, ignore_errors=True)
        os.makedirs(chunk_parts)
        tables = L("shard-tables")
        shutil.rmtree(tables, ignore_errors=True)
        os.makedirs(tables)
        raw = transform(shard_df, CHUNK_FILES_SH, *chunk_opts, PARTS=chunk_parts, NPARTS=str(nparts), TABLES=tables)
        if raw.count():
            sys.exit("fsim-spark: the chunk tasks printed lines")
        meta = []
        for name in sorted(os.listdir(tables)):
            if name.startswith("files-"):
                with open(os.path.join(tables, name), encoding="utf-8") as f:
                    meta.extend("T\t" + l.rstrip("\n") for l in f)
        shutil.rmtree(tables)
    else:
        raw = transform(shard_df, CHUNK_SH, *chunk_opts).persist(disk)
        meta = [r.line for r in raw.filter(first.isin("T", "#")).collect()]
    # The file table, built once: shard tables merged in walk order.
    heads, tails, entries, chunk_counts, shard_digest = set(), [], [], 0, 0
    for line in meta:
        if line.startswith("T\t#fsim files"):
            pre, ps = parse_params(line[2:])
            heads.add(join_params(pre, [kv for kv in ps if kv[0] != "shard"]))
        elif line.startswith("T\t#end files"):
            tails.append(parse_params(line[2:])[1])
        elif line.startswith("T\t"):
            pos, rest = line[2:].split("\t", 1)
            entries.append((int(pos), rest))
        elif line.startswith("#end chunks"):
            p = parse_params(line)[1]
            chunk_counts += int(get(p, "records"))
            shard_digest += int(get(p, "digest"), 16)
    if len(heads) != 1 or len(tails) != shards:
        sys.exit("fsim-spark: expected %d shard file tables with one header, got %d headers and %d trailers" % (shards, len(heads), len(tails)))
    files_head = heads.pop()
    if shared:
        # The shards' file tables' trailers carry their records' count and digest.
        chunk_counts = sum(int(get(t_, "records")) for t_ in tails)
        shard_digest = sum(int(get(t_, "digest"), 16) for t_ in tails)
    entries.sort()
    nfiles = len(entries)
    skipped = sum(int(get(t, "skipped")) for t in tails)
    del meta
    mark("chunk %d shards (%d files, %d records)" % (shards, nfiles, chunk_counts), t0)

    # ---- 2. range partition and sort -------------------------------------
    t0 = time.time()
    # File ids are walk positions; they are the file table's ids unless a
    # file was skipped (unreadable) before another.
    dense = all(pos == i for i, (pos, _) in enumerate(entries))
    # On a shared POSIX folder the sort is by files (each chunk task split
    # its records by hash range; each range's task sorts its files with
    # fsim-sort): no record goes through the JVM. Otherwise, and when a
    # file was skipped, Spark's shuffle and sort on text rows.
    file_sort = shared and dense
    if shared:
        # Every range file of every shard: each a chunk file (header, records, trailer).
        records = spark.read.text("file://" + chunk_parts).select(fn.col("value").alias("line")).filter(first != "#")
    else:
        records = raw.filter(~first.isin("T", "#"))
    if dense:
        count, digest = chunk_counts, shard_digest & M128
    else:
        # Rare: renumbered and digested in Python (docs/distributed.md).
        log("%d files skipped while chunking: renumbering the records in Python" % skipped)
        ids = sc.broadcast({pos: i for i, (pos, _) in enumerate(entries)})

        def renumber(rows):
            d = ids.value
            for r in rows:
                h, pos, ln = r.line.split("\t")
                yield "%s\t%010d\t%s" % (h, d[int(pos)], ln)

        rdd = records.rdd.mapPartitions(renumber).persist(disk)

        def part_digest(lines):
            n, s = 0, 0
            for l in lines:
                h, f, ln = l.split("\t")
                s += record_mix(int(h, 16), int(f), int(ln))
                n += 1
            yield (n, s & M128)

        count, digest = rdd.mapPartitions(part_digest).fold((0, 0), lambda x, y: (x[0] + y[0], (x[1] + y[1]) & M128))
        records = spark.createDataFrame(rdd.map(lambda l: (l,)), "line string")
    if count != chunk_counts:
        sys.exit("fsim-spark: %d records renumbered but the shards wrote %d" % (count, chunk_counts))
    # files.tsv, as the merging fsim-chunk run writes it.
    import xxhash

    with open(L(".files.tsv.tmp"), "w", encoding="utf-8", newline="\n") as f:
        f.write(files_head + "\n")
        table = 0
        for i, (_, rest) in enumerate(entries):
            line = "%010d\t%s" % (i, rest)
            table += xxhash.xxh3_128_intdigest(line.encode("utf-8"))
            f.write(line + "\n")
        # table-digest: the file table's own records (sum of their xxh3-128).
        f.write("#end files\tfiles=%d\trecords=%d\tdigest=%s\tskipped=%d\ttable-digest=%s\n"
                % (nfiles, count, hex128(digest), skipped, hex128(table & M128)))
    os.replace(L(".files.tsv.tmp"), L("files.tsv"))
    # For the verification and report tasks (SparkFiles where they run).
    sc.addFile(L("files.tsv"))
    # The file table's header carries its own version (v2): the chunk
    # stream's is v1.
    chunks_head = "#fsim chunks v1" + files_head[len("#fsim files v2"):]
    if not files_head.startswith("#fsim files v2"):
        sys.exit("fsim-spark: expected a '#fsim files v2' header from fsim-chunk, got %r" % files_head)
    head_lines = [chunks_head, "#end chunks\trecords=%d\tdigest=%s" % (count, hex128(digest))]
    parts_dir = work_uri + "/sorted.parts"
    if file_sort:
        # sorted.tsv = its two '#' lines (they sort first) in part-00000,
        # then range r sorted by its task below, part-<r>-r.
        sorted_local = L("sorted.parts")
        shutil.rmtree(sorted_local, ignore_errors=True)
        put_text(sc, parts_dir + "/part-00000", sorted(head_lines))
    else:
        # Equal ranges of the hash (a chunk group never spans two ranges),
        # sorted by the line: fixed-width fields, byte order = (hash, id,
        # length); '#' sorts first, so the header and trailer open range 0.
        sorted_df = (
            records.unionByName(spark.createDataFrame([(l,) for l in head_lines], "line string"))
            .repartition(nparts, range_key(spark, nparts))
            .sortWithinPartitions("line")
        ).persist(disk)
        sorted_df.write.mode("overwrite").text(parts_dir)
        if not shared:
            raw.unpersist()
        mark("shuffle and sort into %d hash ranges" % nparts, t0)

    # ---- 3. spanning forests per range, one union-find -------------------
    t0 = time.time()
    fopts = ["--files-count", str(nfiles), "--kept-counts"]
    if a.method in FEATURE_METHODS:
        fopts.append("--feature-counts")
    kept_dir = work_uri + "/partition.parts"
    if file_sort:
        # One task per range: its files of every chunk task sorted, then
        # reduced by fsim-partition, all where they lie.
        kept_local = L("partition.parts")
        shutil.rmtree(kept_local, ignore_errors=True)
        os.makedirs(kept_local)
        by_range = spark.range(0, nparts, 1, nparts).selectExpr("cast(id as string) as line")
        forest_local = L("forest.parts")
        shutil.rmtree(forest_local, ignore_errors=True)
        os.makedirs(forest_local)
        forest = None
        if transform(by_range, SORT_FOREST_SH, *fopts, KEPT=kept_local, SORTED=sorted_local,
                     CHUNKS=chunk_parts, SORT_MEMORY=a.memory, FOREST=forest_local).count():
            sys.exit("fsim-spark: the forest tasks printed lines")
        # Everything but the per-file kept counts (K lines: summed per
        # component in Spark below) comes to the driver, read from the
        # tasks' files.
        fmeta = []
        for name in sorted(os.listdir(forest_local)):
            if name.startswith("f-"):
                with open(os.path.join(forest_local, name), encoding="utf-8") as f:
                    fmeta.extend(l.rstrip("\n") for l in f)
        kcounts = spark.read.text("file://" + forest_local + "/k-*").select(fn.col("value").alias("line"))
    else:
        forest = transform(sorted_df, FOREST_SH, *fopts).persist(disk)
        kept_df = forest.filter(~first.isin("E", "N", "P", "#", "K"))
        kept_df.write.mode("overwrite").text(kept_dir)
        # Everything but the per-file kept counts (K lines: summed per
        # component in Spark below) comes to the driver.
        fmeta = [r.line for r in forest.filter(first.isin("E", "N", "P", "#")).collect()]
        kcounts = forest.filter(first == "K")
    if file_sort:
        # Listed now that the tasks have written them.
        kept_df = spark.read.text(kept_dir).select(fn.col("value").alias("line"))
    else:
        sorted_df.unpersist()
    if shared:
        shutil.rmtree(chunk_parts, ignore_errors=True)
    parent = list(range(nfiles))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    fcounts = {}
    pruned = set()
    dropped = []
    kept_n, kept_d, dchunks, drecs, limit, edges, seen_n, seen_d = 0, 0, 0, 0, None, 0, 0, 0
    dropped_d = 0
    for line in fmeta:
        tag = line[0]
        if tag == "E":
            _, x, y = line.split("\t")
            rx, ry = find(int(x)), find(int(y))
            if rx != ry:
                # The smaller root wins: the root is the component's smallest id.
                parent[max(rx, ry)] = min(rx, ry)
            edges += 1
        elif tag == "P":
            pruned.add(int(line[2:]))
        elif tag == "N":
            _, x, c = line.split("\t")
            fcounts[int(x)] = fcounts.get(int(x), 0) + int(c)
        elif line.startswith("#dropped\t"):
            _, h, deg, ln, ex = line.split("\t")
            dropped.append((-int(deg), h, line))
        elif line.startswith("#forest\t"):
            p = parse_params(line)[1]
            seen_n += int(get(p, "records"))
            seen_d += int(get(p, "digest"), 16)
            kept_n += int(get(p, "kept"))
            kept_d += int(get(p, "kept_digest"), 16)
            dchunks += int(get(p, "dropped_chunks"))
            drecs += int(get(p, "dropped_records"))
            dropped_d += int(get(p, "dropped_digest"), 16)
            limit = get(p, "limit")
    del fmeta
    if (seen_n, seen_d & M128) != (count, digest):
        sys.exit("fsim-spark: the hash ranges hold %d records (digest %s), the shards wrote %d (digest %s)"
                 % (seen_n, hex128(seen_d & M128), count, hex128(digest)))
    kept_d &= M128
    labels = [find(i) for i in range(nfiles)]
    sizes = {}
    for lab in labels:
        sizes[lab] = sizes.get(lab, 0) + 1
    multi = [i for i in range(nfiles) if sizes[labels[i]] > 1]
    ncomp = sum(1 for lab, n in sizes.items() if n > 1)
    # fsim-partition writes the chunking parameters in this order
    # (formats::CHUNK_PARAM_KEYS), whatever the file table's.
    params = parse_params(files_head)[1]
    params = [kv for k in CHUNK_PARAM_KEYS for kv in params if kv[0] == k]
    # partition.tsv = partition.parts/part-* concatenated: its header
    # (part-00000, a prefix of the first range's name), the kept records
    # range by range (as the tasks wrote them), then part-99999: the F lines
    # (O(files)), the top dropped chunks and the trailer. Written at the end.
    part_head = join_params("#fsim partition v1", params + [("files", str(nfiles)), ("limit", limit or "0")])
    part_trailer = (
        "#end partition\trecords=%d\tdigest=%s\tfiles=%d\tcomponents=%d\tdropped_chunks=%d\tdropped_records=%d%s"
        % (kept_n, hex128(kept_d), len(multi), ncomp, dchunks, drecs,
           "\tpruned_files=%d\tdropped_digest=%s" % (len(pruned), hex128(dropped_d & M128))
           if dchunks else ""))
    flines = []
    for i in multi:
        size, _, content, _, _ = entries[i][1].split("\t", 4)
        extra = "\t%d" % fcounts.get(i, 0) if a.method in FEATURE_METHODS else ""
        flines.append("F\t%010d\t%010d\t%s\t%s%s" % (i, labels[i], size, content, extra))
    part_tail = flines + [line for _, _, line in sorted(dropped)[:20]] + [part_trailer]
    del parent, sizes
    mark("forests of %d ranges (%d edges), union-find: %d components" % (nparts, edges, ncomp), t0)

    # ---- 4. the plan from per-component figures; bins analysed and -------
    # verified in parallel
    t0 = time.time()
    # Kept records and chunks per component: the tasks' per-file counts (K
    # lines) joined with the file -> component map (broadcast, O(files)) and
    # summed per component in Spark; O(components) to the driver.
    comp_map = table_df(((i, labels[i]) for i in multi), "fid int, comp int", "comp_map")
    kparts = fn.split("line", "\t")
    per_comp = {
        r.comp: (r.records, r.chunks)
        for r in kcounts.select(
            kparts.getItem(1).cast("int").alias("fid"),
            kparts.getItem(2).cast("long").alias("records"),
            kparts.getItem(3).cast("long").alias("chunks"),
        ).join(fn.broadcast(comp_map), "fid").groupBy("comp")
        .agg(fn.sum("records").alias("records"), fn.sum("chunks").alias("chunks")).collect()
    }
    if forest is not None:
        forest.unpersist()
    shutil.rmtree(L("forest.parts"), ignore_errors=True)
    csizes = {}
    for i in multi:
        csizes[labels[i]] = csizes.get(labels[i], 0) + 1
    with open(L(".components.tsv.tmp"), "w", encoding="utf-8", newline="\n") as f:
        f.write(part_head + "\n")
        for c in sorted(csizes):
            r, ch = per_comp.get(c, (0, 0))
            f.write("C\t%d\t%d\t%d\t%d\n" % (c, csizes[c], r, ch))
        f.write(part_trailer + "\n")
    os.replace(L(".components.tsv.tmp"), L("components.tsv"))
    del per_comp
    # fsim-binpack's plan from those figures (O(components)): the bins
    # header, each bin's '#bin' line and components, the bins trailer.
    run([bins["fsim-binpack"]] + q + ["--components", "--capacity", a.capacity, "--plan", L("plan.tsv"), "-o", L("binplan.tsv"), L("components.tsv")])
    with open(L("binplan.tsv"), encoding="utf-8") as f:
        plan_lines = f.read().splitlines()
    bins_head, bins_trailer = plan_lines[0], plan_lines[-1]
    bin_lines, bin_of_comp = [], {}
    for l in plan_lines[1:-1]:
        if l.startswith("#bin\t"):
            bin_lines.append(l)
        else:
            bin_of_comp[int(l[2:])] = len(bin_lines)
    del plan_lines
    nbins = len(bin_lines)
    # The bins file's '#bin' and F lines (files in id order within a bin),
    # O(files); the records are routed to their bin by file id.
    bin_files = [[] for _ in range(nbins)]
    for i, fl in zip(multi, flines):
        bin_files[bin_of_comp[labels[i]] - 1].append(fl)
    routes = [(i, bin_of_comp[labels[i]]) for i in multi]
    del labels, multi, flines, bin_of_comp
    # fsim-analyze's line source is on by default: off here unless lines_on.
    aopts = ["--min-percent", a.floor, "--capacity", a.capacity] + ([] if lines_on else ["--no-line-source"])
    verified_name = "verified.tsv" if a.verify != "0" else None
    outputs = [("P", "pairs.tsv")] + ([("V", "verified.tsv")] if verified_name else []) + ([("R", "regions.tsv")] if verified_name and a.regions == "1" else [])
    heads_tails = {}
    out, body = None, None
    if nbins == 0:
        # No component: one task analyses an empty bins file (and runs the
        # line source, if any); the rest as below.
        zero = spark.range(0, 1, 1, 1).selectExpr("cast(id as string) as line")
        out = transform(
            zero, ZERO_SH, *aopts, BINS_HEAD=bins_head, BINS_TRAILER=bins_trailer, VERIFY=a.verify, REGIONS=a.regions,
            VMIN=str(a.min_percent), THREADS=str(par), FILES_DRIVER=SparkFiles.get("files.tsv"),
            LINE_OPTS=" ".join(line_opts) if lines_on else "",
        ).persist(disk)
        hadoop_delete(sc, work_uri + "/bins.parts")
    else:
        # Consecutive bins per task (bins.tsv = the tasks' slices in bin
        # order), cut so that the tasks get about the same records.
        ntasks = min(nbins, 2 * par)
        brecs = [int(l.split("\trecords=", 1)[1].split("\t", 1)[0]) for l in bin_lines]
        total, acc, task_of_bin = max(1, sum(brecs)), 0, []
        for n in brecs:
            task_of_bin.append(min(ntasks - 1, acc * ntasks // total))
            acc += n
        keys = partition_keys(spark, ntasks)
        pre, ps = parse_params(bins_head)
        i = [k for k, _ in ps].index("bins")
        bins_pre = join_params(pre, ps[:i]) + "\t"
        bins_post = "".join("\t%s=%s" % kv for kv in ps[i + 1:])
        # The file -> bin and task map, for Spark's routing of the records
        # and of the line source's pairs (not needed by the routing by files).
        fmap = None
        if not file_sort or lines_on:
            fmap = table_df(((f, b, keys[task_of_bin[b - 1]]) for f, b in routes), "fid int, bin int, key int", "fmap")
        binmeta = []
        routed_local = L("routed.parts")
        if file_sort:
            # The kept records routed by files, as the sort: one task per
            # range splits its kept file by analysis task (fsim-sort
            # --split-by-file, the file -> task map written here: O(files));
            # each analysis task reads its files of every range.
            with open(L(".route.tsv"), "w", encoding="utf-8", newline="\n") as f:
                for fid, b in routes:
                    f.write("%d\t%d\n" % (fid, task_of_bin[b - 1]))
            shutil.rmtree(routed_local, ignore_errors=True)
            os.makedirs(routed_local)
            by_range = spark.range(0, nparts, 1, nparts).selectExpr("cast(id as string) as line")
            n_routed = transform(by_range, ROUTE_SH, ROUTE=L(".route.tsv"), KEPT=L("partition.parts"),
                                 ROUTED=routed_local).count()
            if n_routed:
                sys.exit("fsim-spark: the route tasks printed %d lines" % n_routed)
            os.remove(L(".route.tsv"))
            routed = None
            for t_ in sorted(set(task_of_bin)):
                binmeta.append((keys[t_], 0, 0, "T\t%d" % t_))
        else:
            routed = (
                kept_df.withColumn("fid", fn.substring("line", 34, 10).cast("int"))
                .join(fn.broadcast(fmap), "fid")
                .select("key", "bin", fn.lit(2).alias("kind"), fn.lit(0).alias("seq"), "line")
            )
        for b in range(nbins):
            k = keys[task_of_bin[b]]
            binmeta.append((k, b + 1, 0, bin_lines[b]))
            binmeta.extend((k, b + 1, j + 1, fl) for j, fl in enumerate(bin_files[b]))
        del routes, bin_files
        meta_df = table_df(binmeta, "key int, bin int, seq int, line string", "binmeta").select(
            "key", "bin", fn.lit(1).alias("kind"), "seq", "line")
        del binmeta
        by_bin = meta_df if routed is None else routed.unionByName(meta_df)
        if lines_on:
            # The line source's pairs, computed by one task over the file
            # table (the selected small text files and catalogs read where
            # it runs, within --capacity), each routed to the task of the
            # bin of its first file, else of its second (a pair the chunks
            # also found is in that bin), else to the first task; they
            # follow the task's bins as `L` lines.
            lines_df = transform(spark.range(0, 1, 1, 1).selectExpr("cast(id as string) as line"), LINES_SH,
                                 *(aopts + line_opts), THREADS=str(par), FILES_DRIVER=SparkFiles.get("files.tsv"))
            fa = fmap.select(fn.col("fid").alias("a"), fn.col("key").alias("ka"))
            fb = fmap.select(fn.col("fid").alias("b"), fn.col("key").alias("kb"))
            lpairs = (
                lines_df.select(fn.substring("line", 1, 10).cast("int").alias("a"),
                                fn.substring("line", 12, 10).cast("int").alias("b"), "line")
                .join(fn.broadcast(fa), "a", "left").join(fn.broadcast(fb), "b", "left")
                .select(fn.coalesce("ka", "kb", fn.lit(keys[0])).alias("key"), fn.lit(1 << 30).alias("bin"),
                        fn.lit(3).alias("kind"), fn.lit(0).alias("seq"), fn.concat(fn.lit("L\t"), "line").alias("line"))
            )
            by_bin = by_bin.unionByName(lpairs)
        by_bin = by_bin.repartition(ntasks, "key").sortWithinPartitions("bin", "kind", "seq", "line")
        bparts_local = L("bins.parts") if shared else ""
        if shared:
            shutil.rmtree(bparts_local, ignore_errors=True)
            os.makedirs(bparts_local)
        out = transform(
            by_bin, ANALYZE_FILES_SH if file_sort else ANALYZE_SH, *aopts, ROUTED=routed_local,
            NFILES=str(nfiles), BINS_PRE=bins_pre, BINS_POST=bins_post, VERIFY=a.verify, REGIONS=a.regions, VMIN=str(a.min_percent),
            THREADS=str(max(1, par // ntasks)), FILES_DRIVER=SparkFiles.get("files.tsv"), BPARTS=bparts_local,
            LINE_OPTS=" ".join(line_opts) if lines_on else "",
        ).persist(disk)
    heads = [r.line for r in out.filter(fn.substring("line", 3, 1) == "#").collect()]
    body = out.filter(fn.substring("line", 3, 1) != "#").select(
        fn.substring("line", 1, 1).alias("tag"),
        fn.substring("line", 3, 21).alias("ab"),
        fn.substring("line", 25, 12).alias("seq"),
        fn.expr("substring(line, 38)").alias("line"),
    )
    # The pairs, verified pairs and regions: sorted by Spark, written as
    # ranges; their header and trailer as part-00000 and part-99999.
    # One job for all of them: ranges of (tag, a, b, seq), each task
    # writing its rows into its tag's folder, then the folders renamed.
    written = outputs + ([] if shared or nbins == 0 else [("B", "bins.tsv")])
    tmp_uri = work_uri + "/outputs.tmp"
    (body.filter(body.tag.isin([t_ for t_, _ in written])).repartitionByRange(nparts, "tag", "ab", "seq")
     .sortWithinPartitions("tag", "ab", "seq").select("tag", "line")
     .write.mode("overwrite").partitionBy("tag").text(tmp_uri))
    for tag, name in written:
        hadoop_move(sc, tmp_uri + "/tag=" + tag, work_uri + "/" + name.replace(".tsv", ".parts"))
    hadoop_delete(sc, tmp_uri)
    for tag, name in written:
        if tag == "B":
            continue
        hs = [h[4:] for h in heads if h[0] == tag]
        fheads = sorted(set(h for h in hs if h.startswith("#fsim ")))
        if len(fheads) != 1:
            sys.exit("fsim-spark: expected one header for %s from the analysis tasks, got %r" % (name, fheads))
        heads_tails[name] = ([fheads[0]], [sum_trailers([h for h in hs if h.startswith("#end ")])])
    heads_tails["bins.tsv"] = ([bins_head], [bins_trailer])
    heads_tails["partition.tsv"] = ([part_head], part_tail)
    del part_tail
    # Each NAME.tsv of make report = WORK/NAME.parts/part-* concatenated
    # (byte order of the names): no copy through the driver.
    for name, (head, tail) in heads_tails.items():
        pdir = work_uri + "/" + name.replace(".tsv", ".parts")
        put_text(sc, pdir + "/part-00000", head)
        put_text(sc, pdir + "/part-99999", tail)
    # Kept until the outputs are written: a lost cached partition of the
    # analysis is computed again from them.
    shutil.rmtree(L("driver-tables"), ignore_errors=True)
    shutil.rmtree(L("routed.parts"), ignore_errors=True)
    mark("plan, analysis and verification of %d bins" % nbins, t0)

    # ---- 5. the reports, as tasks ------------------------------------------
    # fsim-report reads the verified pairs (the pairs when VERIFY=0), as
    # make's reports do, within --memory. On a shared POSIX folder one
    # task per format reads the parts where they lie and writes the report
    # beside them; otherwise one task is fed the pairs in order by Spark
    # and sends the reports back, base64 lines the driver decodes as they
    # come (the report's own bytes: the driver holds none of the pairs).
    t0 = time.time()
    formats = a.formats.split()
    src_tag, src_name = ("V", "verified.tsv") if verified_name else ("P", "pairs.tsv")
    ropts = q + ["--memory", a.memory, "--min-percent", a.min_percent, "--min-bytes", a.min_bytes]
    renv = dict(HTML_MAX_VIEWS=a.html_max_views, FILES_DRIVER=SparkFiles.get("files.tsv"))
    if formats and shared:
        fmt_df = spark.range(0, len(formats), 1, len(formats)).select(
            fn.element_at(fn.array(*[fn.lit(f) for f in formats]), fn.col("id").cast("int") + 1).alias("line"))
        done = transform(fmt_df, REPORT_FILES_SH, *ropts, SRC=L(src_name.replace(".tsv", ".parts")), OUT=local, **renv).collect()
        if sorted(r.line for r in done) != sorted(formats):
            sys.exit("fsim-spark: the report tasks wrote %r, expected %r" % (sorted(r.line for r in done), formats))
    elif formats:
        head, tail = heads_tails[src_name]
        ends = spark.createDataFrame(
            [(0, "", "", l) for l in head] + [(2, "", "", l) for l in tail], "k int, ab string, seq string, line string")
        pairs_in = ends
        if body is not None:
            pairs_in = ends.unionByName(body.filter(body.tag == src_tag).select(fn.lit(1).alias("k"), "ab", "seq", "line"))
        rep = transform(pairs_in.repartition(1).sortWithinPartitions("k", "ab", "seq"), REPORT_SH, *ropts,
                        FORMATS=" ".join(formats), **renv)
        import base64

        outs = {}
        try:
            for r in rep.toLocalIterator():
                fmt, _, data = r.line.split("\t", 2)
                if fmt not in outs:
                    outs[fmt] = open(L(".report.%s.tmp" % fmt), "wb")
                outs[fmt].write(base64.b64decode(data))
        finally:
            for f in outs.values():
                f.close()
        for fmt in formats:
            if fmt not in outs:
                open(L(".report.%s.tmp" % fmt), "wb").close()
            os.replace(L(".report.%s.tmp" % fmt), L("report." + fmt))
    if out is not None:
        out.unpersist()
    mark("reports (%s)" % " ".join(formats), t0)
    if remote:
        hadoop_copy_up(sc, local, work_uri)
    log("done in %.2f s: %s" % (time.time() - t_start, a.work))
    log_cpu(sc, master)
    spark.stop()


def range_key(spark, n):
    """A column routing every record to the partition of its hash range by
    Spark's hash partitioning (pmod(murmur3(key), n)): range r = the r-th
    of n equal ranges of the hash's first 32 bits (MD5 and the feature
    hashes are uniform, so no sampling pass); '#' lines go to range 0. The
    key of range r is the smallest integer whose hash lands in partition r."""
    from pyspark.sql import functions as fn

    keys = partition_keys(spark, n)
    r = fn.when(fn.substring("line", 1, 1) == "#", fn.lit(0)).otherwise(
        fn.floor(fn.conv(fn.substring("line", 1, 8), 16, 10).cast("long") * n / (1 << 32)).cast("int"))
    return fn.element_at(fn.array(*[fn.lit(keys[i]) for i in range(n)]), r + 1).cast("int")


def partition_keys(spark, n):
    """keys[p]: the smallest integer that Spark's hash partitioning
    (pmod(murmur3(key), n)) sends to partition p."""
    keys = {}
    lo = 0
    while len(keys) < n:
        rows = spark.sql("SELECT id, pmod(hash(CAST(id AS INT)), %d) AS p FROM range(%d, %d)" % (n, lo, lo + 64 * n)).collect()
        for r in rows:
            keys.setdefault(r.p, r.id)
        lo += 64 * n
    return [keys[i] for i in range(n)]


def jvm_cpu(pid):
    """(CPU seconds of the JVM, of its finished task scripts) from /proc."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return ((int(f[11]) + int(f[12])) / tick, (int(f[13]) + int(f[14])) / tick)
    except OSError:
        return (0.0, 0.0)


def log_cpu(sc, master):
    """CPU seconds (user + system) of this driver, the binaries it ran, its
    JVM and the JVM's task scripts (in local mode: every task)."""
    try:
        import resource

        tick = os.sysconf("SC_CLK_TCK")
        pid = sc._jvm.java.lang.ProcessHandle.current().pid()
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        jvm, tasks = (int(f[11]) + int(f[12])) / tick, (int(f[13]) + int(f[14])) / tick
        me = resource.getrusage(resource.RUSAGE_SELF)
        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        py, bins = me.ru_utime + me.ru_stime, ch.ru_utime + ch.ru_stime
        log("CPU %.1f s: driver Python %.1f s, its binaries %.1f s, JVM %.1f s, JVM's tasks %.1f s%s"
            % (py + bins + jvm + tasks, py, bins, jvm, tasks,
               "" if master.startswith("local") else " (the executors' are not counted)"))
        hwm = 0
        for l in open("/proc/%d/status" % pid):
            if l.startswith("VmHWM:"):
                hwm = int(l.split()[1])
        log("peak RSS: driver Python %.0f MB, its binaries %.0f MB (the largest child, its fork of Python included), JVM %.0f MB%s"
            % (me.ru_maxrss / 1024, ch.ru_maxrss / 1024, hwm / 1024,
               " (driver and executors)" if master.startswith("local") else " (the driver's)"))
    except Exception as e:  # noqa: BLE001 (a figure of the log only)
        log("CPU: not measured (%s)" % e)


def put_text(sc, uri, lines):
    """Write lines (newline-terminated) to uri: a local file, or through
    Hadoop's FileSystem API."""
    data = "".join(l + "\n" for l in lines).encode("utf-8")
    if uri.startswith("file://"):
        os.makedirs(os.path.dirname(uri[7:]), exist_ok=True)
        with open(uri[7:], "wb") as f:
            f.write(data)
        return
    fs, path = hadoop_fs(sc, uri)
    out = fs.create(path, True)
    try:
        out.write(bytearray(data))
    finally:
        out.close()


def hadoop_fs(sc, uri):
    jvm = sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(sc._jsc.hadoopConfiguration()), path


def hadoop_delete(sc, uri):
    fs, path = hadoop_fs(sc, uri)
    if fs.exists(path):
        fs.delete(path, True)


def hadoop_move(sc, src, dst):
    """Replace the folder dst by src (an empty folder when src is missing:
    a Spark write makes no folder for a value without rows)."""
    fs, d = hadoop_fs(sc, dst)
    if fs.exists(d):
        fs.delete(d, True)
    _, sp = hadoop_fs(sc, src)
    if fs.exists(sp):
        if not fs.rename(sp, d):
            sys.exit("fsim-spark: cannot rename %s to %s" % (src, dst))
    else:
        fs.mkdirs(d)


def hadoop_copy_up(sc, local, uri):
    """Copy the driver's finished files to the Hadoop-compatible --work."""
    jvm = sc._jvm
    for name in sorted(os.listdir(local)):
        p = os.path.join(local, name)
        if os.path.isfile(p) and not name.startswith("."):
            fs, dst = hadoop_fs(sc, uri + "/" + name)
            fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path("file://" + p), dst)


if __name__ == "__main__":
    main()
