"""The out-of-core run: the whole default `make report` inside a memory
cgroup of MEMORY + MARGIN bytes (page cache included) on a generated tree
of at least 8 times that limit, each run from a cold page cache, each
stage measured (wall, CPU, peak RSS, bytes read and written, proc.py),
`md5sum` on JOBS processes in the same group as the reference, and the
reports compared byte for byte with the same run outside the group. The
group and the cold cache need root: where no group can be made, the runs
outside it are measured and the group's are skipped with the reason."""

import filecmp
import json
import os
import shutil

from . import cgroup, inputs
from .measure import Failed, log, tree_files
from .proc import run_measured

PROC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proc.py")
# The smallest tree / limit ratio the run is a proof at.
MIN_RATIO = 8


def parse_size(text):
    """fsim's sizes (fsim::cli::parse_size): 256M, 1G, 4096 (binary units)."""
    t = text.strip()
    digits = len(t) - len(t.lstrip("0123456789"))
    unit = t[digits:].rstrip("bBi").lower()
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(unit)
    if not digits or mult is None:
        raise SystemExit(f"bench: {text}: expected a size such as 256M")
    return int(t[:digits]) * mult


def budget(cfg):
    """MEMORY, MARGIN and CAPACITY in bytes: fsim-analyze holds up to 1.25
    times its --capacity (docs/usage.md), so CAPACITY = MEMORY / 1.25."""
    mem, margin = parse_size(cfg.ooc_memory), parse_size(cfg.ooc_margin)
    return {"memory": mem, "margin": margin, "limit": mem + margin, "capacity": mem * 4 // 5}


def make_wrap(bench):
    """A folder for make's BIN whose every fsim-* program runs under
    proc.py, which appends its figures to $STAGE_LOG (a JSON line)."""
    wrap = os.path.join(bench.w, "wrap-io")
    shutil.rmtree(wrap, ignore_errors=True)
    os.makedirs(wrap)
    for n in sorted(os.listdir(bench.b)):
        p = os.path.join(bench.b, n)
        if not n.startswith("fsim-") or not os.access(p, os.X_OK) or os.path.isdir(p):
            continue
        with open(os.path.join(wrap, n), "w", encoding="utf-8") as f:
            f.write(f'#!/bin/sh\nexec python3 {PROC} "$STAGE_LOG" {n} {os.path.realpath(p)} "$@"\n')
        os.chmod(os.path.join(wrap, n), 0o755)
    return wrap


def stage_log(path):
    """The rows proc.py appended to PATH."""
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def run_cold(argv, err, group=None, env=None):
    """ARGV from a cold page cache (when root can drop it), inside GROUP
    when given: proc.py's figures, the load average before, and the
    group's peaks, limit hits and OOM kills."""
    d = {"cold": cgroup.drop_caches(), "load": list(os.getloadavg())}
    with open(err, "wb") as e, open(os.devnull, "wb") as out:
        if group is None:
            d.update(run_measured(argv, stdout=out, stderr=e, env=env))
            return d
        with cgroup.Sampler(group) as s:
            d.update(run_measured(group.argv(argv), stdout=out, stderr=e, env=env))
    hits, kills = group.events()
    d["group"] = dict(s.peaks, peak=group.peak(), limit=group.limit, limit_hits=hits, oom_kills=kills)
    return d


def failed_text(d, err):
    """The end of a failed run's stderr, for the data."""
    if d["status"] == 0:
        return d
    with open(err, encoding="utf-8", errors="replace") as f:
        d["stderr"] = f.read()[-2000:]
    return d


def md5_run(bench, tree, place, b):
    """`md5sum` over TREE on JOBS processes, in a group of the limit when PLACE is given."""
    cmd = f"find {tree} -type f -print0 | xargs -0 -P{bench.jobs} -n 1000 md5sum > /dev/null"
    err = os.path.join(bench.w, "ooc-md5.err")
    group = cgroup.Group(*place, f"fsim-bench-md5-{os.getpid()}", b["limit"]) if place else None
    try:
        d = failed_text(run_cold(["bash", "-c", cmd], err, group), err)
    finally:
        if group:
            group.remove()
    d["cmd"] = cmd
    log(f"md5sum{' in the group' if place else ''}: {d['wall']:.2f}s, status {d['status']}")
    return d


def make_args(wrap, tree, work, b):
    return ["make", "-s", "report", f"BIN={wrap}", f"REPO={tree}", f"WORK={work}", "QUIET=-q",
            f"MEMORY={b['memory']}", f"CAPACITY={b['capacity']}"]


def make_run(bench, wrap, tree, place, b, label):
    """The default make report with MEMORY and CAPACITY of B, in a group of
    the limit when PLACE is given; its stages from the wrapper's log."""
    work, slog = os.path.join(bench.w, f"ooc-{label}"), os.path.join(bench.w, f"ooc-{label}.log")
    err = os.path.join(bench.w, f"ooc-{label}.err")
    shutil.rmtree(work, ignore_errors=True)
    if os.path.exists(slog):
        os.remove(slog)
    env = dict(os.environ, STAGE_LOG=slog)
    group = cgroup.Group(*place, f"fsim-bench-make-{os.getpid()}", b["limit"]) if place else None
    try:
        d = failed_text(run_cold(make_args(wrap, tree, work, b), err, group, env), err)
    finally:
        if group:
            group.remove()
    d.update(work=work, stages=stage_log(slog))
    log(f"make report ({label}): {d['wall']:.2f}s, status {d['status']}")
    return d


def keep_reports(d):
    """The reports of run D moved beside its work folder, which is removed
    (its records are gigabytes): the folder of the reports."""
    dest = d["work"] + "-reports"
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    if os.path.isdir(d["work"]):
        for n in os.listdir(d["work"]):
            if n.startswith("report."):
                os.replace(os.path.join(d["work"], n), os.path.join(dest, n))
    shutil.rmtree(d["work"], ignore_errors=True)
    return dest


def same_reports(a, b):
    """Each report in folder A byte-identical to B's: {file: bool}."""
    out = {}
    for n in sorted(os.listdir(a)):
        other = os.path.join(b, n)
        out[n] = os.path.isfile(other) and filecmp.cmp(os.path.join(a, n), other, shallow=False)
    return out


def tree_of(bench, cfg):
    """The tree (fsim-gen --bulk OOC_FILES) and its files and bytes."""
    tree = inputs.outofcore_tree(bench, cfg)
    files = tree_files(tree)
    return tree, len(files), sum(os.lstat(p).st_size for p in files)


def outofcore(bench, cfg):
    """The section's data: the budget, the tree, md5sum and make report
    outside the group and (where one can be made) inside it."""
    b = budget(cfg)
    tree, nfiles, nbytes = tree_of(bench, cfg)
    if nbytes < MIN_RATIO * b["limit"]:
        log(f"warning: the tree ({nbytes} bytes) is under {MIN_RATIO}x the limit ({b['limit']}): raise OOC_FILES")
    place, why = cgroup.find_place(f"fsim-bench-probe-{os.getpid()}", b["limit"])
    wrap = make_wrap(bench)
    d = {"budget": b, "tree": tree, "files": nfiles, "bytes": nbytes, "gen": inputs.outofcore_opts(cfg),
         "place": list(place) if place else None, "skipped": why, "jobs": bench.jobs,
         "md5_free": md5_run(bench, tree, None, b), "free": make_run(bench, wrap, tree, None, b, "free")}
    if d["free"]["status"] != 0:
        raise Failed(f"make report outside the group failed:\n{d['free'].get('stderr', '')}")
    free_reports = keep_reports(d["free"])
    if place:
        d["md5_group"] = md5_run(bench, tree, place, b)
        d["group"] = make_run(bench, wrap, tree, place, b, "group")
        group_reports = keep_reports(d["group"])
        d["same"] = same_reports(free_reports, group_reports) if d["group"]["status"] == 0 else {}
        shutil.rmtree(group_reports, ignore_errors=True)
    else:
        log(f"the runs in a memory group are skipped: {why}")
    shutil.rmtree(free_reports, ignore_errors=True)
    return d
