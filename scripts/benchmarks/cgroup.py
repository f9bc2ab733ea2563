"""A memory cgroup to run a command in (the out-of-core run): cgroup v2
(memory.max, memory.peak) or v1 (memory.limit_in_bytes,
memory.max_usage_in_bytes), whichever has the memory controller here,
found at run time. Page cache is charged to the group in both. Making
one needs root (or a delegated v2 subtree); where no place is writable,
`find_place` says why and the run is skipped with that note."""

import errno
import os
import threading
import time

# The files of each version: limit, kernel's peak, current usage, stat.
FILES = {
    "v2": {"limit": "memory.max", "peak": "memory.peak", "current": "memory.current", "stat": "memory.stat"},
    "v1": {"limit": "memory.limit_in_bytes", "peak": "memory.max_usage_in_bytes",
           "current": "memory.usage_in_bytes", "stat": "memory.stat"},
}
# memory.stat's keys for the sampled figures, per version.
STAT_KEYS = {
    "v2": {"anon": "anon", "file": "file", "dirty": "file_dirty", "writeback": "file_writeback",
           "kernel": "kernel"},
    "v1": {"anon": "rss", "file": "cache", "dirty": "dirty", "writeback": "writeback"},
}


class Unusable(Exception):
    """Why a place cannot hold a memory group."""


def read(path):
    with open(path, encoding="ascii") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def cgroup_mounts(mounts_text):
    """(type, mount point, options) of the cgroup lines of /proc/self/mounts."""
    out = []
    for line in mounts_text.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] in ("cgroup", "cgroup2"):
            out.append((f[2], f[1], f[3].split(",")))
    return out


def own_groups(self_cgroup_text):
    """This process's v1 memory group and v2 group, as paths inside their
    hierarchies (/proc/self/cgroup), None where it has none."""
    v1 = v2 = None
    for line in self_cgroup_text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif "memory" in parts[1].split(","):
            v1 = parts[2]
    return v1, v2


def candidates(mounts_text, self_cgroup_text):
    """The folders a memory group could be made in, best first, as
    (version, folder): a v2 mount's root (the root group may enable
    controllers for its children while it holds processes; a group below
    it may not), then this process's own v1 memory group (a child stays
    within the limits of its parents) and the v1 mount's root."""
    own_v1, _own_v2 = own_groups(self_cgroup_text)
    out = []
    for kind, point, opts in cgroup_mounts(mounts_text):
        if kind == "cgroup2":
            out.append(("v2", point))
        elif "memory" in opts:
            if own_v1 and own_v1 != "/":
                out.append(("v1", point.rstrip("/") + own_v1))
            out.append(("v1", point))
    return out


def enable_v2(folder):
    """The memory controller for FOLDER's children (v2), or Unusable."""
    try:
        ctl = read(os.path.join(folder, "cgroup.controllers")).split()
    except OSError as e:
        raise Unusable(f"{folder}: {e.strerror}") from e
    if "memory" not in ctl:
        raise Unusable(f"{folder}: no memory controller (cgroup.controllers: {' '.join(ctl) or 'none'})")
    sub = os.path.join(folder, "cgroup.subtree_control")
    if "memory" not in read(sub).split():
        try:
            write(sub, "+memory")
        except OSError as e:
            raise Unusable(f"{sub}: cannot enable memory ({e.strerror})") from e


class Group:
    """A memory group made in FOLDER with a LIMIT in bytes, removed by remove()."""

    def __init__(self, version, folder, name, limit, mkdir=os.mkdir):
        self.version, self.files = version, FILES[version]
        if version == "v2":
            enable_v2(folder)
        self.path = os.path.join(folder, name)
        try:
            mkdir(self.path)
        except OSError as e:
            raise Unusable(f"cannot create {self.path}: {e.strerror}") from e
        if not os.path.isfile(self.file("limit")):
            self.remove()
            raise Unusable(f"{self.path}: no {self.files['limit']} (no memory controller)")
        try:
            write(self.file("limit"), str(limit))
            self.limit = int(read(self.file("limit")).split()[0])
        except (OSError, ValueError) as e:
            self.remove()
            raise Unusable(f"{self.file('limit')}: {e}") from e

    def file(self, key):
        return os.path.join(self.path, self.files[key])

    def argv(self, args):
        """ARGS run inside the group: a shell writes its pid into the
        group, then becomes ARGS (their children stay in it)."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', os.path.join(self.path, "cgroup.procs")] + list(args)

    def stat(self):
        out = {}
        for line in read(self.file("stat")).splitlines():
            k, _, v = line.partition(" ")
            if v.strip().isdigit():
                out[k] = int(v)
        return out

    def sample(self):
        """The group's usage now: current, and anon, file (page cache),
        dirty, writeback (and kernel, v2) from memory.stat."""
        st = self.stat()
        d = {k: st.get(key, 0) for k, key in STAT_KEYS[self.version].items()}
        d["current"] = int(read(self.file("current")).split()[0])
        if self.version == "v1" and os.path.isfile(os.path.join(self.path, "memory.kmem.usage_in_bytes")):
            d["kernel"] = int(read(os.path.join(self.path, "memory.kmem.usage_in_bytes")).split()[0])
        return d

    def events(self):
        """(times the limit was reached, processes the OOM killer killed)."""
        if self.version == "v2":
            ev = dict(line.split() for line in read(os.path.join(self.path, "memory.events")).splitlines())
            return int(ev.get("max", 0)), int(ev.get("oom_kill", 0))
        oom = dict(line.split() for line in read(os.path.join(self.path, "memory.oom_control")).splitlines())
        return int(read(os.path.join(self.path, "memory.failcnt"))), int(oom.get("oom_kill", 0))

    def peak(self):
        """The kernel's peak usage (page cache included), None without the file."""
        try:
            return int(read(self.file("peak")).split()[0])
        except OSError:
            return None

    def remove(self):
        """The group removed once its processes are gone (busy: retried for
        up to 5 s); False when it stays."""
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return True
            except FileNotFoundError:
                return True
            except OSError as e:
                if e.errno != errno.EBUSY:
                    return False
                time.sleep(0.1)
        return False


class Sampler:
    """The largest of each figure of Group.sample(), polled every PERIOD
    seconds from a thread outside the group while a command runs."""

    def __init__(self, group, period=0.05):
        self.group, self.period, self.peaks = group, period, {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.done.is_set():
            try:
                s = self.group.sample()
            except OSError:
                break
            for k, v in s.items():
                self.peaks[k] = max(v, self.peaks.get(k, 0))
            self.done.wait(self.period)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


def find_place(probe_name, limit, mounts_text=None, self_cgroup_text=None, mkdir=os.mkdir):
    """(version, folder) where a memory group can be made (a probe group
    of PROBE_NAME made there with LIMIT and removed), or (None, why not)."""
    if mounts_text is None:
        mounts_text = read("/proc/self/mounts")
    if self_cgroup_text is None:
        self_cgroup_text = read("/proc/self/cgroup")
    why = []
    for version, folder in candidates(mounts_text, self_cgroup_text):
        try:
            Group(version, folder, probe_name, limit, mkdir=mkdir).remove()
            return (version, folder), None
        except Unusable as e:
            why.append(f"{version} {e}")
    if not why:
        return None, "no cgroup v2 mount and no cgroup v1 memory mount in /proc/self/mounts"
    return None, "; ".join(why)


def drop_caches():
    """Writes back and drops the page cache (root only): True when done."""
    os.sync()
    try:
        write("/proc/sys/vm/drop_caches", "3\n")
        return True
    except OSError:
        return False
