"""A re-run after 1 % of the files changed, and the scratch space of every
run, on the trees the scratch and re-run targets name: the releases (make
quality's, or RELEASES_TREE), the 100,000-file overlap tree and
/usr/share/doc (SHARE_DOC).

Each tree is copied, then `make report` runs on it from scratch; 1 % of its
files are edited (a line inserted in the middle of every 100th file) and
`make report PREVIOUS=<first>` runs, then a run from scratch on the edited
tree, then the re-run again as the fsim command makes it (`DROP_PREVIOUS=1`:
the earlier folder's bins removed before the chunking, its chunk records
once the new records are written); the same 1 % is then touched (a new mtime, the bytes kept) and
`PREVIOUS=<that run>` runs, kept and as fsim re-runs, beside a second run
from scratch; then 1 % of the files are removed, then a new version (a
line inserted) is added beside 1 % of them, each re-run as fsim re-runs
beside a run from scratch. Every run
goes through scripts/scratch-peak.py, which samples the work folder (and,
for a re-run, the earlier folder it links from) and times the run; the
re-runs' reports and verified pairs must be the bytes of the run from
scratch on the same tree."""

import gzip
import json
import os
import shutil
import subprocess
import time
import zlib

from . import inputs, measure
from .measure import log, sh

# What a re-run must write the same bytes of as a run from scratch: the
# reports of the default FORMATS (txt json; the targets are for the
# defaults) and the verified pairs.
COMPARED = ("report.txt", "report.json", "verified.tsv")
EVERY = 100  # 1 % of the files: every 100th, from the 8th (rerun-bench.sh's choice)


# Where the 1 % starts for each change: the files removed and those a new
# version is added beside are other files than the edited ones.
FIRST = {"edit": 7, "touch": 7, "remove": 57, "add": 32}


def changed_paths(root, first=7):
    """Every 100th regular file of ROOT in byte order of its path, from
    the FIRST: the 1 %."""
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
    paths = [p for p in paths if os.path.isfile(p) and not os.path.islink(p)]
    return [p for i, p in enumerate(paths) if i % EVERY == first], len(paths)


def added_path(path):
    """The name of a new version of PATH beside it: `-v2` before its last
    suffix (`notes.txt` -> `notes-v2.txt`, `ls.1.gz` -> `ls.1-v2.gz`), so
    that its type is found by the same name."""
    d, name = os.path.split(path)
    stem, dot, ext = name.rpartition(".")
    new = f"{stem}-v2.{ext}" if dot and stem else f"{name}-v2"
    return os.path.join(d, new)


def insert_line(data, n):
    """DATA with the line "edited line N" inserted after the line that
    holds its middle byte (at its end when it has no line end after it)."""
    mid = data.find(b"\n", len(data) // 2)
    mid = len(data) if mid < 0 else mid + 1
    return data[:mid] + b"edited line %d\n" % n + data[mid:]


def edit_file(path, n):
    """A line inserted in PATH; a gzip file's text edited and compressed
    again (an edited manual page, not a broken archive), the mtime of the
    gzip header 0 so the edit is the same bytes on every run."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.compress(insert_line(gzip.decompress(data), n), mtime=0)
        except (OSError, EOFError, zlib.error):
            data = insert_line(data, n)  # not gzip after all: edited as bytes
    else:
        data = insert_line(data, n)
    with open(path, "wb") as f:
        f.write(data)


def change(root, how):
    """Edits, touches, removes 1 % of ROOT's files, or adds a new version
    (a line inserted, as an edit) beside 1 % of them; (changed, of all
    before)."""
    paths, total = changed_paths(root, FIRST[how])
    later = time.time() + 60
    for n, p in enumerate(paths):
        if how == "touch":
            os.utime(p, (later, later))
        elif how == "remove":
            os.remove(p)
        elif how == "add":
            new = added_path(p)
            shutil.copyfile(p, new)
            edit_file(new, n)
        else:
            edit_file(p, n)
    return len(paths), total


def partners(work):
    """What a re-run in WORK changed, as links see it: its table's files,
    its kept links, the files it read again (its changed set's `F` lines)
    and the unchanged files linked to one of them (a dict of counts)."""
    files = measure.records(os.path.join(work, "files.tsv"))
    edited = {int(line.split(b"\t")[1]) for line in measure.record_lines(os.path.join(work, "changed.tsv"))
              if line.startswith(b"F\t")}
    links, linked = 0, set()
    for line in measure.record_lines(os.path.join(work, "verified.tsv")):
        if line.startswith(b"#"):
            continue
        a, b = (int(x) for x in line.split(b"\t")[:2])
        links += 1
        if a in edited:
            linked.add(b)
        if b in edited:
            linked.add(a)
    return {"files": files, "links": links, "edited": len(edited), "partners": len(linked - edited)}


def peak_run(bench, repo, work, also=(), extra=()):
    """`make report` on REPO into WORK under scratch-peak.py: its JSON
    (wall, CPU, the peak, the files at the peak, the end), the write-back of
    the runs before it done first (untimed)."""
    sh("sync")
    out = work + ".peak.json"
    cmd = ["python3", "scripts/scratch-peak.py", "--repo", repo, "--work", work, "--json", out]
    for a in also:
        cmd += ["--also", a]
    # NO_BUILD=1: make never runs cargo inside a timed run, whatever BIN is.
    cmd += ["--", "make", "-s", "report", f"BIN={bench.bp}", f"REPO={repo}", f"WORK={work}",
            "QUIET=-q", "NO_BUILD=1", *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out, encoding="utf-8") as f:
        r = json.load(f)
    os.remove(out)
    return {k: r[k] for k in ("wall_seconds", "cpu_seconds", "repository_bytes", "peak_disk_bytes", "peak_ratio",
                              "peak_files", "final_disk_bytes", "final_ratio")}


def same_bytes(a, b):
    """The files of COMPARED that differ between work folders A and B."""
    return [f for f in COMPARED if subprocess.run(["cmp", "-s", f"{a}/{f}", f"{b}/{f}"]).returncode != 0]


def one_tree(bench, key, label, src):
    """The seven runs on a copy of SRC (module doc); the copy and its runs
    removed after."""
    d = os.path.join(bench.w, "changes", key)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    repo = os.path.join(d, "repo")
    subprocess.run(["cp", "-a", src, repo], check=True)
    w = {n: os.path.join(d, n) for n in ("first", "edit", "scratch", "edit_drop", "touch", "touch_drop", "scratch2",
                                         "remove_drop", "scratch3", "add_drop", "scratch4")}
    log(f"changes: {label}: the first run")
    r = {"label": label, "source": src, "first": peak_run(bench, repo, w["first"])}
    # LINE_SETS=auto: whether the first run kept its line sets, and their size.
    lines = os.path.join(w["first"], "lines.tsv")
    r["lines_bytes"] = os.path.getsize(lines) if os.path.exists(lines) else None
    r["edited"], r["files"] = change(repo, "edit")
    r["edit"] = peak_run(bench, repo, w["edit"], [w["first"]], [f"PREVIOUS={w['first']}"])
    r["scratch"] = peak_run(bench, repo, w["scratch"])
    r["edit_differs"] = same_bytes(w["edit"], w["scratch"])
    r["partners"] = partners(w["edit"])
    # The same re-run as the fsim command makes it: the earlier folder is
    # its own (WORK/previous), its records dropped once the new are written.
    r["edit_drop"] = peak_run(bench, repo, w["edit_drop"], [w["first"]],
                              [f"PREVIOUS={w['first']}", "DROP_PREVIOUS=1"])
    r["edit_drop_differs"] = same_bytes(w["edit_drop"], w["scratch"])
    r["touched"], _ = change(repo, "touch")
    r["touch"] = peak_run(bench, repo, w["touch"], [w["scratch"]], [f"PREVIOUS={w['scratch']}"])
    r["touch_drop"] = peak_run(bench, repo, w["touch_drop"], [w["scratch"]],
                               [f"PREVIOUS={w['scratch']}", "DROP_PREVIOUS=1"])
    r["scratch2"] = peak_run(bench, repo, w["scratch2"])
    r["touch_differs"] = same_bytes(w["touch"], w["scratch2"])
    r["touch_drop_differs"] = same_bytes(w["touch_drop"], w["scratch2"])
    # Files removed, then new versions added, each re-run as fsim makes it.
    for how, count, prev, scratch in (("remove", "removed", "scratch2", "scratch3"),
                                      ("add", "added", "scratch3", "scratch4")):
        r[count], _ = change(repo, how)
        r[how + "_drop"] = peak_run(bench, repo, w[how + "_drop"], [w[prev]],
                                    [f"PREVIOUS={w[prev]}", "DROP_PREVIOUS=1"])
        r[scratch] = peak_run(bench, repo, w[scratch])
        r[how + "_drop_differs"] = same_bytes(w[how + "_drop"], w[scratch])
    shutil.rmtree(d)
    return r


def trees(bench, cfg):
    """(key, label, folder) of each tree, or (key, label, None, why) when
    it is not on this machine."""
    rel = cfg.releases_tree or os.path.join(cfg.qdir, "corpus")
    out = []
    if os.path.isdir(rel):
        out.append(("releases", "the releases" if cfg.releases_tree else "`make quality`'s releases", rel))
    else:
        out.append(("releases", "the releases", None, f"{rel} is missing (`make quality-venv` fetches it)"))
    out.append(("overlap", f"the {cfg.ovl_files:,}-file overlap tree", inputs.overlap_tree(bench, cfg)))
    if os.path.isdir(cfg.share_doc):
        out.append(("doc", f"`{cfg.share_doc}`", cfg.share_doc))
    else:
        out.append(("doc", f"`{cfg.share_doc}`", None, "not on this machine"))
    return out


def changes(bench, cfg):
    rows = []
    for t in trees(bench, cfg):
        if t[2] is None:
            rows.append({"label": t[1], "skipped": t[3]})
            continue
        rows.append(one_tree(bench, *t))
    return {"trees": rows, "compared": COMPARED}
