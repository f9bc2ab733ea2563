#!/usr/bin/env python3
"""fsim-spark: the fsim pipeline on Apache Spark (PySpark), docs/distributed.md.

Spark does the heavy parts with fsim's own binaries through RDD.pipe:

1. chunking: one task per shard runs `fsim-chunk --shard I/N` (file ids are
   walk positions: sparse, globally unique); the driver collects the shards'
   file tables (one line per file), builds the file table once with dense
   ids, and broadcasts the walk position -> id map;
2. the shuffle: records renumbered, range-partitioned by chunk hash and
   sorted within partitions (repartitionAndSortWithinPartitions): the
   partitions concatenated are byte for byte fsim-sort's output
   (WORK/sorted.parts/part-*);
3. partitioning: every hash range is reduced by `fsim-partition
   --emit-forest` to its kept records and a spanning forest of its file
   graph; the driver merges the forests with one union-find (smallest id
   labels, as fsim-partition) and writes partition.tsv;
4. bin packing once (fsim-binpack on the driver), records routed to bins
   with a broadcast file -> bin map, every bin analysed by fsim-analyze in
   its own task;
5. fsim-verify and fsim-report on the collected pairs, on the driver.

The outputs (files.tsv, partition.tsv, bins.tsv, plan.tsv, pairs.tsv,
verified.tsv, regions.tsv, report.*) are byte-identical to `make report`
with the same settings.
"""

import argparse
import xxhash
import os
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
BINARIES = ["fsim-chunk", "fsim-partition", "fsim-binpack", "fsim-analyze", "fsim-verify", "fsim-report"]


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


# Shell preamble of every pipe task: binaries in $B, and the failure
# injection of the tests: FSIM_SPARK_FAIL_ONCE=<stage>:<dir> makes the first
# task of <stage> to run fail once, after writing part of its output
# (stages: chunk, forest, analyze; several: chunk,analyze:<dir>).
PRE = r"""
set -e
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

# Stage 3, one task per hash range: sorted records on stdin.
FOREST_SH = PRE + r"""
cat > "$t/in.tsv"
"$B/fsim-partition" -q --emit-forest "$@" -o "$t/out.tsv" "$t/in.tsv"
fail_once forest "$t/out.tsv"
cat "$t/out.tsv"
"""

# Stage 4, one task per bin: a one-bin bins file on stdin.
ANALYZE_SH = PRE + r"""
cat > "$t/bin.tsv"
"$B/fsim-analyze" -q -j 1 --tmpdir "$t" "$@" -o "$t/pairs.tsv" "$t/bin.tsv"
fail_once analyze "$t/pairs.tsv"
cat "$t/pairs.tsv"
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
    ap.add_argument("--lines", default="4K", help="line source: text files up to this size (make's LINES)")
    ap.add_argument("--catalogs", default="1", help="line source: translation catalogs (make's CATALOGS)")
    ap.add_argument("--line-floor", default="30", help="line source threshold (make's LINE_FLOOR)")
    ap.add_argument("--min-bytes", default="0")
    ap.add_argument("--verify", default="1")
    ap.add_argument("--formats", default="txt json")
    ap.add_argument("--html-max-views", default="200")
    ap.add_argument("--local-dir", default=None, help="driver staging folder when --work is not local")
    a = ap.parse_args(argv)

    from pyspark import SparkConf, SparkContext, StorageLevel

    t_start = time.time()
    conf = SparkConf().setAppName("fsim-spark")
    master = a.master or conf.get("spark.master", None) or "local[2]"
    # Local mode ignores spark.task.maxFailures: local[N,F] is how it retries.
    if master.startswith("local[") and "," not in master:
        master = "%s,%d]" % (master[:-1], a.max_failures)
    conf.setMaster(master)
    conf.set("spark.task.maxFailures", str(a.max_failures))
    conf.setIfMissing("spark.ui.enabled", "false")
    conf.setIfMissing("spark.ui.showConsoleProgress", "false")
    sc = SparkContext(conf=conf)
    sc.setLogLevel("WARN")
    par = sc.defaultParallelism
    shards = a.shards or 2 * par
    nparts = a.partitions or 2 * par

    # Binaries: --bin DIR on every node, PATH, or shipped with addFile.
    bindir = a.bin or os.path.dirname(shutil.which("fsim-chunk") or "")
    if not bindir or not os.path.exists(os.path.join(bindir, "fsim-chunk")):
        sys.exit("fsim-spark: fsim binaries not found: give --bin DIR or put them on PATH")
    bindir = os.path.abspath(bindir)
    task_bin = bindir
    if a.ship:
        from pyspark import SparkFiles

        for b in BINARIES:
            sc.addFile(os.path.join(bindir, b))
        # YARN puts the files in the task's working folder; local and
        # standalone in the SparkFiles root.
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
        "LC_ALL": "C",
        "B": task_bin,
        "REPO": repo,
        "SHARDS": str(shards),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    if os.environ.get("FSIM_SPARK_FAIL_ONCE"):
        env["FSIM_SPARK_FAIL_ONCE"] = os.environ["FSIM_SPARK_FAIL_ONCE"]
    if a.ship:
        env["B"] = "."

    def sh(script, *args):
        # sh finds the binaries in $B, or (--ship on YARN) in its folder.
        fix = 'if [ "$B" = . ] && [ ! -x ./fsim-chunk ]; then B=%s; fi\n' % shlex.quote(task_bin)
        return shlex.join(["/bin/sh", "-c", fix + script, "fsim-spark-task"] + list(args))

    timings = []

    def mark(what, t0):
        timings.append((what, time.time() - t0))
        log("%s: %.2f s" % (what, time.time() - t0))

    # ---- 1. chunk the shards -------------------------------------------
    t0 = time.time()
    chunk_opts = q + ["--method", a.method, "--avg-size", a.avg] + shlex.split(a.chunk_opts) + ["-j", "1"]
    raw = (
        sc.parallelize([str(i) for i in range(shards)], shards)
        .pipe(sh(CHUNK_SH, *chunk_opts), env=env, checkCode=True)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    meta = raw.filter(lambda l: l[0] in "T#").collect()
    # The file table, built once: shard tables merged in walk order.
    heads, tails, entries, chunk_counts = set(), [], [], 0
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
            chunk_counts += int(get(parse_params(line)[1], "records"))
    if len(heads) != 1 or len(tails) != shards:
        sys.exit("fsim-spark: expected %d shard file tables with one header, got %d headers and %d trailers" % (shards, len(heads), len(tails)))
    files_head = heads.pop()
    entries.sort()
    nfiles = len(entries)
    skipped = sum(int(get(t, "skipped")) for t in tails)
    dense = {pos: i for i, (pos, _) in enumerate(entries)}
    bdense = sc.broadcast(dense)
    mark("chunk %d shards (%d files, %d records)" % (shards, nfiles, chunk_counts), t0)

    # ---- 2. renumber, digest, range partition and sort -------------------
    t0 = time.time()

    def renumber(lines):
        d = bdense.value
        for l in lines:
            h, pos, ln = l.split("\t")
            yield "%s\t%010d\t%s" % (h, d[int(pos)], ln)

    records = raw.filter(lambda l: l[0] not in "T#").mapPartitions(renumber)

    def part_digest(lines):
        n, s = 0, 0
        for l in lines:
            h, f, ln = l.split("\t")
            s += record_mix(int(h, 16), int(f), int(ln))
            n += 1
        yield (n, s & M128)

    count, digest = records.mapPartitions(part_digest).fold((0, 0), lambda x, y: (x[0] + y[0], (x[1] + y[1]) & M128))
    if count != chunk_counts:
        sys.exit("fsim-spark: %d records renumbered but the shards wrote %d" % (count, chunk_counts))
    # files.tsv, as the merging fsim-chunk run writes it.
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
    # The file table's header carries its own version (v2): the chunk
    # stream's is v1.
    chunks_head = "#fsim chunks v1" + files_head[len("#fsim files v2"):]
    if not files_head.startswith("#fsim files v2"):
        sys.exit("fsim-spark: expected a '#fsim files v2' header from fsim-chunk, got %r" % files_head)
    head_lines = sorted([chunks_head, "#end chunks\trecords=%d\tdigest=%s" % (count, hex128(digest))])

    def by_hash(k):
        return 0 if k[0] == "#" else (int(k[:8], 16) * nparts) >> 32

    sorted_rdd = (
        records.union(sc.parallelize(head_lines, 1))
        .map(lambda l: (l, None))
        .repartitionAndSortWithinPartitions(nparts, by_hash)
        .keys()
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    parts_dir = work_uri + "/sorted.parts"
    hadoop_delete(sc, parts_dir)
    sorted_rdd.saveAsTextFile(parts_dir)
    mark("renumber, digest, shuffle and sort into %d hash ranges" % nparts, t0)

    # ---- 3. spanning forests per range, one union-find -------------------
    t0 = time.time()
    fopts = ["--files-count", str(nfiles)]
    if a.method in FEATURE_METHODS:
        fopts.append("--feature-counts")
    forest = sorted_rdd.pipe(sh(FOREST_SH, *fopts), env=env, checkCode=True).persist(StorageLevel.MEMORY_AND_DISK)
    fmeta = forest.filter(lambda l: l[0] in "ENP#").collect()
    parent = list(range(nfiles))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    fcounts = {}
    pruned = set()
    dropped = []
    kept_n, kept_d, dchunks, drecs, limit, edges = 0, 0, 0, 0, None, 0
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
            kept_n += int(get(p, "kept"))
            kept_d += int(get(p, "kept_digest"), 16)
            dchunks += int(get(p, "dropped_chunks"))
            drecs += int(get(p, "dropped_records"))
            limit = get(p, "limit")
    kept_d &= M128
    labels = [find(i) for i in range(nfiles)]
    sizes = {}
    for lab in labels:
        sizes[lab] = sizes.get(lab, 0) + 1
    multi = [i for i in range(nfiles) if sizes[labels[i]] > 1]
    ncomp = sum(1 for lab, n in sizes.items() if n > 1)
    params = parse_params(files_head)[1]
    with open(L(".partition.tsv.tmp"), "w", encoding="utf-8", newline="\n") as f:
        f.write(join_params("#fsim partition v1", params + [("files", str(nfiles)), ("limit", limit or "0")]) + "\n")
        for l in forest.filter(lambda l: l[0] not in "ENP#").toLocalIterator():
            f.write(l + "\n")
        for i in multi:
            size, _, content, _, _ = entries[i][1].split("\t", 4)
            extra = "\t%d" % fcounts.get(i, 0) if a.method in FEATURE_METHODS else ""
            f.write("F\t%010d\t%010d\t%s\t%s%s\n" % (i, labels[i], size, content, extra))
        for _, _, line in sorted(dropped)[:20]:
            f.write(line + "\n")
        f.write(
            "#end partition\trecords=%d\tdigest=%s\tfiles=%d\tcomponents=%d\tdropped_chunks=%d\tdropped_records=%d%s\n"
            % (kept_n, hex128(kept_d), len(multi), ncomp, dchunks, drecs,
               "\tpruned_files=%d" % len(pruned) if dchunks else "")
        )
    os.replace(L(".partition.tsv.tmp"), L("partition.tsv"))
    mark("forests of %d ranges (%d edges), union-find: %d components" % (nparts, edges, ncomp), t0)

    # ---- 4. bin packing once, bins analysed in parallel ------------------
    t0 = time.time()
    run([bins["fsim-binpack"]] + q + ["--capacity", a.capacity, "--tmpdir", local, "--plan", L("plan.tsv"), "-o", L("bins.tsv"), L("partition.tsv")])
    bin_of, bin_info, bins_head = {}, {}, None
    with open(L("bins.tsv"), encoding="utf-8") as f:
        cur = None
        for l in f:
            if l.startswith("#fsim bins"):
                bins_head = l.rstrip("\n")
            elif l.startswith("#bin\t"):
                fields = l.rstrip("\n").split("\t")
                cur = int(fields[1])
                bin_info[cur] = (fields[2:], [])
            elif l.startswith("F\t"):
                bin_of[int(l[2:12])] = cur
                bin_info[cur][1].append(l.rstrip("\n"))
    nbins = len(bin_info)
    pre, ps = parse_params(bins_head)
    one_head = join_params(pre, [(k, "1" if k == "bins" else v) for k, v in ps])
    aopts = ["--min-percent", a.floor, "--capacity", a.capacity]
    # The line source (make's LINE_OPTS) reads the files: on the driver, with
    # verification, over an empty bins file, merged into the chunk pairs.
    lopts = []
    if a.verify != "0":
        lopts = ["--files", L("files.tsv"), "--line-pairs-below", a.lines, "--line-min-percent", a.line_floor]
        lopts += ["--line-catalogs"] if a.catalogs == "1" else []
    if nbins == 0:
        run([bins["fsim-analyze"]] + q + aopts + lopts + ["--tmpdir", local, "-o", L("pairs.tsv"), L("bins.tsv")])
    else:
        bbin = sc.broadcast(bin_of)
        binfo = sc.broadcast(bin_info)

        def route(lines):
            m = bbin.value
            for l in lines:
                yield ((m[int(l[33:43])], l), None)

        def one_bin_file(idx, kvs):
            # Records arrive sorted by hash within the bin.
            info, flines = binfo.value[idx + 1]
            recs = [kv[0][1] for kv in kvs]
            s = 0
            for l in recs:
                h, f, ln = l.split("\t")
                s += record_mix(int(h, 16), int(f), int(ln))
            yield one_head
            yield "\t".join(["#bin", "1"] + info)
            yield from flines
            yield from recs
            yield "#end bins\trecords=%d\tdigest=%s\tbins=1\tfiles=%d" % (len(recs), hex128(s & M128), len(flines))

        pairs = (
            forest.filter(lambda l: l[0] not in "EN#")
            .mapPartitions(route)
            .repartitionAndSortWithinPartitions(nbins, lambda k: k[0] - 1)
            .mapPartitionsWithIndex(one_bin_file)
            .pipe(sh(ANALYZE_SH, *aopts), env=env, checkCode=True)
            .collect()
        )
        pheads = sorted(set(l for l in pairs if l.startswith("#fsim pairs")))
        plines = sorted(l for l in pairs if not l.startswith("#"))
        if lopts:
            with open(L(".nobins.tsv"), "w", encoding="utf-8", newline="\n") as f:
                f.write(join_params(pre, [(k, "0" if k == "bins" else v) for k, v in ps]) + "\n")
                f.write("#end bins\trecords=0\tdigest=%s\tbins=0\tfiles=0\n" % hex128(0))
            run([bins["fsim-analyze"]] + q + aopts + lopts + ["--tmpdir", local, "-o", L(".line-pairs.tsv"), L(".nobins.tsv")])
            have = set(tuple(l.split("\t", 2)[:2]) for l in plines)
            with open(L(".line-pairs.tsv"), encoding="utf-8") as f:
                extra = [l.rstrip("\n") for l in f if not l.startswith("#")]
            plines = sorted(plines + [l for l in extra if tuple(l.split("\t", 2)[:2]) not in have])
            os.remove(L(".nobins.tsv"))
            os.remove(L(".line-pairs.tsv"))
        pd = 0
        for l in plines:
            x, y, _, _, common, _ = l.split("\t")
            pd += mix128((int(x) << 96) | (int(y) << 64) | int(common))
        with open(L(".pairs.tsv.tmp"), "w", encoding="utf-8", newline="\n") as f:
            f.write(pheads[0] + "\n")
            for l in plines:
                f.write(l + "\n")
            f.write("#end pairs\tpairs=%d\tdigest=%s\n" % (len(plines), hex128(pd & M128)))
        os.replace(L(".pairs.tsv.tmp"), L("pairs.tsv"))
    mark("bin packing and analysis of %d bins" % nbins, t0)

    # ---- 5. verify and report on the driver -------------------------------
    t0 = time.time()
    pairs_in = L("pairs.tsv")
    if a.verify != "0":
        run([bins["fsim-verify"]] + q + ["--files", L("files.tsv"), "--min-percent", a.min_percent, "--regions", L("regions.tsv"), "-j", str(a.jobs), "-o", L("verified.tsv"), L("pairs.tsv")])
        pairs_in = L("verified.tsv")
    ropts = q + ["--files", L("files.tsv"), "--min-percent", a.min_percent, "--min-bytes", a.min_bytes]
    for fmt in a.formats.split():
        name = {"txt": "text"}.get(fmt, fmt)
        src = L("pairs.tsv") if fmt in ("html", "xlsx") else pairs_in
        extra = ["--html-max-views", a.html_max_views] if fmt == "html" else []
        run([bins["fsim-report"]] + ropts + ["--format", name] + extra + ["-o", L("report." + fmt), src])
    mark("verify and report", t0)
    if remote:
        hadoop_copy_up(sc, local, work_uri)
    log("done in %.2f s: %s" % (time.time() - t_start, a.work))
    sc.stop()


def hadoop_fs(sc, uri):
    jvm = sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(sc._jsc.hadoopConfiguration()), path


def hadoop_delete(sc, uri):
    fs, path = hadoop_fs(sc, uri)
    if fs.exists(path):
        fs.delete(path, True)


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
