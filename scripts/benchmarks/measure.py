"""Running and measuring: commands under /usr/bin/time, medians of RUNS
runs after a warm-up, md5sum over a tree, and the wrapper folder that
logs every stage of a `make report` (its time and peak RSS)."""

import os
import subprocess
import sys
import time


class Failed(Exception):
    """A measured command failed: its command line and stderr."""


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def sh(cmd, quiet=True, env=None, check=True):
    """Runs CMD with bash; its output thrown away when QUIET."""
    out = subprocess.DEVNULL if quiet else None
    r = subprocess.run(["bash", "-c", cmd], stdout=out, env=env)
    if check and r.returncode != 0:
        raise Failed(f"'{cmd}' failed (exit {r.returncode})")
    return r.returncode


def capture(args, **kw):
    """The standard output of ARGS (a list), as text."""
    return subprocess.run(args, stdout=subprocess.PIPE, check=True, text=True, **kw).stdout


def median(values):
    """The middle value (the lower of the two middle ones) (the former script's awk)."""
    v = sorted(values)
    return v[(len(v) + 1) // 2 - 1]


def ratio(a, b):
    """a / b to two decimals, or "-"."""
    return f"{a / b:.2f}" if b and b > 0 else "-"


def record_lines(path):
    """The lines of an fsim record file, text or zstd (`make report`
    keeps its records zstd-compressed by default: COMPRESS=1)."""
    with open(path, "rb") as f:
        zstd = f.read(4) == b"\x28\xb5\x2f\xfd"
    if not zstd:
        with open(path, "rb") as f:
            yield from f
        return
    p = subprocess.Popen(["zstd", "-dcq", path], stdout=subprocess.PIPE)
    yield from p.stdout
    if p.wait() != 0:
        sys.exit(f"bench: {path}: zstd -dc failed ({p.returncode})")


def records(path):
    """The lines of PATH that are not comments (records of an fsim file)."""
    return sum(1 for line in record_lines(path) if not line.startswith(b"#"))


def text_bytes(path):
    """The bytes of an fsim record file as text (decompressed)."""
    return sum(len(line) for line in record_lines(path))


def trailer_field(path, tag, key):
    """KEY=VALUE's value in the trailer line starting with TAG (e.g.
    `#end chunks ... records=N`), or None."""
    for line in record_lines(path):
        if line.startswith(tag.encode()):
            for field in line.decode().rstrip("\n").split("\t")[1:]:
                if field.startswith(key + "="):
                    return field[len(key) + 1:]
    return None


def tree_files(tree):
    """The regular files under TREE (symbolic links not followed), as find -type f."""
    out = []
    for root, _dirs, files in os.walk(tree):
        for f in files:
            p = os.path.join(root, f)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(p)
    return out


def tree_bytes(tree):
    return sum(os.lstat(p).st_size for p in tree_files(tree))


def warm(tree):
    """Reads every file of TREE once (warm page cache), untimed."""
    sh(f"find {tree} -type f -print0 | xargs -0 cat > /dev/null")


class Bench:
    """The measuring side of a run: where the binaries are, the work folder,
    RUNS and JOBS."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.runs = cfg.runs
        self.jobs = cfg.jobs
        self.w = cfg.bench
        self.b = cfg.bin
        self.bp = cfg.bin_make
        self.wrap = os.path.join(self.w, "wrap")
        self.tout = os.path.join(self.w, "time.out")
        self.eout = os.path.join(self.w, "stderr.out")

    def timed(self, cmd, fmt="%e %M"):
        """One run of CMD under /usr/bin/time: the fields of FMT, as strings."""
        with open(self.eout, "wb") as err:
            r = subprocess.run(["/usr/bin/time", "-f", fmt, "-o", self.tout, "bash", "-c", cmd],
                               stdout=subprocess.DEVNULL, stderr=err)
        if r.returncode != 0:
            with open(self.eout, encoding="utf-8", errors="replace") as f:
                raise Failed(f"'{cmd}' failed:\n{f.read()}")
        with open(self.tout, encoding="utf-8") as f:
            return f.read().strip().split("\n")[-1].split()

    def measure(self, name, nbytes, cmd, before=None):
        """Median wall time and largest peak RSS over RUNS runs of CMD, after
        one warm-up run. BEFORE, when given, runs (untimed) before each run:
        the source section removes the earlier runs' work folders and syncs,
        so that no run waits on the write-back of the runs before it."""
        if before:
            sh(before)
        subprocess.run(["bash", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls, rss = [], 0
        for _ in range(self.runs):
            if before:
                sh(before)
            w, m = self.timed(cmd)
            walls.append(float(w))
            rss = max(rss, int(m))
        wall = median(walls)
        mbs = "-"
        if nbytes > 0:
            mbs = f"{nbytes / 1e6 / wall:.0f}" if wall > 0 else "-"
        row = {"name": name, "cmd": cmd, "bytes": nbytes, "wall": wall, "walls": walls,
               "rss": rss // 1024, "mbs": mbs}
        log(f"{name}: {wall:.2f}s {mbs} MB/s {rss // 1024} MB")
        return row

    def tree_md5(self, tree, name):
        """md5sum over TREE, its files read once first (warm cache), split
        evenly between JOBS processes (5000 a process at most): the
        measurement of `measure` with the tree's bytes and files."""
        files = tree_files(tree)
        nbytes = sum(os.lstat(p).st_size for p in files)
        per = min(5000, (len(files) + self.jobs - 1) // self.jobs)
        warm(tree)
        cmd = f"find {tree} -type f -print0 | xargs -0 -P{self.jobs} -n {per} md5sum"
        row = self.measure(name, nbytes, cmd)
        row["files"] = len(files)
        return row

    def make_wrap(self):
        """A folder to give make as BIN: each stage runs under
        /usr/bin/time, which appends "STAGE seconds peak-RSS-KiB
        command-line" to $STAGE_LOG."""
        sh(f"rm -rf {self.wrap}")
        os.makedirs(self.wrap)
        for n in sorted(os.listdir(self.b)):
            p = os.path.join(self.b, n)
            if not n.startswith("fsim-") or not os.access(p, os.X_OK) or os.path.isdir(p):
                continue
            with open(os.path.join(self.wrap, n), "w", encoding="utf-8") as f:
                f.write(f'#!/bin/sh\nexec /usr/bin/time -a -o "$STAGE_LOG" -f "{n} %e %M %C" '
                        f'{os.path.realpath(p)} "$@"\n')
            os.chmod(os.path.join(self.wrap, n), 0o755)

    def staged_make(self, stage_log, args):
        """One `make -s report BIN=<wrapper> ARGS...` with every stage logged
        to STAGE_LOG: its wall time (s) and the log's rows
        (name, seconds, peak RSS KiB, fields of the command line)."""
        with open(stage_log, "w"):
            pass
        env = dict(os.environ, STAGE_LOG=stage_log)
        t0 = time.time()
        subprocess.run(["make", "-s", "report", f"BIN={self.wrap}"] + args, check=True,
                       stdout=subprocess.DEVNULL, env=env)
        t1 = time.time()
        return round(t1 - t0, 2), stage_rows(stage_log)


def stage_rows(path):
    """The rows of a stage log: (name, seconds, peak RSS KiB, fields)."""
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 3 or not fields[0].startswith("fsim-"):
                continue
            rows.append({"stage": fields[0], "wall": float(fields[1]), "rss_kib": int(fields[2]),
                         "args": fields[3:]})
    return rows
