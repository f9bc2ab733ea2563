#!/usr/bin/env python3
"""Peak scratch space of a run: the work folder sampled while it runs.

    scripts/scratch-peak.py --repo TREE --work WORK [--also DIR]... -- COMMAND...

Runs COMMAND (e.g. `make -s report REPO=TREE WORK=WORK` or `fsim TREE`)
and every --interval seconds (default 0.1) walks WORK (and each --also
folder, e.g. a PREVIOUS= run's folder) summing the disk blocks
(st_blocks * 512) and the apparent sizes of its files, each inode once
(a file hard-linked into both folders counts once), and of the files
removed from them that a process still holds open (a stage's unlinked
temporary files: fsim-analyze's line spill, fsim-report's folder pairs;
read from /proc/PID/fd, listed as "PATH (unlinked)"). Prints the peak of
the disk blocks against the repository's size (apparent bytes of its
regular files, the work folder left out when it is inside), the files at
that moment, and the peak of each moment of the run, a moment being named
by the file written last (the stage at work), with the run's wall time and
CPU time (user and system, its descendants' included). `--json FILE`
writes the same as JSON. Exit status: COMMAND's, or 3 with --limit X when the peak
is above X times the repository.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time


def tree_bytes(root, skip):
    total = 0
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if os.path.join(d, x) not in skip]
        for f in files:
            try:
                st = os.lstat(os.path.join(d, f))
            except OSError:
                continue
            if (st.st_mode & 0o170000) == 0o100000:
                total += st.st_size
    return total


def sample(roots):
    """(disk bytes, apparent bytes, {path: disk bytes}, newest path)."""
    seen = set()
    disk = apparent = 0
    files = {}
    newest, newest_t = "", -1.0
    for p, st, named in listed(roots):
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        b = st.st_blocks * 512
        disk += b
        apparent += st.st_size
        files[p if named else p + " (unlinked)"] = b
        if named and st.st_mtime > newest_t and st.st_size > 0:
            newest, newest_t = p, st.st_mtime
    return disk, apparent, files, newest


def listed(roots):
    """(path, stat, named) of the files under `roots`, then of those
    removed from them that a process still holds open (named False)."""
    for root in roots:
        for d, _, names in os.walk(root):
            for f in names:
                p = os.path.join(d, f)
                try:
                    yield p, os.lstat(p), True
                except OSError:
                    continue  # removed while walked
    for p, st in unlinked(roots):
        yield p, st, False


def unlinked(roots):
    """(path, stat) of the files under `roots` that were removed while a
    process holds them open (their /proc/PID/fd link ends in " (deleted)")."""
    prefixes = tuple(r.rstrip("/") + "/" for r in roots)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        fds = f"/proc/{pid}/fd"
        try:
            names = os.listdir(fds)
        except OSError:
            continue  # gone, or not ours to see
        for fd in names:
            link = os.path.join(fds, fd)
            try:
                target = os.readlink(link)
                if not (target.endswith(" (deleted)") and target.startswith(prefixes)):
                    continue
                yield target[: -len(" (deleted)")], os.stat(link)
            except OSError:
                continue  # closed while looked at


# Temporary names (tempfile's .tmpXXXXXX, numbered runs) folded into one
# moment name: "sorted.tsv.runs/run-17" is the sort's moment.
MOMENT_RE = re.compile(r"(\.tmp[A-Za-z0-9]+|[-.]?\d+)(?=\.|$|/)")


def moment(path, roots):
    for r in roots:
        if path.startswith(r.rstrip("/") + "/"):
            path = os.path.relpath(path, r)
            break
    return MOMENT_RE.sub("", path)


def mb(b):
    return f"{b / 1e6:,.1f} MB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True, action="append")
    ap.add_argument("--work", required=True)
    ap.add_argument("--also", action="append", default=[])
    ap.add_argument("--interval", type=float, default=0.1)
    ap.add_argument("--json")
    ap.add_argument("--limit", type=float)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command")
    roots = [os.path.abspath(a.work)] + [os.path.abspath(x) for x in a.also]
    repo = sum(tree_bytes(r, set(roots)) for r in a.repo)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    peak = (0, 0, {}, "")
    peak_t = 0.0
    moments = {}
    samples = 0
    while True:
        done = proc.poll() is not None
        s = sample(roots)
        samples += 1
        m = moment(s[3], roots) if s[3] else "(empty)"
        if s[0] > moments.get(m, (0,))[0]:
            moments[m] = (s[0], time.monotonic() - t0)
        if s[0] > peak[0]:
            peak, peak_t = s, time.monotonic() - t0
        if done:
            break
        time.sleep(a.interval)
    wall = time.monotonic() - t0
    # The command's CPU, its descendants' included (each waited for by its
    # parent, as make waits for the stages).
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    final = s
    report = {
        "command": cmd,
        "repository_bytes": repo,
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "samples": samples,
        "peak_disk_bytes": peak[0],
        "peak_apparent_bytes": peak[1],
        "peak_ratio": round(peak[0] / repo, 3) if repo else None,
        "peak_at_seconds": round(peak_t, 2),
        "peak_files": sorted(
            ([moment(p, roots), b] for p, b in peak[2].items()),
            key=lambda x: (-x[1], x[0]),
        )[: a.top],
        "final_disk_bytes": final[0],
        "final_ratio": round(final[0] / repo, 3) if repo else None,
        "moments": [
            {"moment": m, "peak_disk_bytes": v[0], "at_seconds": round(v[1], 2)}
            for m, v in sorted(moments.items(), key=lambda kv: kv[1][1])
        ],
        "exit_status": proc.returncode,
    }
    print(f"repository {mb(repo)}; wall {wall:.1f} s, CPU {cpu:.1f} s, {samples} samples")
    print(
        f"peak {mb(peak[0])} on disk ({report['peak_ratio']}x), apparent {mb(peak[1])}, "
        f"at {peak_t:.1f} s; final {mb(final[0])} ({report['final_ratio']}x)"
    )
    print("files at the peak:")
    for p, b in report["peak_files"]:
        print(f"  {mb(b):>12}  {p}")
    print("peak of each moment (file written last):")
    for m in report["moments"]:
        print(f"  {mb(m['peak_disk_bytes']):>12}  {m['at_seconds']:7.1f} s  {m['moment']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    if proc.returncode:
        return proc.returncode
    if a.limit is not None and repo and peak[0] > a.limit * repo:
        print(f"peak above {a.limit}x the repository", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
