#!/usr/bin/env python3
"""fsim-spark: the fsim pipeline on Apache Spark (PySpark), docs/distributed.md.

fsim's own binaries do the work; every stage is a Spark SQL script
transformation (`SELECT TRANSFORM ... USING`), whose tasks run them (the
scripts in scripts/spark/tasks/, one per task). The binaries' options are
passed only when given: their own defaults are the only ones, and what the
driver must know of them it asks them (`fsim-analyze --print-settings`, the
headers they write); the parts' headers and trailers are joined by
`fsim-join`. No record
goes through Python; on a shared POSIX work folder none goes through the JVM
either (the sort and the routing are by files); otherwise Spark's shuffles
and sorts on text DataFrames move them. Python, on the driver, handles file
names, summary lines and what is O(files).

1. chunking: one task per shard runs `fsim-chunk --shard I/N` (file ids are
   walk positions), its records split by hash range (`fsim-sort
   --split-ranges`) on a shared folder; the driver merges the shards' file
   tables into files.tsv; the archives the shards left unlisted get their
   members from tasks (`fsim-chunk --members-of`), inserted after them;
2. the sort: range r's task sorts the r-th files of every shard (`fsim-sort
   --records-only`), or Spark sorts the ranges; WORK/sorted.parts/part-*
   concatenated is fsim-sort's sorted.tsv;
3. partitioning: every hash range is reduced by `fsim-partition
   --emit-forest --kept-counts` to its kept records (WORK/partition.parts),
   a spanning forest of its file graph and per-file kept counts; the driver
   merges the forests with one union-find (smallest id labels, as
   fsim-partition) and sums the counts per component (`fsim-partition
   --merge-forests --components-out`);
4. the bin plan from per-component figures: `fsim-binpack --components`
   on the driver;
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
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace as NS

FEATURE_METHODS = {"sif", "mod", "min", "sketch", "bsw-min", "supershingle", "oneperm", "bbit"}
# The tasks' binaries (shipped with --ship; fsim-join renumbers records
# when archives' members were listed; fsim-pdftext is the PDF extractor where an
# executor has no pdftotext: without it, PDFs there keep their raw view);
# the driver also runs fsim-analyze --print-settings, fsim-partition
# --merge-forests, fsim-binpack and fsim-join itself.
BINARIES = ["fsim-chunk", "fsim-sort", "fsim-partition", "fsim-binpack", "fsim-analyze", "fsim-verify", "fsim-report",
            "fsim-join", "fsim-pdftext"]
# The tasks' shell scripts (pre.sh, then one per task): located and shipped
# as the binaries are (beside this file on every node, or --ship).
TASKS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tasks")
# What Spark runs as a task (`/bin/bash -c`), after the exports and `set --`
# of `Ctx.transform`: find the scripts ($S: shipped ones in the working
# folder, else the SparkFiles root in local mode), source pre.sh, then the
# task's script.
BOOTSTRAP = r"""S=$TASKS
if [ "$S" = . ] && [ ! -f ./pre.sh ]; then S=$TASKS_DRIVER; fi
case $S in /*) ;; *) S=$PWD/$S ;; esac
[ -f "$S/pre.sh" ] && [ -f "$S/%(task)s.sh" ] || {
  echo "fsim-spark: the task scripts pre.sh and %(task)s.sh are not in $S (give --ship, or install scripts/spark/tasks at the same path on every node)" >&2
  exit 2
}
. "$S/pre.sh"
. "$S/%(task)s.sh"
"""


def log(msg):
    print("fsim-spark: " + msg, file=sys.stderr, flush=True)


def run(cmd, capture=False):
    r = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None, text=capture)
    if r.returncode != 0:
        sys.exit("fsim-spark: failed (%d): %s" % (r.returncode, shlex.join(cmd)))
    return r.stdout


def parse_params(line):
    """'#fsim kind v1\tk=v...' -> (prefix, [(k, v)...])."""
    fields = line.split("\t")
    return fields[0], [tuple(f.split("=", 1)) for f in fields[1:]]


def get(params, key):
    for k, v in params:
        if k == key:
            return v
    return None


def sql_str(s):
    """A Spark SQL string literal."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def opt(flag, value):
    """[flag, value] when the option was given, else []: the binary's own
    default applies (as make passes a variable only when it is set)."""
    return [] if value is None else [flag, str(value)]


def parse_args(argv):
    """The options mirror make's variables. Those of the binaries default to
    None: passed only when given, so the binaries' defaults (the
    recommended settings, docs/quality.md) are the only ones."""
    ap = argparse.ArgumentParser(prog="fsim-spark", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="folder to analyse, readable at the same path on every executor")
    ap.add_argument("--work", required=True, help="output folder: a local path or any Hadoop-compatible URI")
    ap.add_argument("--master", default=None, help="Spark master (default: spark-submit's, else local[2])")
    ap.add_argument("--bin", default=None, help="folder of the fsim binaries on every node (default: PATH)")
    ap.add_argument("--ship", action="store_true",
                    help="ship the binaries and the task scripts with SparkContext.addFile instead")
    ap.add_argument("--shards", type=int, default=0, help="chunk tasks (default: 2 x default parallelism)")
    ap.add_argument("--partitions", type=int, default=0, help="hash ranges (default: 2 x default parallelism)")
    ap.add_argument("--max-failures", type=int, default=4, help="attempts per task (spark.task.maxFailures)")
    ap.add_argument("--avg", help="make's AVG: fsim-chunk --avg-size")
    ap.add_argument("--method", help="make's METHOD: fsim-chunk --method")
    ap.add_argument("--chunk-opts", default="", help="more fsim-chunk options, as make's METHOD_OPTS")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="threads of the driver-side stages")
    ap.add_argument("--capacity", help="make's CAPACITY: fsim-binpack's and fsim-analyze's --capacity")
    ap.add_argument("--floor", help="make's FLOOR: fsim-analyze --min-percent")
    ap.add_argument("--min-percent", help="make's MIN_PERCENT: fsim-verify's and fsim-report's --min-percent")
    ap.add_argument("--lines", help="make's LINES: fsim-analyze --line-pairs-below (any: every size; 0: none)")
    ap.add_argument("--catalogs", help="make's CATALOGS: 1 --line-catalogs, else --no-line-catalogs")
    ap.add_argument("--line-floor", help="make's LINE_FLOOR: fsim-analyze --line-min-percent")
    ap.add_argument("--min-bytes", help="make's MIN_BYTES: fsim-report --min-bytes")
    ap.add_argument("--verify", default="1", help="make's VERIFY: 0 to skip fsim-verify (and the line source)")
    ap.add_argument("--regions", default="0", help="make's REGIONS: 1 to write the regions of every verified pair")
    ap.add_argument("--formats", default="txt json", help="make's FORMATS: the reports written")
    ap.add_argument("--memory", help="make's MEMORY: each sort task's and each report's --memory")
    ap.add_argument("--html-max-views", help="make's HTML_MAX_VIEWS: fsim-report --html-max-views")
    ap.add_argument("--site-names", help="make's SITE_NAMES: fsim-partition --site-names (0: off)")
    ap.add_argument("--local-dir", default=None, help="driver staging folder when --work is not local")
    return ap.parse_args(argv)


def line_source(a, analyze):
    """(fsim-analyze's line options as make passes them, whether the line
    source runs): asked of fsim-analyze itself (--print-settings), so its
    defaults decide, not a copy of them. Off without verification, as in
    make (VERIFY=0: --no-line-source)."""
    if a.verify == "0":
        return [], False
    opts = opt("--line-pairs-below", a.lines)
    if a.catalogs is not None:
        opts.append("--line-catalogs" if a.catalogs == "1" else "--no-line-catalogs")
    opts += opt("--line-min-percent", a.line_floor)
    # The lines of a site's theme count for no pair, as make passes it.
    opts += opt("--site-names", a.site_names)
    # The line source's pairs are cut at fsim-verify's threshold, as make
    # cuts them (its default is fsim-verify's).
    opts += opt("--verify-min-percent", a.min_percent)
    settings = dict(kv.split("=", 1) for kv in run([analyze, "--print-settings"] + opts, capture=True).split())
    return opts, settings["line-source"] == "1"


class Ctx:
    """One run: the Spark session, the options, the work folder and the
    binaries, and what every stage uses (transform, table_df, mark)."""

    def __init__(self, a):
        from pyspark import SparkConf, SparkFiles, StorageLevel
        from pyspark.sql import SparkSession

        self.a, self.t_start = a, time.time()
        conf = self.spark_conf(SparkConf().setAppName("fsim-spark"))
        self.spark = SparkSession.builder.config(conf=conf).getOrCreate()
        self.sc = self.spark.sparkContext
        self.sc.setLogLevel("WARN")
        self.par = self.sc.defaultParallelism
        self.shards = a.shards or 2 * self.par
        self.nparts = a.partitions or 2 * self.par
        # The only shuffle without an explicit count (the plan's per-component
        # sums) gets as many partitions as the hash ranges, not Spark's 200.
        if not conf.contains("spark.sql.shuffle.partitions"):
            self.spark.conf.set("spark.sql.shuffle.partitions", str(self.nparts))
        self.disk = StorageLevel.MEMORY_AND_DISK
        self.find_binaries(SparkFiles)
        self.work_folder()
        self.views, self.jvm_pid = 0, self.sc._jvm.java.lang.ProcessHandle.current().pid()
        self.last_cpu = jvm_cpu(self.jvm_pid)
        log("Spark session: %.2f s (JVM CPU %.1f s)" % (time.time() - self.t_start, self.last_cpu[0]))

    def spark_conf(self, conf):
        a = self.a
        master = a.master or conf.get("spark.master", None) or "local[2]"
        # Local mode ignores spark.task.maxFailures: local[N,F] is how it retries.
        if master.startswith("local[") and "," not in master:
            master = "%s,%d]" % (master[:-1], a.max_failures)
        self.master = master
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
        return conf

    def find_binaries(self, SparkFiles):
        """Binaries: --bin DIR on every node, PATH, or shipped with addFile
        (with the task scripts); the environment of every task."""
        a = self.a
        bindir = a.bin or os.path.dirname(shutil.which("fsim-chunk") or "")
        if not bindir or not os.path.exists(os.path.join(bindir, "fsim-chunk")):
            sys.exit("fsim-spark: fsim binaries not found: give --bin DIR or put them on PATH")
        bindir = os.path.abspath(bindir)
        self.bins = {b: os.path.join(bindir, b) for b in BINARIES}
        task_bin, tasks = bindir, TASKS_DIR
        if a.ship:
            for b in BINARIES:
                self.sc.addFile(os.path.join(bindir, b))
            for s in sorted(os.listdir(TASKS_DIR)):
                if s.endswith(".sh"):
                    self.sc.addFile(os.path.join(TASKS_DIR, s))
            # YARN and standalone executors find the files in their working
            # folder; local mode in the SparkFiles root.
            task_bin = tasks = SparkFiles.getRootDirectory()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "B": "." if a.ship else task_bin,
            "B_DRIVER": task_bin,
            "TASKS": "." if a.ship else tasks,
            "TASKS_DRIVER": tasks,
            # As given: the file table records the root as given (make does
            # the same), so a relative --repo only works where tasks share the cwd.
            "REPO": a.repo,
            "SHARDS": str(self.shards),
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "FSIM_SPARK_FAIL_ONCE": os.environ.get("FSIM_SPARK_FAIL_ONCE", ""),
            "DRIVER_CWD": os.getcwd(),
            "FILES_DRIVER": "",
        }

    def work_folder(self):
        """Work folder: local, or staged locally and copied with Hadoop's
        API. `shared`: the tasks share it as a POSIX folder (the sort and
        the routing by files); FSIM_SPARK_UNSHARED=1 (tests) takes the
        other path with a local --work."""
        a = self.a
        self.remote = "://" in a.work and not a.work.startswith("file:")
        if self.remote:
            self.local = a.local_dir or tempfile.mkdtemp(prefix="fsim-spark-")
            self.work_uri = a.work.rstrip("/")
        else:
            self.local = os.path.abspath(a.work[7:] if a.work.startswith("file:") else a.work)
            self.work_uri = "file://" + self.local
        os.makedirs(self.local, exist_ok=True)
        self.shared = not self.remote and os.environ.get("FSIM_SPARK_UNSHARED") != "1"
        if not self.shared and not self.remote:
            log("FSIM_SPARK_UNSHARED=1: the path of a non-shared work folder")

    def L(self, name):
        """A file or folder of the driver's copy of the work folder."""
        return os.path.join(self.local, name)

    def fresh(self, name):
        """An empty folder of the work folder (removed first)."""
        shutil.rmtree(self.L(name), ignore_errors=True)
        os.makedirs(self.L(name))
        return self.L(name)

    def range_df(self, n):
        """n rows, one per partition: 0 .. n-1 as the `line` column."""
        return self.spark.range(0, n, 1, n).selectExpr("cast(id as string) as line")

    def transform(self, df, task, *args, **more):
        """df's `line` column piped, partition by partition, through
        tasks/<task>.sh (bash, run by the executor's JVM) with the binaries'
        options `args` and the variables `more`: a DataFrame of its lines."""
        self.views += 1
        view = "fsim_in_%d" % self.views
        df.select("line").createOrReplaceTempView(view)
        env = list(self.env.items()) + list(more.items())
        body = "".join("export %s=%s\n" % (k, shlex.quote(v)) for k, v in env)
        body += "set -- %s\n" % shlex.join(list(args)) + BOOTSTRAP % {"task": task}
        fmt = r"ROW FORMAT DELIMITED FIELDS TERMINATED BY '\001'"
        return self.spark.sql(
            "SELECT TRANSFORM(line) %s USING %s AS (line STRING) %s FROM %s" % (fmt, sql_str(body), fmt, view))

    def table_df(self, rows, schema, name):
        """A DataFrame of driver-side rows (O(files)): on a shared folder
        written as a file that Spark reads (converting many Python rows
        through py4j costs ~10 us each), else created from the rows. The
        last column may hold tabs."""
        from pyspark.sql import functions as fn

        if not self.shared:
            return self.spark.createDataFrame(list(rows), schema)
        # (Spark's file sources skip names that start with '.' or '_'.)
        os.makedirs(self.L("driver-tables"), exist_ok=True)
        path = os.path.join(self.L("driver-tables"), name + ".tsv")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for r in rows:
                f.write("\t".join(str(x) for x in r) + "\n")
        cols = [c.split() for c in schema.split(",")]
        parts = fn.split(fn.col("value"), "\t", len(cols))
        return self.spark.read.text("file://" + path).select(
            *[parts.getItem(i).cast(t).alias(c) for i, (c, t) in enumerate(cols)])

    def read_lines(self, folder, prefix):
        """The lines of the files of folder whose names start with prefix,
        in name order (the tasks' small outputs the driver reads)."""
        lines = []
        for name in sorted(os.listdir(folder)):
            if name.startswith(prefix):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    lines.extend(l.rstrip("\n") for l in f)
        return lines

    def run_bin(self, name, *args):
        """One of the binaries, run on the driver (O(components) work)."""
        run([self.bins[name]] + list(args))

    def mark(self, what, t0):
        """Log a stage's wall time and the CPU of the JVM and its tasks."""
        c, lc = jvm_cpu(self.jvm_pid), self.last_cpu
        log("%s: %.2f s (JVM CPU %.1f s, its tasks %.1f s)" % (what, time.time() - t0, c[0] - lc[0], c[1] - lc[1]))
        self.last_cpu = c


def first():
    """The first character of the `line` column (what kind of line)."""
    return fn.substring("line", 1, 1)


# ---- 1. chunk the shards ---------------------------------------------------

def chunk(c):
    """One task per shard: `fsim-chunk --shard I/N` (file ids = walk
    positions). On a shared POSIX folder (local mode, one machine, a shared
    mount) the tasks split their records by hash range into files and write
    their file tables beside them; otherwise the records and tables come
    back through the script transformation, cached. Returns the run's chunk
    state `ch` (the file table merged, the shards' counts and digests)."""
    t0, a = time.time(), c.a
    chunk_opts = ["-q"] + opt("--method", a.method) + opt("--avg-size", a.avg) + shlex.split(a.chunk_opts) + ["-j", "1"]
    shard_df = c.range_df(c.shards)
    ch = NS(raw=None, parts=None, members_table=None, member_records=None, members_out=None)
    if c.shared:
        ch.parts = c.fresh("chunks.parts")
        tables = c.fresh("shard-tables")
        raw = c.transform(shard_df, "chunk-files", *chunk_opts, PARTS=ch.parts, NPARTS=str(c.nparts), TABLES=tables)
        if raw.count():
            sys.exit("fsim-spark: the chunk tasks printed lines")
        ch.tables = [os.path.join(tables, n) for n in sorted(os.listdir(tables)) if n.startswith("files-")]
    else:
        ch.raw = c.transform(shard_df, "chunk", *chunk_opts).persist(c.disk)
        with open(c.L(".shard-tables.tsv"), "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(r.line[2:] + "\n" for r in ch.raw.filter(first() == "T").collect()))
        ch.tables = [c.L(".shard-tables.tsv")]
    join_file_tables(c, ch)
    c.mark("chunk %d shards (%d files, %d records)" % (c.shards, ch.nfiles, ch.chunk_counts), t0)
    list_members(c, ch, chunk_opts)
    return ch


def list_members(c, ch, chunk_opts):
    """The members of the archives the shards marked `~unlisted` (a shard
    lists none: its ids are walk positions), as make's merging run lists
    them: their entries (`fsim-join --shard-tables --unlisted`, opaque
    lines) spread over tasks (tasks/members.sh: `fsim-chunk --members-of`),
    which print the members' records (each followed by its archive's walk
    position) and their members tables (`T` lines, O(members), written
    into WORK/members.tsv); the file table joined again with them (each
    archive's members after it, later files moved down: moved.tsv). The
    records are renumbered by tasks (`renumbered`), the archives' members'
    and every moved file's."""
    with open(c.L(".unlisted.tsv"), encoding="utf-8", newline="\n") as f:
        lines = f.read().splitlines()
    os.remove(c.L(".unlisted.tsv"))
    if not lines:
        return
    t0 = time.time()
    ntasks = min(len(lines), 2 * c.par)
    entries = c.table_df(((l,) for l in lines), "line string", "unlisted").repartition(ntasks)
    out = c.transform(entries, "members", *chunk_opts).persist(c.disk)
    ch.members_table = c.L("members.tsv")
    with open(ch.members_table, "w", encoding="utf-8", newline="\n") as f:
        for r in out.filter(first() == "T").toLocalIterator():
            f.write(r.line[2:] + "\n")
    ch.member_records, ch.members_out = out.filter(first() != "T"), out
    join_file_tables(c, ch)
    c.mark("members of %d archives listed by %d tasks (%d files)" % (len(lines), ntasks, ch.nfiles), t0)


def join_file_tables(c, ch, records=None):
    """files.tsv from the shards' file tables, by `fsim-join --shard-tables`
    (each table checked; ids renumbered in walk order; the trailer's counts
    and digests summed, or the `records` parts' COUNT:DIGEST summed when the
    chunk records were renumbered), as the merging fsim-chunk run writes it; then read
    back: its header, trailer and entries (O(files): the F lines need each
    file's size and content hash), and the files whose id is not their walk
    position (after an archive whose members were listed)."""
    more = [x for part in records or [] for x in ("--records", part)]
    if ch.members_table:
        more += ["--members", ch.members_table]
    ch.moved_path = c.L("moved.tsv")
    c.run_bin("fsim-join", "--shard-tables", "--moved", ch.moved_path, "--chunk-ends", c.L(".chunk-ends.tsv"),
              "--unlisted", c.L(".unlisted.tsv"), *more, "-o", c.L("files.tsv"), *ch.tables)
    with open(c.L(".chunk-ends.tsv"), encoding="utf-8") as f:
        ch.chunk_ends = f.read().splitlines()
    os.remove(c.L(".chunk-ends.tsv"))
    # Members' records always need their ids (their archive's plus K).
    ch.dense = os.path.getsize(ch.moved_path) == 0 and not ch.members_table
    with open(c.L("files.tsv"), encoding="utf-8", newline="\n") as f:
        lines = f.read().split("\n")
    ch.files_head, trailer = lines[0], parse_params(lines[-2])[1]
    ch.entries = [l.split("\t", 1)[1] for l in lines[1:-2]]
    del lines
    ch.nfiles = len(ch.entries)
    ch.chunk_counts = int(get(trailer, "records"))
    # The chunking method, as fsim-chunk wrote it (its default included).
    ch.method = get(parse_params(ch.files_head)[1], "method")


# ---- 2. range partition and sort -------------------------------------------

def sort(c, ch):
    """The records of every shard sorted into hash ranges, and files.tsv.
    On a shared POSIX folder the sort is by files (each chunk task split its
    records by hash range; each range's task sorts its files with fsim-sort,
    in step 3): no record goes through the JVM. Otherwise, and when archives'
    members were listed, Spark's shuffle and sort on text rows."""
    t0 = time.time()
    # File ids are walk positions (a file not read keeps its entry); they
    # are the file table's ids unless an archive's members come before.
    ch.file_sort = c.shared and ch.dense
    if c.shared:
        # Every range file of every shard: each a chunk file (header, records, trailer).
        records = c.spark.read.text("file://" + ch.parts).select(fn.col("value").alias("line")).filter(first() != "#")
    else:
        records = ch.raw.filter(~first().isin("T", "#"))
    ch.count = ch.chunk_counts
    if not ch.dense:
        records, parts = renumbered(c, ch, records)
        join_file_tables(c, ch, parts)
    if ch.members_table:
        os.remove(ch.members_table)
    if os.path.exists(c.L(".unlisted.tsv")):
        os.remove(c.L(".unlisted.tsv"))
    for t_ in ch.tables:
        os.remove(t_)
    if c.shared:
        shutil.rmtree(os.path.dirname(ch.tables[0]), ignore_errors=True)
    # For the forest (page names), verification, line source and report
    # tasks (SparkFiles where they run).
    c.sc.addFile(c.L("files.tsv"))
    # sorted.tsv's two '#' lines, as fsim-join wrote them for the run.
    head_lines = ch.chunk_ends
    parts_dir = c.work_uri + "/sorted.parts"
    ch.sorted_local, ch.sorted_df = c.L("sorted.parts"), None
    if ch.file_sort:
        # sorted.tsv = its two '#' lines (they sort first) in part-00000,
        # then range r sorted by its task in step 3, part-<r>-r.
        shutil.rmtree(ch.sorted_local, ignore_errors=True)
        put_text(c.sc, parts_dir + "/part-00000", sorted(head_lines))
        return
    # Equal ranges of the hash (a chunk group never spans two ranges),
    # sorted by the line: fixed-width fields, byte order = (hash, id,
    # length); '#' sorts first, so the header and trailer open range 0.
    ch.sorted_df = (
        records.unionByName(c.spark.createDataFrame([(l,) for l in head_lines], "line string"))
        .repartition(c.nparts, range_key(c.spark, c.nparts))
        .sortWithinPartitions("line")
    ).persist(c.disk)
    ch.sorted_df.write.mode("overwrite").text(parts_dir)
    if ch.members_out is not None:
        ch.members_out.unpersist()
    if not c.shared:
        ch.raw.unpersist()
    c.mark("shuffle and sort into %d hash ranges" % c.nparts, t0)


def renumbered(c, ch, records):
    """When archives' members were
    listed (list_members), walk positions are not the table's ids: each
    partition's records (the members' too) renumbered by `fsim-join
    --renumber` (tasks/renumber.sh), which ends with the part's
    `#records<TAB>COUNT:DIGEST` line. Returns (records, [COUNT:DIGEST])."""
    if ch.member_records is not None:
        log("archives' members listed: renumbering the records")
        records = records.unionByName(ch.member_records)
    c.sc.addFile(ch.moved_path)
    out = c.transform(records, "renumber", MOVED_DRIVER=ch.moved_path).persist(c.disk)
    parts = [r.line.split("\t", 1)[1] for r in out.filter(first() == "#").collect()]
    return out.filter(first() != "#"), parts


# ---- 3. spanning forests per range, one union-find -------------------------

def forests(c, ch):
    """One task per hash range: `fsim-partition --emit-forest --kept-counts`
    (on a shared folder after sorting the range's files of every shard)
    writes the kept records (partition.parts) and its file graph's spanning
    forest; the driver merges the forests with one union-find. Returns the
    partition state `p`."""
    t0 = time.time()
    fopts = ["--files-count", str(ch.nfiles), "--kept-counts"] + opt("--site-names", c.a.site_names)
    if ch.method in FEATURE_METHODS:
        fopts.append("--feature-counts")
    kept_dir = c.work_uri + "/partition.parts"
    forest = None
    if ch.file_sort:
        # One task per range: its files of every chunk task sorted, then
        # reduced by fsim-partition, all where they lie.
        kept_local, forest_local = c.fresh("partition.parts"), c.fresh("forest.parts")
        if c.transform(c.range_df(c.nparts), "sort-forest", *fopts, KEPT=kept_local, SORTED=ch.sorted_local,
                       CHUNKS=ch.parts, SORT_MEMORY=c.a.memory or "", FOREST=forest_local).count():
            sys.exit("fsim-spark: the forest tasks printed lines")
        # The forest lines come to the driver, read from the tasks' files.
        kept_df = c.spark.read.text(kept_dir).select(fn.col("value").alias("line"))
    else:
        forest = c.transform(ch.sorted_df, "forest", *fopts).persist(c.disk)
        kept_df = forest.filter(~first().isin("E", "N", "P", "#", "K"))
        kept_df.write.mode("overwrite").text(kept_dir)
    if c.shared:
        shutil.rmtree(ch.parts, ignore_errors=True)
    if ch.file_sort:
        forest_files = [os.path.join(forest_local, n) for n in sorted(os.listdir(forest_local)) if n.startswith("f-")]
    else:
        forest_files = [c.L(".forest-lines.tsv")]
        with open(forest_files[0], "w", encoding="utf-8", newline="\n") as f:
            for r in forest.filter(first().isin("E", "N", "P", "K", "#")).toLocalIterator():
                f.write(r.line + "\n")
        ch.sorted_df.unpersist()
    p = merge_forests(c, ch, forest_files)
    if forest is not None:
        forest.unpersist()
    shutil.rmtree(c.L("forest.parts"), ignore_errors=True)
    p.kept_df = kept_df
    c.mark("forests of %d ranges, union-find: %d components" % (c.nparts, p.ncomp), t0)
    return p


def merge_forests(c, ch, forest_files):
    """partition.tsv's ends by `fsim-partition --merge-forests`: the ranges'
    forest edges in one union-find, their summaries added up and checked
    against the file table's records, written as a single run writes them
    (header; F lines; top dropped chunks; trailer), and components.tsv (the
    ranges' K lines summed per component, for the bin plan). The driver keeps the F
    lines (O(files)): each file's component and line, for the bin plan.
    partition.tsv = partition.parts/part-* concatenated: the header
    (part-00000), the kept records range by range (as the tasks wrote
    them), then the rest (part-99999, written in step 5)."""
    ends = c.L(".partition-ends.tsv")
    feature = ["--feature-counts"] if ch.method in FEATURE_METHODS else []
    c.run_bin("fsim-partition", "--merge-forests", "--files", c.L("files.tsv"), *feature,
              "--components-out", c.L("components.tsv"), "-o", ends, *forest_files)
    for f_ in forest_files:
        if os.path.basename(f_).startswith("."):
            os.remove(f_)
    with open(ends, encoding="utf-8") as f:
        lines = f.read().splitlines()
    os.remove(ends)
    p = NS(head=lines[0], tail=lines[1:], trailer=lines[-1])
    p.flines = [l for l in p.tail if l.startswith("F\t")]
    p.multi = [int(l[2:12]) for l in p.flines]
    p.labels = {i: int(l[13:23]) for i, l in zip(p.multi, p.flines)}
    p.ncomp = int(get(parse_params(p.trailer)[1], "components"))
    return p


# ---- 4. the bin plan from per-component figures ----------------------------

def plan(c, ch, p):
    """`fsim-binpack --components` on components.tsv (kept records and
    chunks per component, written by the merge) writes plan.tsv and the
    bins' '#bin' lines. Returns the plan `pl`."""
    c.run_bin("fsim-binpack", "-q", "--components", *opt("--capacity", c.a.capacity), "--plan", c.L("plan.tsv"),
              "-o", c.L("binplan.tsv"), c.L("components.tsv"))
    with open(c.L("binplan.tsv"), encoding="utf-8") as f:
        plan_lines = f.read().splitlines()
    pl = NS(head=plan_lines[0], trailer=plan_lines[-1], bin_lines=[])
    bin_of_comp = {}
    for l in plan_lines[1:-1]:
        if l.startswith("#bin\t"):
            pl.bin_lines.append(l)
        else:
            bin_of_comp[int(l[2:])] = len(pl.bin_lines)
    pl.nbins = len(pl.bin_lines)
    # The bins file's '#bin' and F lines (files in id order within a bin),
    # O(files); the records are routed to their bin by file id.
    pl.bin_files = [[] for _ in range(pl.nbins)]
    for i, fl in zip(p.multi, p.flines):
        pl.bin_files[bin_of_comp[p.labels[i]] - 1].append(fl)
    pl.routes = [(i, bin_of_comp[p.labels[i]]) for i in p.multi]
    return pl


# ---- 5, 6. bins routed, analysed and verified in parallel ------------------

def analyze(c, ch, p, pl):
    """The bins analysed (fsim-analyze, with the line source's pairs) and
    their pairs verified (fsim-verify) by tasks of consecutive bins, or by
    one task when there is no bin. Returns the tasks' output lines: tagged
    pairs (P), verified pairs (V), regions (R), bins.tsv slices (B)."""
    from pyspark import SparkFiles

    a = c.a
    line_opts, lines_on = line_source(a, c.bins["fsim-analyze"])
    aopts = opt("--min-percent", a.floor) + opt("--capacity", a.capacity) + ([] if lines_on else ["--no-line-source"])
    env = dict(VERIFY=a.verify, REGIONS=a.regions, VMIN=a.min_percent or "", FILES_DRIVER=SparkFiles.get("files.tsv"),
               LINES_ON="1" if lines_on else "", LINE_OPTS=" ".join(line_opts))
    if pl.nbins == 0:
        # No component: one task analyses an empty bins file (and runs the
        # line source, if on); the rest as below.
        hadoop_delete(c.sc, c.work_uri + "/bins.parts")
        return c.transform(c.range_df(1), "zero", *aopts, BINS_HEAD=pl.head,
                           THREADS=str(c.par), **env).persist(c.disk)
    # Consecutive bins per task (bins.tsv = the tasks' slices in bin
    # order), cut so that the tasks get about the same records.
    ntasks = min(pl.nbins, 2 * c.par)
    brecs = [int(l.split("\trecords=", 1)[1].split("\t", 1)[0]) for l in pl.bin_lines]
    total, acc, task_of_bin = max(1, sum(brecs)), 0, []
    for n in brecs:
        task_of_bin.append(min(ntasks - 1, acc * ntasks // total))
        acc += n
    keys = partition_keys(c.spark, ntasks)
    # The file -> bin and task map, for Spark's routing of the records
    # and of the line source's pairs (not needed by the routing by files).
    fmap = None
    if not ch.file_sort or lines_on:
        fmap = c.table_df(((f, b, keys[task_of_bin[b - 1]]) for f, b in pl.routes), "fid int, bin int, key int", "fmap")
    by_bin = bins_input(c, ch, p, pl, task_of_bin, keys, fmap)
    if lines_on:
        by_bin = by_bin.unionByName(line_pairs(c, aopts + line_opts, fmap, keys[0]))
    by_bin = by_bin.repartition(ntasks, "key").sortWithinPartitions("bin", "kind", "seq", "line")
    bparts_local = c.fresh("bins.parts") if c.shared else ""
    return c.transform(
        by_bin, "analyze-files" if ch.file_sort else "analyze", *aopts, ROUTED=c.L("routed.parts"),
        BINS_HEAD=pl.head, THREADS=str(max(1, c.par // ntasks)),
        BPARTS=bparts_local, **env,
    ).persist(c.disk)


def bins_input(c, ch, p, pl, task_of_bin, keys, fmap):
    """The analysis tasks' input rows (key: the task's partition key, bin,
    kind, seq, line): each bin's '#bin' and F lines, and its kept records.
    By files (shared folder): one task per range splits its kept file by
    analysis task (fsim-sort --split-by-file, the file -> task map written
    here: O(files)); each analysis task reads its files of every range and
    gets a `T<TAB>task` line. By Spark: the kept records joined with the
    file -> bin map (a broadcast join) and shuffled to the tasks."""
    binmeta, routed = [], None
    if ch.file_sort:
        with open(c.L(".route.tsv"), "w", encoding="utf-8", newline="\n") as f:
            for fid, b in pl.routes:
                f.write("%d\t%d\n" % (fid, task_of_bin[b - 1]))
        routed_local = c.fresh("routed.parts")
        n_routed = c.transform(c.range_df(c.nparts), "route", ROUTE=c.L(".route.tsv"), KEPT=c.L("partition.parts"),
                               ROUTED=routed_local).count()
        if n_routed:
            sys.exit("fsim-spark: the route tasks printed %d lines" % n_routed)
        os.remove(c.L(".route.tsv"))
        for t_ in sorted(set(task_of_bin)):
            binmeta.append((keys[t_], 0, 0, "T\t%d" % t_))
    else:
        routed = (
            p.kept_df.withColumn("fid", fn.substring("line", 34, 10).cast("int"))
            .join(fn.broadcast(fmap), "fid")
            .select("key", "bin", fn.lit(2).alias("kind"), fn.lit(0).alias("seq"), "line")
        )
    for b in range(pl.nbins):
        k = keys[task_of_bin[b]]
        binmeta.append((k, b + 1, 0, pl.bin_lines[b]))
        binmeta.extend((k, b + 1, j + 1, fl) for j, fl in enumerate(pl.bin_files[b]))
    meta_df = c.table_df(binmeta, "key int, bin int, seq int, line string", "binmeta").select(
        "key", "bin", fn.lit(1).alias("kind"), "seq", "line")
    return meta_df if routed is None else routed.unionByName(meta_df)


def line_pairs(c, opts, fmap, first_key):
    """The line source's pairs, computed by one task over the file table
    (the selected small text files and catalogs read where it runs, within
    --capacity), each routed to the task of the bin of its first file, else
    of its second (a pair the chunks also found is in that bin), else to
    the first task; they follow the task's bins as `L` lines."""
    from pyspark import SparkFiles

    lines_df = c.transform(c.range_df(1), "lines", *opts, THREADS=str(c.par), FILES_DRIVER=SparkFiles.get("files.tsv"))
    fa = fmap.select(fn.col("fid").alias("a"), fn.col("key").alias("ka"))
    fb = fmap.select(fn.col("fid").alias("b"), fn.col("key").alias("kb"))
    return (
        lines_df.select(fn.substring("line", 1, 10).cast("int").alias("a"),
                        fn.substring("line", 12, 10).cast("int").alias("b"), "line")
        .join(fn.broadcast(fa), "a", "left").join(fn.broadcast(fb), "b", "left")
        .select(fn.coalesce("ka", "kb", fn.lit(first_key)).alias("key"), fn.lit(1 << 30).alias("bin"),
                fn.lit(3).alias("kind"), fn.lit(0).alias("seq"), fn.concat(fn.lit("L\t"), "line").alias("line"))
    )


# ---- 6. the outputs: pairs, verified pairs, regions, bins ------------------

def outputs(c, p, pl, out):
    """The pairs, verified pairs and regions (and, on a non-shared folder,
    the bins' slices): sorted by Spark and written as ranges in one job
    (ranges of (tag, a, b, seq), each task writing its rows into its tag's
    folder, then the folders renamed); every folder's header and tail as
    part-00000 and part-99999, so NAME.parts/part-* concatenated is make's
    NAME.tsv (no copy through the driver). Returns the tagged output rows."""
    a = c.a
    tags = [("P", "pairs.tsv")]
    if a.verify != "0":
        tags += [("V", "verified.tsv")] + ([("R", "regions.tsv")] if a.regions == "1" else [])
    heads = [r.line for r in out.filter(fn.substring("line", 3, 1) == "#").collect()]
    body = out.filter(fn.substring("line", 3, 1) != "#").select(
        fn.substring("line", 1, 1).alias("tag"),
        fn.substring("line", 3, 21).alias("ab"),
        fn.substring("line", 25, 12).alias("seq"),
        fn.expr("substring(line, 38)").alias("line"),
    )
    written = tags + ([] if c.shared or pl.nbins == 0 else [("B", "bins.tsv")])
    tmp_uri = c.work_uri + "/outputs.tmp"
    (body.filter(body.tag.isin([t_ for t_, _ in written])).repartitionByRange(c.nparts, "tag", "ab", "seq")
     .sortWithinPartitions("tag", "ab", "seq").select("tag", "line")
     .write.mode("overwrite").partitionBy("tag").text(tmp_uri))
    for tag, name in written:
        hadoop_move(c.sc, tmp_uri + "/tag=" + tag, c.work_uri + "/" + name.replace(".tsv", ".parts"))
    hadoop_delete(c.sc, tmp_uri)
    ends = {"bins.tsv": ([pl.head], [pl.trailer]), "partition.tsv": ([p.head], p.tail)}
    for tag, name in tags:
        ends[name] = joined_ends(c, name, [h[4:] for h in heads if h[0] == tag])
    for name, (head, tail) in ends.items():
        pdir = c.work_uri + "/" + name.replace(".tsv", ".parts")
        put_text(c.sc, pdir + "/part-00000", head)
        put_text(c.sc, pdir + "/part-99999", tail)
    # Kept until the outputs are written: a lost cached partition of the
    # analysis is computed again from them.
    shutil.rmtree(c.L("driver-tables"), ignore_errors=True)
    shutil.rmtree(c.L("routed.parts"), ignore_errors=True)
    src = ("V", "verified.tsv") if a.verify != "0" else ("P", "pairs.tsv")
    return NS(body=body, tag=src[0], name=src[1], ends=ends[src[1]])


def joined_ends(c, name, lines):
    """The header and the summed trailer of the analysis tasks' parts of
    `name` (each task's header and trailer, in task order), by `fsim-join
    --ends-only`: it checks that the headers agree and adds up the counts
    and digests (formats::join), so the driver restates no format."""
    path = c.L(".ends-" + name)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(l + "\n" for l in lines))
    c.run_bin("fsim-join", "--ends-only", "-o", path + ".out", path)
    with open(path + ".out", encoding="utf-8") as f:
        head, tail = f.read().splitlines()
    os.remove(path)
    os.remove(path + ".out")
    return [head], [tail]


# ---- 7. the reports, as tasks ----------------------------------------------

def reports(c, res):
    """fsim-report reads the verified pairs (the pairs when VERIFY=0), as
    make's reports do. On a shared POSIX folder one task per format reads
    the parts where they lie and writes the report beside them; otherwise
    one task is fed the pairs in order by Spark and sends the reports back,
    base64 lines the driver decodes as they come (the report's own bytes:
    the driver holds none of the pairs)."""
    from pyspark import SparkFiles

    a, formats = c.a, c.a.formats.split()
    if not formats:
        return
    ropts = ["-q"] + opt("--memory", a.memory) + opt("--min-percent", a.min_percent) + opt("--min-bytes", a.min_bytes)
    renv = dict(HTML_MAX_VIEWS=a.html_max_views or "", FILES_DRIVER=SparkFiles.get("files.tsv"))
    if c.shared:
        fmt_df = c.spark.range(0, len(formats), 1, len(formats)).select(
            fn.element_at(fn.array(*[fn.lit(f) for f in formats]), fn.col("id").cast("int") + 1).alias("line"))
        done = sorted(r.line for r in c.transform(fmt_df, "report-files", *ropts, SRC=c.L(res.name.replace(".tsv", ".parts")),
                                                  OUT=c.local, **renv).collect())
        if done != sorted(formats):
            sys.exit("fsim-spark: the report tasks wrote %r, expected %r" % (done, formats))
        return
    head, tail = res.ends
    ends = c.spark.createDataFrame(
        [(0, "", "", l) for l in head] + [(2, "", "", l) for l in tail], "k int, ab string, seq string, line string")
    pairs_in = ends.unionByName(res.body.filter(res.body.tag == res.tag).select(fn.lit(1).alias("k"), "ab", "seq", "line"))
    rep = c.transform(pairs_in.repartition(1).sortWithinPartitions("k", "ab", "seq"), "report", *ropts,
                      FORMATS=" ".join(formats), **renv)
    write_reports(c, rep, formats)


def write_reports(c, rep, formats):
    """The report task's base64 lines decoded into report.<format>, each
    written atomically (a temp file renamed)."""
    import base64

    outs = {}
    try:
        for r in rep.toLocalIterator():
            fmt, _, data = r.line.split("\t", 2)
            if fmt not in outs:
                outs[fmt] = open(c.L(".report.%s.tmp" % fmt), "wb")
            outs[fmt].write(base64.b64decode(data))
    finally:
        for f in outs.values():
            f.close()
    for fmt in formats:
        if fmt not in outs:
            open(c.L(".report.%s.tmp" % fmt), "wb").close()
        os.replace(c.L(".report.%s.tmp" % fmt), c.L("report." + fmt))


def main(argv=None):
    a = parse_args(argv)
    global fn
    from pyspark.sql import functions as fn

    c = Ctx(a)
    ch = chunk(c)
    sort(c, ch)
    p = forests(c, ch)
    t0 = time.time()
    pl = plan(c, ch, p)
    out = analyze(c, ch, p, pl)
    res = outputs(c, p, pl, out)
    c.mark("plan, analysis and verification of %d bins" % pl.nbins, t0)
    t0 = time.time()
    reports(c, res)
    out.unpersist()
    c.mark("reports (%s)" % " ".join(a.formats.split()), t0)
    if c.remote:
        hadoop_copy_up(c.sc, c.local, c.work_uri)
    log("done in %.2f s: %s" % (time.time() - c.t_start, a.work))
    log_cpu(c.sc, c.master)
    c.spark.stop()


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
