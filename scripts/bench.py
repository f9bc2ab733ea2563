#!/usr/bin/env python3
"""Benchmarks: fsim's stages against the standard tools on the same input,
in the same run; the measurements written as data first, then
docs/performance.md rendered from them.

  make bench                                # defaults below
  FILES=20000 BIG_MB=200 make bench         # a quicker, smaller run
  BENCH_ONLY=hard python3 scripts/bench.py  # only "Whole default run on hard
                     # inputs" (catalogs and partial-overlap slices), written
                     # to HARD_OUT (docs/measurements/DATE-hard-inputs.md: a
                     # dated record, the earlier ones kept); OUT left alone
  BENCH_ONLY=documents python3 scripts/bench.py  # only the rows "whole
                     # pipeline on documents", replaced in OUT, the rest kept
  BENCH_ONLY=folders python3 scripts/bench.py    # only the section "Folder
                     # pairs", replaced in OUT, the rest kept
  BENCH_ONLY=source python3 scripts/bench.py     # only the section "Whole
                     # default run on a real repository", replaced in OUT
  make bench-outofcore  # BENCH_ONLY=outofcore: only the section "Out of
                     # core" (make report in a memory cgroup, cold cache;
                     # needs root, else its group runs are skipped with a note)
  make bench-tenmillion  # BENCH_ONLY=tenmillion: only the section "10^7
                     # files" (10^7 small files in an ext4 image on a loop
                     # device, make report and md5sum from a cold cache;
                     # needs root, a loop device and ~20 GB free in BENCH,
                     # else skipped with a note)
  make bench-changes  # BENCH_ONLY=changes: only the section "Re-runs and
                     # scratch space" (1 % of the files edited, then
                     # touched, make report PREVIOUS= against a run from
                     # scratch, every run's work folder sampled, on the
                     # releases, the overlap tree and /usr/share/doc)
  python3 scripts/bench.py --render bench-work/bench.json
                     # the markdown again from the data, nothing measured

Data: $BENCH/bench.json (a full run) or $BENCH/bench-SECTION.json
(BENCH_ONLY=SECTION): the settings, the machine and every measurement
(each command line, its median wall time of RUNS runs, its runs, its peak
RSS). It is written after each section, so a run that stops keeps what it
measured; the markdown is rendered from it at the end, and again by
--render (OUT and HARD_OUT, when set, replace those the data names).

Knobs (environment): FILES (100000 files in the tree, ~SIZE bytes each,
~300 folders), SIZE (10000), BIG_MB (1024, the single large file), RUNS
(3), BENCH (bench-work: generated data, kept between runs, ~15 GB), OUT
(docs/performance.md), HARD_OUT, BENCH_ONLY (empty: every section; or
hard, documents, folders, source, outofcore, tenmillion, changes), QDIR
(quality-work: make quality's corpus and venv, for documents, source,
the datasketch row and the releases of changes),
RELEASES_TREE (source: a folder of releases whose built docs are its top
folders *-html: three more rows; changes runs on it instead of QDIR's
corpus), SHARE_DOC (/usr/share/doc: the third tree of changes), CAT_LOCALES (60), CAT_RELEASES (6),
SLICE_FILES (20000), FOLDERS_FILES (100000), FOLDERS_RELEASES (21), and
the sizes of the synthetic inputs PFILES, PGROUPS, QFILES, VDOCS,
SCALE_FILES, SCALE_AVG, OVL_FILES, REPORT_LINKS; the out-of-core run's
OOC_MEMORY (256M: make's MEMORY), OOC_MARGIN (64M: the group's limit is
their sum) and OOC_FILES (300000: the tree, ~SIZE bytes a file, at least
8x the limit); the run on 10^7 files' TM_FILES (10000000), TM_SIZE (200:
bytes a file, inline in 512-byte inodes), TM_DIRS (10000 folders) and
TM_MEMORY and TM_CAPACITY (make's MEMORY and CAPACITY; empty: the
stages' defaults).

Nothing is installed or downloaded while measuring: the tools a run needs
(/usr/bin/time, zstd, jdupes, ssdeep, rmlint, pdftotext, ...) are checked
first, and a missing one stops the run with one line naming its Debian
package; make quality's corpus and venv come from `make quality-venv
QDIR=...` beforehand. Binaries: ${CARGO_TARGET_DIR:-target}/release,
built first. Figures are medians of RUNS runs (one warm-up first) with a
warm page cache; what matters is the ratio fsim / reference measured side
by side, not absolute times.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchmarks import alone, changes, config, inputs, main, outofcore, performance, render, tenmillion  # noqa: E402
from benchmarks.measure import Bench, Failed, log  # noqa: E402


def machine():
    """The date, the machine and the commit the figures are of."""
    with open("/proc/meminfo", encoding="utf-8") as f:
        mem = next(int(x.split()[1]) for x in f if x.startswith("MemTotal"))
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        cpu = next((x.split(":", 1)[1].strip() for x in f if x.startswith("model name")), "?")
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    commit = r.stdout.strip() or "?"
    if subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src", "Cargo.toml", "Cargo.lock", "Makefile"],
                      capture_output=True).returncode:
        commit += " (with local changes)"
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "cores": len(os.sched_getaffinity(0)), "mem": f"{mem / 1048576:.0f} GiB", "cpu": cpu,
            "commit": commit}


def data_path(cfg):
    return os.path.join(cfg.bench, f"bench-{cfg.only}.json" if cfg.only else "bench.json")


def save(data, path):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def write(path, text):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    log(f"wrote {path}")


def replace_in(path, change):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    write(path, change(text))


def render_outputs(data, out, hard_out):
    """The markdown of DATA: OUT whole (a full run), or its part a section
    alone replaces, or HARD_OUT."""
    only = data["only"]
    data = dict(data, hard_out=hard_out)
    if only in ("", "hard"):
        write(hard_out, render.hard_file(data))
    if only == "":
        write(out, performance.performance(data))
    elif only == "documents":
        rows, note = render.documents_rows(data)
        replace_in(out, lambda t: render.replace_documents(t, rows, note))
    elif only == "folders":
        replace_in(out, lambda t: render.replace_section(t, "## Folder pairs", render.folders_section(data)))
    elif only == "source":
        replace_in(out, lambda t: render.replace_section(
            t, "## Whole default run on a real repository", render.source_section(data)))
    elif only == "outofcore":
        replace_in(out, lambda t: render.replace_section(
            t, "## Out of core", render.outofcore_section(data), after="## Scale beyond RAM"))
    elif only == "tenmillion":
        replace_in(out, lambda t: render.replace_section(
            t, "## 10^7 files", render.tenmillion_section(data), after="## Out of core"))
    elif only == "changes":
        replace_in(out, lambda t: render.replace_section(
            t, "## Re-runs and scratch space", render.changes_section(data), after="## 10^7 files"))


def measure_full(bench, cfg, run):
    """Every section, in the order of the former bash script; RUN(name, fn) measures one and saves."""
    t = inputs.bulk_tree(bench, cfg)
    big = inputs.big_file(bench, cfg, t)
    run("table", lambda: main.table(bench, cfg, t, big))
    run("documents", lambda: alone.documents(bench, cfg))
    run("single", lambda: main.single(bench, cfg, t))
    run("scale", lambda: main.scale(bench, cfg))
    run("outofcore", lambda: outofcore.outofcore(bench, cfg))
    run("tenmillion", lambda: tenmillion.tenmillion(bench, cfg))
    run("overlap", lambda: main.overlap(bench, cfg))
    run("hard", lambda: alone.hard(bench, cfg))
    run("changes", lambda: changes.changes(bench, cfg))
    run("report_links", lambda: main.report_links(bench, cfg))
    run("folders", lambda: alone.folders(bench, cfg))
    run("source", lambda: alone.source(bench, cfg))


def measure(cfg):
    config.check_tools(cfg)
    # The examples too, whichever section runs: built apart, the bins and
    # the examples unify their dependencies' features differently, and each
    # build would redo the other's.
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bins", "--examples"], check=True)
    os.makedirs(cfg.bench, exist_ok=True)
    bench, path = Bench(cfg), data_path(cfg)
    data = {"only": cfg.only, "path": path, "out": cfg.out, "hard_out": cfg.hard_out, "meta": machine(),
            "knobs": cfg.knobs(), "sections": {}}

    def run(name, fn):
        data["sections"][name] = fn()
        save(data, path)

    if cfg.only:
        module = {"outofcore": outofcore, "tenmillion": tenmillion, "changes": changes}.get(cfg.only, alone)
        run(cfg.only, lambda: getattr(module, cfg.only)(bench, cfg))
    else:
        measure_full(bench, cfg, run)
    log(f"the measurements in {path}")
    render_outputs(data, cfg.out, cfg.hard_out)


def main_():
    ap = argparse.ArgumentParser(description="fsim's benchmarks (docs/performance.md); knobs in the environment")
    ap.add_argument("--render", metavar="FILE.json", help="render the markdown from FILE.json, measuring nothing")
    args = ap.parse_args()
    data = None
    if args.render:
        with open(args.render, encoding="utf-8") as f:
            data = json.load(f)
    # Every path (BENCH, OUT, HARD_OUT, QDIR) from the repository's root.
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if data is not None:
        render_outputs(data, os.environ.get("OUT") or data["out"], os.environ.get("HARD_OUT") or data["hard_out"])
        return
    try:
        measure(config.Config())
    except (Failed, subprocess.CalledProcessError) as e:
        sys.exit(f"bench: {e}")


if __name__ == "__main__":
    main_()
