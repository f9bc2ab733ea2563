"""The sections of a full run only: fsim's stages against the standard
tools, the stages without a counterpart, scale beyond RAM, the overlap
tree and fsim-report at two sizes. Each returns its data."""

import hashlib
import json
import os
import shutil
import subprocess

from . import inputs
from .measure import capture, log, median, records, sh, text_bytes, trailer_field, tree_files, warm


def pair(bench, name, fcmd, rname, rcmd, nbytes, target):
    """One row of the first table: the reference, then fsim, side by side."""
    ref = bench.measure(rname, nbytes, rcmd)
    fs = bench.measure(name, nbytes, fcmd)
    return {"name": name, "fsim": fs, "ref_name": rname, "ref": ref, "target": target}


def write_classes(tree, path):
    """One path per distinct content (md5, size, path): the datasketch
    peer's input, made before and outside its time, as in make quality."""
    seen = set()
    with open(path, "w", encoding="utf-8") as out:
        for root, dirs, files in os.walk(tree):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(root, f)
                with open(p, "rb") as fh:
                    data = fh.read()
                h = hashlib.md5(data).hexdigest()
                if h not in seen:
                    seen.add(h)
                    out.write(f"{h}\t{len(data)}\t{p}\n")


def table(bench, cfg, t, big):
    """fsim's stages against md5sum, ssdeep, GNU sort, jdupes and datasketch."""
    b, w, j = bench.b, bench.w, bench.jobs
    tb = int(capture(["du", "-sb", t]).split()[0])
    bb = os.path.getsize(big)
    md5_tree = f"find {t} -type f -print0 | xargs -0 -P{j} -n 5000 md5sum"
    c1000 = f"{b}/fsim-chunk -q -j {j} --avg-size 1000 --files-out {w}/f1000.tsv -o {w}/c1000.tsv {t}"
    rows = [
        pair(bench, "fsim-chunk avg 1000, tree", c1000, "md5sum", md5_tree, tb, "≤ 1.1"),
        pair(bench, "fsim-chunk avg 100, tree",
             f"{b}/fsim-chunk -q -j {j} --avg-size 100 --files-out {w}/f100.tsv -o {w}/c100.tsv {t}",
             "md5sum", md5_tree, tb, "≤ 1.7"),
        pair(bench, f"fsim-chunk avg 1000, one {cfg.big_mb} MiB file",
             f"{b}/fsim-chunk -q -j {j} --avg-size 1000 --files-out {w}/fbig.tsv -o {w}/cbig.tsv {big}",
             "md5sum", f"md5sum {big}", bb, "≤ 1.1"),
        pair(bench, "fsim-chunk avg 1000, tree", c1000, "ssdeep -r", f"ssdeep -r {t}", tb, "≤ 0.2"),
    ]
    # fsim-sort's input, ~20 million chunk records as the target states: the
    # records (avg 100) of the tree and of the large file, in one file.
    sh(f"{b}/fsim-chunk -q -j {j} --avg-size 100 --files-out {w}/fsort.tsv -o {w}/csort.tsv {t} {big}")
    recs = records(f"{w}/csort.tsv")
    rows.append(pair(bench, f"fsim-sort --memory 128M, {recs} records",
                     f"{b}/fsim-sort -q --memory 128M --tmpdir {w} -o {w}/ssort.tsv {w}/csort.tsv", "GNU sort",
                     f"LC_ALL=C sort -S 128M --parallel={j} -T {w} -o {w}/gsort.tsv {w}/csort.tsv",
                     os.path.getsize(f"{w}/csort.tsv"), "≤ 0.33, RSS ≤ 160 MB"))
    same = sh(f"cmp -s {w}/ssort.tsv {w}/gsort.tsv", check=False) == 0
    for f in ("ssort", "gsort", "csort", "fsort"):
        os.remove(f"{w}/{f}.tsv")
    # Whole pipeline, fast pass (the paper's: avg 1000, no verification),
    # against jdupes (identical files only).
    shutil.rmtree(f"{w}/run", ignore_errors=True)
    pipe = f"make -s report BIN={bench.bp} REPO={t} WORK={w}/run QUIET=-q AVG=1000 VERIFY=0 && rm -rf {w}/run"
    rows.append(pair(bench, "whole pipeline, fast pass (make report AVG=1000 VERIFY=0)", pipe,
                     "jdupes -r", f"jdupes -r -q {t}", tb, "≤ 2.5"))
    sh(f"make -s report BIN={bench.bp} REPO={t} WORK={w}/run QUIET=-q AVG=1000 VERIFY=0")
    jd = subprocess.run(["jdupes", "-r", "-q", t], stdout=subprocess.PIPE, text=True).stdout
    jd_sets = sum(1 for blk in jd.split("\n\n") if blk.strip())
    with open(f"{w}/run/report.json", encoding="utf-8") as f:
        fs_sets = json.load(f)["summary"]["identical_sets"]
    # Whole pipeline with the defaults against datasketch MinHash-LSH as in
    # scripts/quality/peer.py (word 5-shingles, 128 permutations, threshold
    # 0.5), from the quality venv; one path per distinct content ready-made.
    write_classes(t, f"{w}/classes.tsv")
    peer = os.path.join(cfg.qdir, "venv", "bin", "python")
    rows.append(pair(bench, "whole pipeline, defaults (make report: avg 100, verification)",
                     f"make -s report BIN={bench.bp} REPO={t} WORK={w}/run QUIET=-q && rm -rf {w}/run",
                     "datasketch MinHash-LSH", f"{peer} scripts/quality/peer.py {w}/classes.tsv {w}/peer.tsv",
                     tb, "≤ 0.33"))
    return {"tree_bytes": tb, "big_bytes": bb, "rows": rows,
            "checks": {"sort_same": same, "fsim_sets": fs_sets, "jdupes_sets": jd_sets}}


def single_row(bench, name, cmd, items, unit, target):
    m = bench.measure(name, 0, cmd)
    m.update(items=items, unit=unit, target=target)
    return m


def single(bench, cfg, t):
    """Stages without a standard counterpart, on synthetic inputs at the
    targets' scale: fsim-partition (and its I/O floor), fsim-analyze,
    fsim-query, fsim-verify."""
    b, w, j = bench.b, bench.w, bench.jobs
    pf, pg = cfg.pfiles, cfg.pgroups
    if not os.path.isfile(f"{w}/psorted.tsv") or trailer_field(f"{w}/pfiles.tsv", "#end files", "files") != str(pf):
        sh(f"{b}/examples/sortpart-gen sorted {pf} {pg} {w}/pfiles.tsv > {w}/psorted.tsv")
    precs = int(trailer_field(f"{w}/psorted.tsv", "#end chunks", "records"))
    d = {"pfiles": pf, "pgroups": pg, "precs": precs}
    d["partition"] = single_row(bench, f"fsim-partition, {pf} files, {pg} chunk groups",
                                f"{b}/fsim-partition -q --files {w}/pfiles.tsv -o {w}/ppart.tsv {w}/psorted.tsv",
                                precs, "records", "RSS ≤ 100 MB, ≥ 10 M records/s")
    d["pout"] = os.path.getsize(f"{w}/ppart.tsv")
    # The same run with its output thrown away: the stage's own rate.
    d["partition_null"] = single_row(bench, "fsim-partition, the same input, output to /dev/null",
                                     f"{b}/fsim-partition -q --files {w}/pfiles.tsv -o /dev/null {w}/psorted.tsv",
                                     precs, "records", "(the stage alone)")
    # Its I/O floor: copying as many bytes of its inputs to a new file, fsynced.
    d["floor"] = bench.measure("partition I/O floor", 0, f"cat {w}/psorted.tsv {w}/pfiles.tsv | head -c {d['pout']} "
                               f"> {w}/pcopy.tsv && sync {w}/pcopy.tsv")
    for f in ("ppart", "pcopy"):
        os.remove(f"{w}/{f}.tsv")
    if not os.path.isfile(f"{w}/apart.tsv"):
        sh(f"{b}/examples/gen_partition 52125 3800000 1 > {w}/apart.tsv")
        sh(f"{b}/fsim-binpack -q -o {w}/abins.tsv {w}/apart.tsv")
    d["analyze"] = single_row(bench, "fsim-analyze, paper scale (52,125 files, 3.8 M records)",
                              f"{b}/fsim-analyze -q -j {j} --no-line-source -o {w}/apairs.tsv {w}/abins.tsv",
                              3800000, "records", "≤ 2 s")
    # fsim-query against an index of QFILES files (synthetic records; the
    # queries are 100 real files of the tree).
    qf = cfg.qfiles
    if not os.path.isdir(f"{w}/qidx"):
        sh(f"{b}/examples/sortpart-gen sorted {qf} {qf * 3} {w}/qfiles.tsv > {w}/qsorted.tsv")
        sh(f"{b}/fsim-index -q --index {w}/qidx --files {w}/qfiles.tsv {w}/qsorted.tsv")
        os.remove(f"{w}/qsorted.tsv")
    queries = sorted(p for p in tree_files(t) if p.endswith(".txt"))[:100]
    d["query"] = bench.measure("fsim-query", 0, f"{b}/fsim-query --index {w}/qidx {' '.join(queries)}")
    d["query"].update(qfiles=qf, shown=f"{b}/fsim-query --index {w}/qidx <100 files>")
    d["verify"] = verify(bench, cfg)
    return d


def verify(bench, cfg):
    """fsim-verify on VDOCS documents and two versions of each (fsim-gen
    --versions), the pairs fsim-analyze finds, JOBS threads; wall and CPU
    seconds, the page cache warmed before each run (untimed)."""
    b, j, vw = bench.b, bench.jobs, os.path.join(bench.w, "verify")
    # The pairs analysed with MIN_PERCENT=0 (fsim-analyze
    # --verify-min-percent 0), as fsim-verify --min-percent 0 asks: every
    # pair fsim-analyze finds, none cut before verification.
    key = f"{cfg.vdocs} {cfg.size} min-percent 0"
    if inputs.stamp(f"{vw}/pairs.done") != key:
        sh(f"rm -rf {vw}")
        sh(f"{b}/fsim-gen --versions {cfg.vdocs} --bulk-size {cfg.size} --bulk-dirs 300 {vw}/tree", quiet=False)
        sh(f"make -s {vw}/run/pairs.tsv BIN=./{b} REPO={vw}/tree WORK={vw}/run QUIET=-q AVG=1000 FLOOR=10 "
           f"MIN_PERCENT=0 JOBS={j}")
        with open(f"{vw}/pairs.done", "w", encoding="utf-8") as f:
            f.write(key + "\n")
    pairs = int(trailer_field(f"{vw}/run/pairs.tsv", "#end pairs", "pairs"))
    cmd = (f"{b}/fsim-verify -q -j {j} --min-percent 0 --files {vw}/run/files.tsv -o {vw}/run/verified.tsv "
           f"{vw}/run/pairs.tsv")
    warm(f"{vw}/tree")
    sh(cmd)
    walls, cpus, rss = [], [], 0
    for _ in range(bench.runs):
        warm(f"{vw}/tree")
        w, u, s, m = bench.timed(cmd, "%e %U %S %M")
        walls.append(float(w))
        cpus.append(round(float(u) + float(s), 2))
        rss = max(rss, int(m))
    with open(f"{vw}/run/verified.tsv", encoding="utf-8", errors="replace") as f:
        exact = sum(1 for line in f if line.rstrip("\n").endswith("exact"))
    d = {"cmd": cmd, "pairs": pairs, "exact": exact, "files": records(f"{vw}/run/files.tsv"), "vdocs": cfg.vdocs,
         "size": cfg.size, "wall": median(walls), "cpu": median(cpus), "rss": rss // 1024, "jobs": j}
    log(f"fsim-verify: {d['wall']}s wall, {d['cpu']} CPU-s, {d['rss']} MB")
    return d


def scale_stages(rows, budget):
    """Per stage of one run: summed wall, largest RSS, against the budget."""
    agg = {}
    for r in rows:
        n = r["stage"][len("fsim-"):]
        a = agg.setdefault(n, {"stage": r["stage"], "wall": 0.0, "rss_kib": 0})
        a["wall"] += r["wall"]
        a["rss_kib"] = max(a["rss_kib"], r["rss_kib"])
    out = []
    for n in sorted(agg):
        a = agg[n]
        if n in ("sort", "binpack", "analyze"):
            a["budget"] = budget
            a["within"] = a["rss_kib"] * 1024 <= budget + 32 * 1048576
        out.append(a)
    return out


def scale(bench, cfg):
    """The whole pipeline with one memory budget (MEMORY=CAPACITY, a quarter
    of the largest run's chunk records) on repositories of ~0.1x, ~1x and
    ~4x that budget, each stage logged through the wrapper folder."""
    b, w, j = bench.b, bench.w, bench.jobs
    bench.make_wrap()
    big = inputs.scale_tree(bench, cfg, cfg.scale_files)
    probe = f"{w}/scale-probe"
    sh(f"rm -rf {probe} && mkdir -p {probe}")
    sh(f"{b}/fsim-chunk -q -j {j} --avg-size {cfg.scale_avg} --files-out {probe}/f.tsv -o {probe}/c.tsv {big}")
    budget = os.path.getsize(f"{probe}/c.tsv") // 4
    shutil.rmtree(probe)
    runs = []
    for frac in (40, 4, 1):  # 1/40, 1/4 and all of the files: ~0.1x, ~1x, ~4x
        nf = cfg.scale_files // frac
        repo, run = inputs.scale_tree(bench, cfg, nf), f"{w}/scale-run-{nf}"
        shutil.rmtree(run, ignore_errors=True)
        warm(repo)
        total, stages = bench.staged_make(f"{w}/scale-{nf}.log", [
            f"REPO={repo}", f"WORK={run}", "QUIET=-q", f"AVG={cfg.scale_avg}", f"MEMORY={budget}",
            f"CAPACITY={budget}", "FORMATS=txt"])
        runs.append({"files": nf, "records": records(f"{run}/chunks.tsv"),
                     "record_bytes": text_bytes(f"{run}/chunks.tsv"), "total": total,
                     "peak_kib": max((s["rss_kib"] for s in stages), default=0),
                     "stages": scale_stages(stages, budget)})
        shutil.rmtree(run)
    return {"files": cfg.scale_files, "avg": cfg.scale_avg, "budget": budget, "runs": runs}


def overlap(bench, cfg):
    """A repository whose files overlap widely (fsim-gen --overlap): md5sum,
    then the default make report with every format, stage by stage."""
    tree = inputs.overlap_tree(bench, cfg)
    nbytes = int(capture(["du", "-sb", tree]).split()[0])
    warm(tree)
    md5 = bench.measure("md5sum, overlap tree", nbytes,
                        f"find {tree} -type f -print0 | xargs -0 -P{bench.jobs} -n 5000 md5sum")
    run = f"{bench.w}/overlap-run"
    shutil.rmtree(run, ignore_errors=True)
    bench.make_wrap()
    total, stages = bench.staged_make(f"{bench.w}/overlap.log", [
        f"REPO={tree}", f"WORK={run}", "QUIET=-q", "FORMATS=txt json html xlsx"])
    with open(f"{run}/report.json", encoding="utf-8") as f:
        rep = json.load(f)
    verify = [s["wall"] for s in stages if s["stage"] == "fsim-verify"]
    return {"files": cfg.ovl_files, "bytes": nbytes, "md5": md5, "total": total,
            "candidates": records(f"{run}/pairs.tsv"), "links": rep["summary"]["links"],
            "largest_cluster": max((c["file_count"] for c in rep["clusters"]), default=0),
            "verify_wall": verify[0] if verify else None, "stages": stages}


def report_links(bench, cfg):
    """fsim-report on examples/gen_pairs at two sizes, every format, --memory 256M."""
    rows = []
    for links in (cfg.report_links // 10, cfg.report_links):
        g = inputs.gen_pairs(bench, links)
        for fmt in ("text", "json", "tsv", "html", "xlsx"):
            m = bench.measure(f"fsim-report {fmt}, {links} links", 0,
                              f"{bench.b}/fsim-report -q --memory 256M --files {g}/files.tsv --format {fmt} "
                              f"-o {g}/report.{fmt} {g}/verified.tsv")
            m.update(links=links, format=fmt)
            rows.append(m)
    return rows
