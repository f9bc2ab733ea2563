#!/usr/bin/env python3
"""Tests of the re-run and scratch-space benchmark's machinery (make
bench-changes, docs/performance.md, *Re-runs and scratch space*): which
files the 1 % is, what an edit writes (a gzip file edited as its text),
that a touch keeps the bytes, the section's text (a share over 15 %, a
peak over 1× and a re-run whose reports differ marked; a missing tree
named), and the corpus stamp the bench asks for being the one
scripts/quality/fetch.sh writes.

    python3 scripts/benchmarks/test_changes.py   (tests/rules/bench_cgroup.rs runs it)
"""
import gzip
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks import changes, config, render  # noqa: E402

META = {"date": "2026-01-01", "cores": 2, "mem": "24 GiB", "cpu": "x", "commit": "abc"}
KNOBS = {"runs": 1, "jobs": 2, "bin_make": "./target/release"}


def read(p):
    with open(p, "rb") as f:
        return f.read()


def tree(d, n):
    """N files f000..f(N-1) under D, two folders deep, each three lines."""
    for i in range(n):
        p = os.path.join(d, f"d{i % 3}", f"f{i:03d}")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(b"one %d\ntwo\nthree\n" % i)


class Change(unittest.TestCase):
    def test_the_one_percent_is_every_hundredth_from_the_eighth_in_path_order(self):
        with tempfile.TemporaryDirectory() as d:
            tree(d, 250)
            os.symlink("d0/f000", os.path.join(d, "link"))  # not a regular file: never chosen, not counted
            paths, total = changes.changed_paths(d)
            self.assertEqual(total, 250)
            every = sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs
                           if f != "link")
            self.assertEqual([os.path.relpath(p, d) for p in paths], [every[7], every[107], every[207]])

    def test_an_edit_inserts_a_line_after_the_middle_one(self):
        self.assertEqual(changes.insert_line(b"a\nbb\ncc\n", 5), b"a\nbb\nedited line 5\ncc\n")
        self.assertEqual(changes.insert_line(b"no end", 1), b"no endedited line 1\n")
        self.assertEqual(changes.insert_line(b"", 0), b"edited line 0\n")

    def test_a_gzip_file_is_edited_as_its_text_and_stays_gzip(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "changelog.gz")
            with open(p, "wb") as f:
                f.write(gzip.compress(b"l1\nl2\nl3\nl4\n"))
            changes.edit_file(p, 3)
            self.assertEqual(gzip.decompress(read(p)), b"l1\nl2\nl3\nedited line 3\nl4\n")
            # Broken gzip: edited as bytes, never an exception.
            q = os.path.join(d, "broken.gz")
            with open(q, "wb") as f:
                f.write(b"\x1f\x8bnot gzip\nat all\n")
            changes.edit_file(q, 1)
            self.assertIn(b"edited line 1\n", read(q))

    def test_a_touch_keeps_the_bytes_and_moves_the_time(self):
        with tempfile.TemporaryDirectory() as d:
            tree(d, 120)
            paths, _ = changes.changed_paths(d)
            before = {p: (read(p), os.stat(p).st_mtime) for p in paths}
            self.assertEqual(changes.change(d, "touch"), (2, 120))
            for p, (data, mtime) in before.items():
                self.assertEqual(read(p), data)
                self.assertGreater(os.stat(p).st_mtime, mtime)
            self.assertEqual(changes.change(d, "edit"), (2, 120))
            self.assertIn(b"edited line 1\n", read(paths[1]))

    def test_removed_and_added_files_are_other_files_than_the_edited(self):
        with tempfile.TemporaryDirectory() as d:
            tree(d, 250)
            edited, _ = changes.changed_paths(d)
            gone, _ = changes.changed_paths(d, changes.FIRST["remove"])
            self.assertEqual(changes.change(d, "remove"), (2, 250))
            self.assertTrue(all(not os.path.exists(p) for p in gone))
            self.assertTrue(all(os.path.exists(p) for p in edited))
            olds, _ = changes.changed_paths(d, changes.FIRST["add"])
            before = {p: read(p) for p in olds}
            self.assertEqual(changes.change(d, "add"), (3, 248))
            for n, (p, data) in enumerate(before.items()):
                self.assertEqual(read(p), data)
                self.assertEqual(read(changes.added_path(p)), changes.insert_line(data, n))
            self.assertEqual(sum(len(fs) for _, _, fs in os.walk(d)), 251)

    def test_a_new_version_keeps_the_suffix_its_type_is_found_by(self):
        self.assertEqual(changes.added_path("/r/notes.txt"), "/r/notes-v2.txt")
        self.assertEqual(changes.added_path("/r/ls.1.gz"), "/r/ls.1-v2.gz")
        self.assertEqual(changes.added_path("/r/README"), "/r/README-v2")
        self.assertEqual(changes.added_path("/r/.profile"), "/r/.profile-v2")


def run(wall, cpu, peak, repo=100e6, files=(("chunks.tsv", 30e6),)):
    return {"wall_seconds": wall, "cpu_seconds": cpu, "repository_bytes": repo, "peak_disk_bytes": peak,
            "peak_ratio": peak / repo, "peak_files": [list(f) for f in files], "final_disk_bytes": peak,
            "final_ratio": peak / repo}


class Section(unittest.TestCase):
    def section(self, trees):
        data = {"meta": META, "knobs": KNOBS, "sections": {"changes": {"trees": trees,
                                                                      "compared": changes.COMPARED}}}
        return render.changes_section(data)

    def test_shares_peaks_and_differences_are_marked(self):
        both = (("report.json", 50e6), ("report.json", 50e6), ("chunks.tsv", 20e6))
        t = {"label": "the releases", "files": 35000, "edited": 350, "touched": 350,
             "first": run(20, 30, 50e6), "edit": run(8, 10, 120e6, files=both), "scratch": run(20, 40, 50e6),
             "touch": run(2, 3, 60e6), "scratch2": run(20, 40, 50e6), "edit_differs": [],
             "touch_differs": ["report.json"], "edit_drop": run(9, 12, 90e6), "edit_drop_differs": [],
             "touch_drop": run(4, 5, 110e6), "touch_drop_differs": [],
             "removed": 349, "remove_drop": run(3, 4, 70e6), "scratch3": run(20, 40, 50e6),
             "remove_drop_differs": [], "added": 351, "add_drop": run(6, 8, 80e6), "scratch4": run(20, 40, 50e6),
             "add_drop_differs": ["verified.tsv"]}
        text = self.section([t, {"label": "`/usr/share/doc`", "skipped": "not on this machine"}])
        self.assertTrue(text.startswith("## Re-runs and scratch space\n"))
        rows = {r.split(" | ")[1]: r for r in text.split("\n") if r.startswith("| the releases")}
        self.assertIn("| **40 %** | 25 % | NO | yes |", rows["edited, 350 files"])
        self.assertIn("| **10 %** | 8 % | yes | NO: report.json |", rows["touched, 350 files"])
        self.assertIn("| 50.0 MB | **0.50×** |", rows["from scratch"])
        edit = rows["edited, `PREVIOUS=`; both folders"]
        self.assertIn("| **1.20×** |", edit)
        self.assertIn("report.json 50.0 (×2), chunks.tsv 20.0 MB | NO |", edit)
        drop = rows["edited, `DROP_PREVIOUS=1` (as fsim re-runs), 350 files"]
        self.assertIn("| **45 %** | 30 % | NO | yes |", drop)
        self.assertIn("| 90.0 MB | **0.90×** |", rows["edited, `PREVIOUS=` `DROP_PREVIOUS=1`; both folders"])
        touch_drop = rows["touched, `DROP_PREVIOUS=1` (as fsim re-runs), 350 files"]
        self.assertIn("| **20 %** | 12 % | NO | yes |", touch_drop)
        self.assertIn("| 110.0 MB | **1.10×** |", rows["touched, `PREVIOUS=` `DROP_PREVIOUS=1`; both folders"])
        removed = rows["removed, `DROP_PREVIOUS=1` (as fsim re-runs), 349 files"]
        self.assertIn("| **15 %** | 10 % | yes | yes |", removed)
        added = rows["added (a new version beside), `DROP_PREVIOUS=1` (as fsim re-runs), 351 files"]
        self.assertIn("| **30 %** | 20 % | NO | NO: verified.tsv |", added)
        self.assertIn("| 80.0 MB | **0.80×** |", rows["added, `PREVIOUS=` `DROP_PREVIOUS=1`; both folders"])
        self.assertIn("Not measured: `/usr/share/doc`, not on this machine.", text)
        self.assertIn("Re-runs within 15 % of a run from scratch: the releases touched (10 %); the releases "
                      "removed, `DROP_PREVIOUS=1` (as fsim re-runs) (15 %). Over it: "
                      "the releases edited (40 %); the releases edited, `DROP_PREVIOUS=1` (as fsim re-runs) (45 %); "
                      "the releases touched, `DROP_PREVIOUS=1` (as fsim re-runs) (20 %); the releases added (a new "
                      "version beside), `DROP_PREVIOUS=1` (as fsim re-runs) (30 %).",
                      text)
        self.assertIn("Over it: the releases edited (1.20×); the releases touched, `DROP_PREVIOUS=1` (as fsim "
                      "re-runs) (1.10×).", text)

    def test_which_trees_kept_their_line_sets_is_said(self):
        def tree_of(label, lines):
            return {"label": label, "files": 10, "edited": 1, "touched": 1, "first": run(20, 30, 50e6),
                    "edit": run(8, 10, 60e6), "scratch": run(20, 40, 50e6), "touch": run(2, 3, 60e6),
                    "scratch2": run(20, 40, 50e6), "edit_differs": [], "touch_differs": [], "lines_bytes": lines}
        text = self.section([tree_of("the releases", 12e6), tree_of("`/usr/share/doc`", None)])
        self.assertIn(": the releases (12.0 MB, 0.12× the tree). Not kept, every file read again by the line "
                      "source: `/usr/share/doc`.", text)
        older = tree_of("the releases", 12e6)
        del older["lines_bytes"]
        self.assertNotIn("Line sets kept", self.section([older]))

    def test_the_files_linked_to_the_edited_ones_are_said(self):
        def tree_of(label, partners):
            t = {"label": label, "files": 10, "edited": 1, "touched": 1, "first": run(20, 30, 50e6),
                 "edit": run(8, 10, 60e6), "scratch": run(20, 40, 50e6), "touch": run(2, 3, 60e6),
                 "scratch2": run(20, 40, 50e6), "edit_differs": [], "touch_differs": []}
            if partners:
                t["partners"] = partners
            return t
        p = {"files": 35976, "links": 382952, "edited": 354, "partners": 3856}
        text = self.section([tree_of("the releases", p)])
        self.assertIn("the releases: 354 edited of 35,976 files, linked to 3,856 unchanged ones "
                      "(382,952 links kept): 11.7 %.", text)
        self.assertNotIn("reads or credits again", self.section([tree_of("the releases", None)]))

    def test_no_data_no_section(self):
        self.assertEqual(render.changes_section({"meta": META, "knobs": KNOBS, "sections": {}}), "")


class Partners(unittest.TestCase):
    def test_the_unchanged_files_linked_to_a_changed_one_are_counted(self):
        with tempfile.TemporaryDirectory() as work:
            def write(name, text):
                with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                    f.write(text)
            write("files.tsv", "#fsim files v4\n" + "".join(f"{i:010d}\tx\n" for i in range(10)) + "#end files\n")
            # Files 1 and 3 read again; 0 and 2 moved.
            write("changed.tsv", "#fsim changed v1\nF\t1\nF\t3\nM\t0\t0\t1\nH\tabc\n#end changed\n")
            # 0, 2 and 4 are linked to 1 or 3; 5-6 to neither; 1-3 both changed.
            write("verified.tsv", "#fsim pairs v1\n0\t1\tx\n1\t2\tx\n1\t3\tx\n3\t4\tx\n5\t6\tx\n"
                                  "#end pairs\n")
            self.assertEqual(changes.partners(work), {"files": 10, "links": 5, "edited": 2, "partners": 3})


class CorpusStamp(unittest.TestCase):
    def test_the_bench_asks_for_the_stamp_fetch_writes(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        fetch = os.path.join(root, "scripts", "quality", "fetch.sh")
        with open(fetch, encoding="utf-8") as f:
            written = re.search(r'stamp="\$QDIR/(\.corpus-v\d+-done-)', f.read()).group(1)
        self.assertEqual(config.corpus_stamp(fetch), written + "*")
        with tempfile.NamedTemporaryFile("w", suffix=".sh") as f:
            f.write("echo no stamp here\n")
            f.flush()
            with self.assertRaises(SystemExit):
                config.corpus_stamp(f.name)


if __name__ == "__main__":
    unittest.main()
