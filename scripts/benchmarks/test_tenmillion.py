#!/usr/bin/env python3
"""Tests of the run on 10^7 files' machinery (make bench-tenmillion,
docs/performance.md, *10^7 files*): why it is skipped (not root, a tool
missing, no loop device, not enough free space), the image and free
space it asks for, and the section's text, skipped or measured (a stage
over its memory model marked). Nothing is mounted.

    python3 scripts/benchmarks/test_tenmillion.py   (tests/rules/bench_cgroup.rs runs it)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks import render, tenmillion  # noqa: E402

GIB = 1 << 30
META = {"date": "2026-01-01", "cores": 2, "mem": "24 GiB", "cpu": "x", "commit": "abc"}
KNOBS = {"runs": 1, "jobs": 2, "bin_make": "./target/release"}


class Skip(unittest.TestCase):
    def test_each_reason(self):
        need = tenmillion.need_bytes(10 ** 7)
        self.assertIsNone(tenmillion.skip_reason(0, [], True, need, need))
        self.assertIn("not root", tenmillion.skip_reason(1000, [], True, need, need))
        self.assertIn("mkfs.ext4 not found", tenmillion.skip_reason(0, ["mkfs.ext4"], True, need, need))
        self.assertIn("no loop device", tenmillion.skip_reason(0, [], False, need, need))
        why = tenmillion.skip_reason(0, [], True, 10 * GIB, need)
        self.assertIn("not enough free space: 10 GiB free", why)

    def test_root_is_checked_first(self):
        self.assertIn("not root", tenmillion.skip_reason(1000, ["losetup"], False, 0, 1))

    def test_sizes(self):
        # An inode of 512 bytes a file (1 % more for the folders) and the data blocks.
        self.assertEqual(tenmillion.image_bytes(10 ** 7), 10100000 * 512 + 3 * GIB)
        self.assertGreater(tenmillion.need_bytes(10 ** 7), tenmillion.image_bytes(10 ** 7) + 10 ** 10)
        a = tenmillion.mkfs_args("x.img", 1000)
        self.assertEqual(a[a.index("-N") + 1], "1010")
        self.assertIn("inline_data", a)

    def test_folder_blocks_counts_each_inode_once(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "sub"))
            with open(os.path.join(d, "sub", "a"), "wb") as f:
                f.write(b"x" * 100000)
            os.link(os.path.join(d, "sub", "a"), os.path.join(d, "b"))
            one = os.stat(os.path.join(d, "b")).st_blocks * 512
            self.assertGreaterEqual(one, 100000)
            self.assertEqual(tenmillion.folder_blocks(d), one)

    def test_preflight_on_a_folder(self):
        why = tenmillion.preflight(os.path.dirname(os.path.abspath(__file__)), 10 ** 12)
        self.assertIsNotNone(why)  # not root, or no 5 PB free


def run(wall, rss_kib, args=(), stage="x"):
    return {"stage": stage, "args": list(args), "wall": wall, "user": wall * 0.8, "sys": wall * 0.1,
            "rss_kib": rss_kib, "status": 0, "signal": 0, "rchar": 1, "wchar": 2, "read_bytes": 3,
            "write_bytes": 4, "cold": True, "load": [1.0, 1.0, 1.0]}


class Section(unittest.TestCase):
    def test_skipped_says_why(self):
        d = {"files_asked": 10 ** 7, "skipped": "not root (...)"}
        text = render.tenmillion_section({"meta": META, "knobs": KNOBS, "sections": {"tenmillion": d}})
        self.assertTrue(text.startswith("## 10^7 files\n"))
        self.assertIn("skipped", text)
        self.assertIn("not root", text)

    def test_measured_marks_a_stage_over_its_model(self):
        stages = [run(100, 12 * 1024, stage="fsim-chunk"), run(1, 1000, ["--print-settings"], "fsim-report"),
                  run(50, 262144 + 4096, stage="fsim-sort"), run(60, 1024 * 1024, ["--format", "text"], "fsim-report"),
                  run(50, 262144, stage="fsim-reuse")]
        m = dict(run(300, 1024 * 1024), stages=stages, work_peak=13 * GIB, work_blocks_peak=3 * GIB, work_end=GIB,
                 cmd="make -s report BIN=<wrapper> REPO=t WORK=<dir> QUIET=-q")
        d = {"files": 10 ** 7, "bytes": 2 * GIB, "size": 200, "dirs": 10000, "inode": 512, "mkfs": "mkfs.ext4 ...",
             "image_bytes": 8 * GIB, "image_used": 5 * GIB, "image_disk": 6 * GIB, "memory": None, "jobs": 2,
             "gen": dict(run(600, 3000), opts="--bulk 10000000"), "make": m,
             "md5": dict(run(100, 3000), cmd="find t -type f ... md5sum"), "skipped": None}
        text = render.tenmillion_section({"meta": META, "knobs": KNOBS, "sections": {"tenmillion": d}})
        self.assertIn("**3.00× md5sum**", text)
        self.assertIn("The work folder held 3072 MiB at most", text)
        self.assertIn("grew by 13312 MiB at most", text)
        self.assertIn("| fsim-sort | 50.0 s | 0.50 |", text)
        rows = [x for x in text.split("\n") if x.startswith("| fsim-")]
        self.assertEqual([r.split(" | ")[0] for r in rows], ["| fsim-chunk", "| fsim-sort", "| fsim-report text"])
        self.assertIn("| yes |", rows[1])  # 260 MiB: the flag's 256 + 3 MiB, within the fixed 32 MiB
        # 1 GiB against its --memory 256M, which holds its model: over by 768 MiB.
        self.assertIn("**no: +768 MiB**", rows[2])

    def test_a_run_stopped_in_a_stage_says_where(self):
        killed = dict(run(1500, 2 << 20, stage="fsim-analyze"), status=143, signal=15)
        m = dict(run(1800, 1024), stages=[run(250, 12 * 1024, stage="fsim-chunk"), killed], work_peak=GIB,
                 work_end=None, cmd="make", status=2)
        d = {"files": 10 ** 7, "bytes": 2 * GIB, "size": 200, "dirs": 10000, "inode": 512, "mkfs": "mkfs.ext4 ...",
             "image_bytes": 8 * GIB, "image_used": 5 * GIB, "image_disk": 6 * GIB, "memory": None, "jobs": 2,
             "gen": dict(run(600, 3000), opts="--bulk"), "make": m, "md5": dict(run(100, 3000), cmd="md5sum"),
             "skipped": None}
        text = render.tenmillion_section({"meta": META, "knobs": KNOBS, "sections": {"tenmillion": d}})
        self.assertIn("**make report did not finish**: fsim-analyze ended with status 143 (signal 15)", text)
        self.assertIn("| fsim-analyze (killed by signal 15) |", text)
        self.assertIn("**no: +768 MiB**", text)  # 2 GiB against 1.25 GiB

    def test_memory_and_capacity_set_are_the_flags(self):
        stages = [run(2000, 1400 * 1024, stage="fsim-analyze"),
                  run(60, 1900 * 1024, ["--format", "text"], "fsim-report")]
        m = dict(run(3000, 1024), stages=stages, work_peak=GIB, work_end=GIB,
                 cmd="make -s report ... MEMORY=2G CAPACITY=2G")
        d = {"files": 10 ** 7, "bytes": 2 * GIB, "size": 200, "dirs": 10000, "inode": 512, "mkfs": "mkfs.ext4 ...",
             "image_bytes": 8 * GIB, "image_used": 5 * GIB, "image_disk": 6 * GIB, "memory": "2G",
             "capacity": "2G", "jobs": 2, "gen": dict(run(600, 3000), opts="--bulk"), "make": m,
             "md5": dict(run(100, 3000), cmd="md5sum"), "skipped": None}
        text = render.tenmillion_section({"meta": META, "knobs": KNOBS, "sections": {"tenmillion": d}})
        self.assertIn("# MEMORY 2G; CAPACITY 2G", text)
        rows = [x for x in text.split("\n") if x.startswith("| fsim-")]
        self.assertIn("| `--capacity 2048M` |", rows[0])
        self.assertIn("| yes |", rows[0])  # 1400 MiB against 1.25 x 2 GiB
        self.assertIn("| `--memory 2048M` |", rows[1])
        self.assertIn("| yes |", rows[1])  # 1900 MiB within 2 GiB

    def test_make_args_pass_memory_and_capacity(self):
        class Cfg:
            tm_memory, tm_capacity = "2G", "3G"
        a = tenmillion.make_args("W", "T", "D", Cfg)
        self.assertEqual(a[-2:], ["MEMORY=2G", "CAPACITY=3G"])
        Cfg.tm_memory = Cfg.tm_capacity = ""
        self.assertFalse([x for x in tenmillion.make_args("W", "T", "D", Cfg) if "=" in x and x[0] in "MC"])


if __name__ == "__main__":
    unittest.main()
