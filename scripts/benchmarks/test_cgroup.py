#!/usr/bin/env python3
"""Tests of the out-of-core run's machinery: where a memory group can be
made (cgroup v2, v1, neither: the reason given), the figures read from a
group's files, one process measured (proc.py: CPU, bytes written, exit
status, killing signal), the budget, and the section's text when the
group runs were skipped. On fake cgroup folders; then, where this process
can make a real memory group (root), a group of 32 MiB that a 64 MiB
write passes through (page cache reclaimed) and a 64 MiB allocation does
not (the OOM killer, counted).

    python3 scripts/benchmarks/test_cgroup.py   (tests/rules/bench_cgroup.rs runs it)
"""
import os
import resource
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks import cgroup, outofcore, render  # noqa: E402
from benchmarks.proc import run_measured  # noqa: E402

V1_FILES = {"memory.limit_in_bytes": "9223372036854771712\n", "memory.max_usage_in_bytes": "335544320\n",
            "memory.usage_in_bytes": "1000\n", "memory.failcnt": "705\n", "cgroup.procs": "",
            "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
            "memory.stat": "cache 65028096\nrss 4096\ndirty 0\nwriteback 8192\n"}
V2_FILES = {"memory.max": "max\n", "memory.peak": "335544320\n", "memory.current": "2000\n", "cgroup.procs": "",
            "memory.events": "low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\n",
            "memory.stat": "anon 4096\nfile 65028096\nfile_dirty 0\nfile_writeback 8192\nkernel 512\n"}


def fake_mkdir(files):
    """A mkdir that, as the kernel does, fills a new group with its FILES."""
    def mkdir(path):
        os.mkdir(path)
        for n, text in files.items():
            with open(os.path.join(path, n), "w", encoding="ascii") as f:
                f.write(text)
    return mkdir


class Places(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_candidates_v2_then_own_v1_group(self):
        mounts = ("cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n"
                  "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
                  "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\nproc /proc proc rw 0 0\n")
        own = "4:memory:/jobs/a1\n1:cpu:/\n0::/\n"
        self.assertEqual(cgroup.candidates(mounts, own), [
            ("v2", "/sys/fs/cgroup/unified"), ("v1", "/sys/fs/cgroup/memory/jobs/a1"),
            ("v1", "/sys/fs/cgroup/memory")])

    def test_v1_group_made_in_own_group(self):
        mnt = os.path.join(self.root, "memory")
        os.makedirs(os.path.join(mnt, "jobs", "a1"))
        mounts = f"cgroup {mnt} cgroup rw,memory 0 0\n"
        place, why = cgroup.find_place("probe", 1 << 28, mounts, "4:memory:/jobs/a1\n",
                                       mkdir=fake_mkdir(V1_FILES))
        self.assertIsNone(why)
        self.assertEqual(place, ("v1", os.path.join(mnt, "jobs", "a1")))
        g = cgroup.Group(*place, "g", 1 << 28, mkdir=fake_mkdir(V1_FILES))
        self.assertEqual(g.limit, 1 << 28)
        self.assertEqual(g.events(), (705, 1))
        self.assertEqual(g.peak(), 335544320)
        s = g.sample()
        self.assertEqual((s["anon"], s["file"], s["writeback"], s["current"]), (4096, 65028096, 8192, 1000))
        self.assertEqual(g.argv(["make", "report"])[-2:], ["make", "report"])

    def test_v2_enables_memory_for_children(self):
        mnt = os.path.join(self.root, "unified")
        os.makedirs(mnt)
        for n, text in (("cgroup.controllers", "cpu io memory pids\n"), ("cgroup.subtree_control", "\n")):
            with open(os.path.join(mnt, n), "w", encoding="ascii") as f:
                f.write(text)
        g = cgroup.Group("v2", mnt, "g", 1 << 28, mkdir=fake_mkdir(V2_FILES))
        self.assertEqual(cgroup.read(os.path.join(mnt, "cgroup.subtree_control")), "+memory")
        self.assertEqual((g.limit, g.events(), g.peak()), (1 << 28, (12, 0), 335544320))
        self.assertEqual(g.sample()["kernel"], 512)

    def test_v2_without_memory_controller_says_so(self):
        mnt = os.path.join(self.root, "unified")
        os.makedirs(mnt)
        with open(os.path.join(mnt, "cgroup.controllers"), "w", encoding="ascii") as f:
            f.write("cpu pids\n")
        place, why = cgroup.find_place("probe", 1 << 28, f"cgroup2 {mnt} cgroup2 rw 0 0\n", "0::/\n",
                                       mkdir=fake_mkdir(V2_FILES))
        self.assertIsNone(place)
        self.assertIn("no memory controller", why)

    def test_unwritable_place_is_skipped_with_its_reason(self):
        # A folder that cannot be made, even by root: its parent is a file.
        blocker = os.path.join(self.root, "file")
        open(blocker, "w").close()
        place, why = cgroup.find_place("probe", 1 << 28, f"cgroup {blocker}/memory cgroup rw,memory 0 0\n",
                                       "4:memory:/\n")
        self.assertIsNone(place)
        self.assertIn("cannot create", why)

    def test_no_memory_hierarchy_at_all(self):
        place, why = cgroup.find_place("probe", 1, "proc /proc proc rw 0 0\n", "1:cpu:/\n")
        self.assertIsNone(place)
        self.assertIn("no cgroup v2 mount", why)

    def test_a_group_without_limit_file_is_removed(self):
        mnt = os.path.join(self.root, "memory")
        os.makedirs(mnt)
        place, why = cgroup.find_place("probe", 1, f"cgroup {mnt} cgroup rw,memory 0 0\n", "4:memory:/\n")
        self.assertIsNone(place)
        self.assertIn("no memory.limit_in_bytes", why)
        self.assertEqual(os.listdir(mnt), [])


class Measured(unittest.TestCase):
    def test_bytes_written_status_and_signal(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            m = run_measured(["sh", "-c", f"head -c 3000000 /dev/zero > {out}; exit 3"])
        self.assertEqual((m["status"], m["signal"]), (3, 0))
        self.assertGreaterEqual(m["wchar"], 3000000)
        # The shell's peak RSS, not this Python's (which a process spawned
        # from Python inherits in its rusage).
        self.assertLess(m["rss_kib"], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 2)
        k = run_measured(["sh", "-c", "kill -9 $$"])
        self.assertEqual((k["status"], k["signal"]), (128 + 9, 9))

    def test_sizes_and_budget(self):
        self.assertEqual(outofcore.parse_size("256M"), 256 << 20)
        self.assertEqual(outofcore.parse_size("1GiB"), 1 << 30)
        self.assertEqual(outofcore.parse_size("4096"), 4096)

        class Cfg:
            ooc_memory, ooc_margin = "256M", "64M"
        b = outofcore.budget(Cfg())
        # fsim-analyze's 1.25 x CAPACITY within MEMORY.
        self.assertEqual((b["limit"], b["capacity"]), (320 << 20, (256 << 20) * 4 // 5))


class Skipped(unittest.TestCase):
    def test_the_section_says_why_the_group_runs_were_skipped(self):
        free = {"wall": 10.0, "user": 8.0, "sys": 2.0, "rss_kib": 1000, "status": 0, "signal": 0, "cold": False,
                "load": [1.0, 1.0, 1.0], "rchar": 1, "wchar": 2, "read_bytes": 3, "write_bytes": 4, "stages": []}
        md5 = dict(free, cmd="find t -type f -print0 | xargs -0 -P2 -n 1000 md5sum > /dev/null")
        d = {"budget": {"memory": 256 << 20, "margin": 64 << 20, "limit": 320 << 20, "capacity": 214748364},
             "tree": "bench-work/outofcore-300000", "files": 300000, "bytes": 3 << 30, "jobs": 2,
             "gen": "--bulk 300000 --bulk-size 10000 --bulk-dirs 300", "place": None,
             "skipped": "v1 cannot create /sys/fs/cgroup/memory/x: Permission denied", "md5_free": md5, "free": free}
        data = {"meta": {"date": "2026-01-01", "cores": 2, "mem": "24 GiB", "cpu": "x", "commit": "abc"},
                "knobs": {"runs": 1, "jobs": 2, "bin_make": "./target/release"}, "sections": {"outofcore": d}}
        text = render.outofcore_section(data)
        self.assertTrue(text.startswith("## Out of core\n"))
        self.assertIn("skipped", text)
        self.assertIn("Permission denied", text)


def live_place():
    try:
        return cgroup.find_place(f"fsim-test-probe-{os.getpid()}", 32 << 20)
    except OSError as e:
        return None, str(e)


class Live(unittest.TestCase):
    """A real group of 32 MiB, where this process can make one."""

    def setUp(self):
        self.place, why = live_place()
        if not self.place:
            self.skipTest(f"no memory group here: {why}")

    def run_in_group(self, args):
        g = cgroup.Group(*self.place, f"fsim-test-{os.getpid()}", 32 << 20)
        try:
            with open(os.devnull, "wb") as null:
                m = run_measured(g.argv(args), stdout=null, stderr=null)
            return m, g.events(), g.peak()
        finally:
            g.remove()

    def test_page_cache_is_reclaimed_within_the_limit(self):
        # In the checkout, not /tmp: on a tmpfs the file's pages could not
        # be reclaimed (no swap) and the group would run out.
        with tempfile.TemporaryDirectory(dir=".") as d:
            f = os.path.join(d, "f")
            m, (_hits, kills), peak = self.run_in_group(["sh", "-c", f"head -c 67108864 /dev/zero > {f} && cat {f}"])
        self.assertEqual((m["status"], kills), (0, 0))
        self.assertLessEqual(peak, 32 << 20)

    def test_memory_over_the_limit_is_killed_and_counted(self):
        m, (_hits, kills), _ = self.run_in_group([sys.executable, "-c", "b = bytearray(64 << 20); print(len(b))"])
        self.assertEqual(m["signal"], 9)
        self.assertGreaterEqual(kills, 1)


if __name__ == "__main__":
    unittest.main()
