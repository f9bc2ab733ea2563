#!/usr/bin/env python3
"""The cost per record of fsim-spark's sort path (docs/distributed.md).

    sort_bench.py CHUNKS.tsv [--master local[2]] [--partitions N] [--python]

Reads a chunk file (fsim-chunk's chunks.tsv), caches its records in the
executors, then times the shuffle and sort of the records into hash ranges,
each variant alone (written to Spark's `noop` sink, so nothing but the
shuffle and sort is timed):

* text: the record line as a string column, ranges of its first 16 hex
  digits, sorted by the line (what fsim-spark does);
* fixed: the same, but the ranges are equal ranges of the hash's first 32
  bits (MD5 and the feature hashes are uniform) routed by hash partitioning
  on a key chosen per range: no sampling pass;
* binary: the hash as 16 bytes (unhex), id and length as integers, ranges of
  the hash, sorted by (hash, id, length);
* python (--python): the former path, an RDD of Python strings through
  repartitionAndSortWithinPartitions with a Python key.

Prints one line per variant: wall seconds, microseconds per record per core
(wall time x cores / records), and the JVM's CPU seconds (user + system,
from /proc: on a shared machine the wall time also counts what other
processes take) per record. The python variant's CPU is mostly in its
Python workers, not counted in the JVM's: compare it by wall time.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def range_key(spark, n):
    """fsim_spark.range_key (the same code)."""
    import fsim_spark

    return fsim_spark.range_key(spark, n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("chunks")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--python", action="store_true")
    ap.add_argument("--repeat", type=int, default=2, help="runs per variant (the best is kept)")
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--conf", action="append", default=[], help="K=V: a Spark setting (e.g. spark.shuffle.compress=false)")
    ap.add_argument("--variants", default="text,fixed,binary", help="which variants, comma-separated (also: shuffle, native)")
    ap.add_argument("--bin", default=None, help="folder of fsim-sort (the native variant)")
    a = ap.parse_args()

    from pyspark import StorageLevel
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as fn

    spark = (
        SparkSession.builder.master(a.master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", a.driver_memory)
        .config("spark.sql.catalogImplementation", "in-memory")
    )
    for kv in a.conf:
        k, v = kv.split("=", 1)
        spark = spark.config(k, v)
    spark = (
        spark.getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    cores = spark.sparkContext.defaultParallelism
    n = a.partitions or 2 * cores
    line = fn.col("value").alias("line")
    recs = (
        spark.read.text(a.chunks)
        .select(line)
        .filter(fn.substring("line", 1, 1) != "#")
        .repartition(n)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    count = recs.count()

    def text():
        (recs.repartitionByRange(n, fn.substring("line", 1, 16)).sortWithinPartitions("line")
         .write.format("noop").mode("overwrite").save())

    def fixed():
        (recs.repartition(n, range_key(spark, n)).sortWithinPartitions("line")
         .write.format("noop").mode("overwrite").save())

    def shuffle():
        # The shuffle alone: what the sort costs is fixed minus this.
        recs.repartition(n, range_key(spark, n)).write.format("noop").mode("overwrite").save()

    fsim_sort = os.path.abspath(os.path.join(a.bin or "target/release", "fsim-sort"))

    def native():
        # Spark's shuffle into the ranges, each range sorted by fsim-sort
        # in its task (fed through the script transformation, its sorted
        # file written where the task runs).
        recs.repartition(n, range_key(spark, n)).createOrReplaceTempView("recs")
        script = "set -e; t=$(mktemp -d); %s -q -j 1 -o $t/sorted.tsv -; rm -rf $t" % fsim_sort
        spark.sql("SELECT TRANSFORM(line) USING '%s' AS (line STRING) FROM recs" % script).write.format(
            "noop").mode("overwrite").save()

    def binary():
        b = recs.select(
            fn.unhex(fn.substring("line", 1, 32)).alias("h"),
            fn.substring("line", 34, 10).cast("int").alias("id"),
            fn.expr("cast(substring(line, 45) as int)").alias("len"),
        )
        b.repartitionByRange(n, "h").sortWithinPartitions("h", "id", "len").write.format("noop").mode("overwrite").save()

    def python():
        def by_hash(k):
            return (int(k[:8], 16) * n) >> 32

        (recs.rdd.map(lambda r: (r.line, None)).repartitionAndSortWithinPartitions(n, by_hash)
         .foreach(lambda kv: None))

    # CPU time of the JVM (the executors of local mode): wall time counts
    # what other processes take on a shared machine.
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    tick = os.sysconf("SC_CLK_TCK")

    def cpu():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tick

    known = {"text": text, "fixed": fixed, "binary": binary, "shuffle": shuffle, "native": native, "python": python}
    variants = [(v, known[v]) for v in a.variants.split(",")] + ([("python", python)] if a.python else [])
    print("records=%d cores=%d ranges=%d master=%s%s" % (count, cores, n, a.master, "".join(" " + c for c in a.conf)))
    for name, f in variants:
        best, bcpu = None, None
        for _ in range(a.repeat):
            t0, c0 = time.time(), cpu()
            f()
            dt, dc = time.time() - t0, cpu() - c0
            best = dt if best is None else min(best, dt)
            bcpu = dc if bcpu is None else min(bcpu, dc)
        print("%-7s wall %.2f s (%.2f us/record x %d cores)  JVM CPU %.2f s (%.2f us/record)"
              % (name, best, best * cores / count * 1e6, cores, bcpu, bcpu / count * 1e6), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
