"""The sections that also run alone (BENCH_ONLY): hard, documents, folders,
source. Each measures and returns its data (a dict); render.py writes it."""

import json
import os
import shutil

from . import inputs
from .measure import log, ratio, records, sh


def hard_input(bench, key, label, opts):
    """One hard input: md5sum over its tree, then one default `make report`
    with every format, each stage logged through the wrapper folder."""
    tree = inputs.hard_tree(bench, key, opts)
    md5 = bench.tree_md5(tree, f"md5sum, {label}")
    run = os.path.join(bench.w, f"hard-{key}-run")
    shutil.rmtree(run, ignore_errors=True)
    # No write-back of the generator's or an earlier run's files pending.
    sh("sync")
    total, stages = bench.staged_make(os.path.join(bench.w, f"hard-{key}.log"), [
        f"REPO={tree}", f"WORK={run}", "QUIET=-q", "FORMATS=txt json html xlsx"])
    with open(os.path.join(run, "report.json"), encoding="utf-8") as f:
        links = json.load(f)["summary"]["links"]
    inter, reports = [], []
    for root, _d, files in os.walk(run):
        for n in files:
            p = os.path.join(root, n)
            (reports if n.startswith("report.") else inter).append((os.path.getsize(p), os.path.relpath(p, run)))
    big, bigname = max(inter) if inter else (0, "-")
    rbig, rname = max(reports) if reports else (0, "-")
    verify = [s["wall"] for s in stages if s["stage"] == "fsim-verify"]
    d = {"label": label, "gen": opts, "tree": tree, "files": md5["files"], "bytes": md5["bytes"],
         "md5": md5, "total": total, "candidates": records(os.path.join(run, "pairs.tsv")),
         "links": links, "verify_wall": verify[0] if verify else None, "stages": stages,
         "biggest": [bigname, big], "biggest_report": [rname, rbig]}
    log(f"{label}: {total}s, md5sum {md5['wall']:.2f}s, {ratio(total, md5['wall'])}x, "
        f"{d['candidates']} candidates, fsim-verify {d['verify_wall']:.2f}s")
    shutil.rmtree(run, ignore_errors=True)
    return d


def hard(bench, cfg):
    """Whole default run on hard inputs: translation catalogs and
    partial-overlap slices (fsim-gen --catalogs, --slices)."""
    bench.make_wrap()
    return {"inputs": [
        hard_input(bench, "catalogs", f"catalogs, {cfg.cat_locales} locales × {cfg.cat_releases} releases",
                   f"--catalogs {cfg.cat_locales} --catalog-releases {cfg.cat_releases}"),
        hard_input(bench, "slices", f"slices, {cfg.slice_files} files",
                   f"--slices {cfg.slice_files} --bulk-dirs 300"),
    ]}


def documents(bench, cfg):
    """Content views on the documents corpus of make quality: make report
    with the defaults against CONTENT=raw (target <= 3x) and md5sum."""
    tree = inputs.documents_tree(bench, cfg)
    run = os.path.join(bench.w, "docrun")
    views = f"make -s report BIN={bench.bp} REPO={tree} WORK={run} QUIET=-q && rm -rf {run}"
    raw = f"make -s report BIN={bench.bp} REPO={tree} WORK={run} QUIET=-q CONTENT=raw && rm -rf {run}"
    shutil.rmtree(run, ignore_errors=True)
    md5 = bench.tree_md5(tree, "md5sum, documents")
    return {"tree": tree, "files": md5["files"], "bytes": md5["bytes"], "md5": md5,
            "raw": bench.measure("make report CONTENT=raw, documents", md5["bytes"], raw),
            "views": bench.measure("make report, documents", md5["bytes"], views)}


def folders(bench, cfg):
    """Folder pairs: make report against rmlint --merge-directories and
    md5sum on a catalogs tree; fsim-report alone; fsim-report at scale on
    examples/gen_folders, every format within --memory 256M."""
    tree = inputs.folders_tree(bench, cfg)
    fw = os.path.join(bench.w, "folders-run")
    mk = f"rm -rf {fw} && make -s report BIN={bench.bp} REPO={tree} WORK={fw} QUIET=-q"
    rm = f"rmlint --merge-directories -o json:{bench.w}/rmlint.json {tree}"
    md5 = bench.tree_md5(tree, "md5sum, folders tree")
    d = {"tree": tree, "files": md5["files"], "bytes": md5["bytes"], "md5": md5,
         "rmlint": bench.measure("rmlint --merge-directories, folders tree", md5["bytes"], rm),
         "make": bench.measure("make report, folders tree", md5["bytes"], mk)}
    rep = (f"{bench.b}/fsim-report -q --files {fw}/files.tsv --format json -o {fw}/folders.json "
           f"{fw}/verified.tsv")
    d["report"] = bench.measure("fsim-report json, folders tree", 0, rep)
    with open(os.path.join(fw, "folders.json"), encoding="utf-8") as f:
        j = json.load(f)
    first = j["folders"][0] if j["folders"] else {"a": "-", "b": "-", "percent": "-"}
    d["found"] = {"folders": len(j["folders"]), "families": len(j["folder_families"]),
                  "a": first["a"].rsplit("/", 1)[-1], "b": first["b"].rsplit("/", 1)[-1],
                  "percent": first["percent"]}
    g = inputs.gen_folders(bench, cfg)
    d["links"] = records(os.path.join(g, "verified.tsv"))
    d["scale"] = []
    for fmt in ("text", "json", "tsv", "html", "xlsx"):
        d["scale"].append(dict(bench.measure(
            f"fsim-report {fmt}, gen_folders", 0,
            f"{bench.b}/fsim-report -q --memory 256M --tmpdir {g} --files {g}/files.tsv --format {fmt} "
            f"-o {g}/report.{fmt} {g}/verified.tsv"), format=fmt))
    return d


SOURCE_ROWS = {  # label: (name, target)
    "whole": ("Django + moment (whole)", "≤ 10"),
    "rest": ("Django + moment (rest)", "≤ 10"),
    "locale": ("Django + moment (locale)", "≤ 20 (catalog-heavy)"),
    "bash": ("bash", "≤ 20 (catalog-heavy)"),
    "releases": ("releases (whole)", "≤ 10"),
    "releases-src": ("releases (sources)", "≤ 10"),
    "releases-html": ("releases (HTML docs)", "≤ 10"),
}


def source(bench, cfg):
    """Whole default run on a real repository: md5sum and the default make
    report (a new WORK each run) on make quality's trees, side by side."""
    trees = inputs.source_trees(bench, cfg)
    labels = ["whole", "rest", "locale", "bash"]
    rel = cfg.releases_tree
    if rel:
        if not os.path.isdir(rel):
            raise SystemExit(f"bench: RELEASES_TREE={rel} is not a folder")
        trees["releases"] = rel
        trees["releases-src"], trees["releases-html"] = inputs.release_trees(bench, rel)
        labels += ["releases", "releases-src", "releases-html"]
    rows = []
    for label in labels:
        name, target = SOURCE_ROWS[label]
        tree, w = trees[label], bench.w
        mk = f"make -s report BIN={bench.bp} REPO={tree} WORK=$(mktemp -d {w}/source-run.XXXXXX) QUIET=-q"
        md5 = bench.tree_md5(tree, f"md5sum, {name}")
        m = bench.measure(f"make report, {name}", md5["bytes"], mk, before=f"rm -rf {w}/source-run.*; sync")
        runs = sorted((p for p in os.listdir(w) if p.startswith("source-run.")),
                      key=lambda p: os.path.getmtime(os.path.join(w, p)))
        pairs = records(os.path.join(w, runs[-1], "pairs.tsv"))
        sh(f"rm -rf {w}/source-run.*")
        rows.append({"label": label, "name": name, "target": target, "tree": tree, "files": md5["files"],
                     "bytes": md5["bytes"], "candidates": pairs, "md5": md5, "make": m})
    for k in ("rest", "locale", "bash", "releases-src", "releases-html", "whole"):
        if k in trees and k != "releases":
            shutil.rmtree(trees[k], ignore_errors=True)
    return {"corpus": os.path.join(cfg.qdir, "corpus"), "releases_tree": rel, "rows": rows}
