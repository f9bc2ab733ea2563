"""The run's settings, from the environment (the knobs of `make bench`),
and the tools each section needs, checked before anything is measured:
the benchmarks install nothing; a missing tool stops the run with one
line naming it and its Debian package."""

import datetime
import glob
import os
import re
import shutil
import subprocess
import sys

SECTIONS = ("hard", "documents", "folders", "source", "outofcore", "tenmillion", "changes")


def env_int(name, default):
    v = os.environ.get(name, "")
    if not v:
        return default
    try:
        return int(v)
    except ValueError:
        sys.exit(f"bench: {name}={v}: not a number")


class Config:
    """Every knob, with the defaults of the former bash script."""

    def __init__(self):
        e = os.environ.get
        self.files = env_int("FILES", 100000)       # files in the tree (~10 KB each, ~300 folders)
        self.size = env_int("SIZE", 10000)          # average file size
        self.big_mb = env_int("BIG_MB", 1024)       # size of the single large file (MiB)
        self.runs = env_int("RUNS", 3)
        self.bench = e("BENCH") or "bench-work"     # generated data (not committed)
        self.out = e("OUT") or "docs/performance.md"
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        self.hard_out = e("HARD_OUT") or f"docs/measurements/{today}-hard-inputs.md"
        self.only = e("BENCH_ONLY") or ""
        if self.only and self.only not in SECTIONS:
            sys.exit(f"bench: BENCH_ONLY={self.only}: the sections that run alone: {', '.join(SECTIONS)}")
        self.qdir = e("QDIR") or "quality-work"
        self.releases_tree = e("RELEASES_TREE") or ""
        # The re-run and scratch section's third tree (its other two: the
        # releases and the overlap tree).
        self.share_doc = e("SHARE_DOC") or "/usr/share/doc"
        self.cat_locales = env_int("CAT_LOCALES", 60)
        self.cat_releases = env_int("CAT_RELEASES", 6)
        self.slice_files = env_int("SLICE_FILES", 20000)
        self.folders_files = env_int("FOLDERS_FILES", 100000)
        self.folders_releases = env_int("FOLDERS_RELEASES", 21)
        self.pfiles = env_int("PFILES", 15000000)
        self.pgroups = env_int("PGROUPS", 30000000)
        self.qfiles = env_int("QFILES", 1000000)
        self.vdocs = env_int("VDOCS", 10000)
        self.scale_files = env_int("SCALE_FILES", self.files // 2)
        self.scale_avg = env_int("SCALE_AVG", 100)
        self.ovl_files = env_int("OVL_FILES", self.files)
        self.report_links = env_int("REPORT_LINKS", 10000000)
        # The out-of-core run: make report's MEMORY, the group's limit
        # MEMORY + OOC_MARGIN, and the tree (OOC_FILES files of ~SIZE bytes,
        # at least 8x the limit: 300,000 x 10 KB is ~3.0 GB, 9x 320 MiB).
        self.ooc_memory = e("OOC_MEMORY") or "256M"
        self.ooc_margin = e("OOC_MARGIN") or "64M"
        self.ooc_files = env_int("OOC_FILES", 300000)
        # The run on 10^7 files: TM_FILES bulk documents of ~TM_SIZE bytes
        # in TM_DIRS folders, in an ext4 image that holds them in its
        # inodes; TM_MEMORY: make's MEMORY, TM_CAPACITY: make's CAPACITY
        # (empty: the stages' defaults).
        self.tm_files = env_int("TM_FILES", 10000000)
        self.tm_size = env_int("TM_SIZE", 200)
        self.tm_dirs = env_int("TM_DIRS", 10000)
        self.tm_memory = e("TM_MEMORY") or ""
        self.tm_capacity = e("TM_CAPACITY") or ""
        self.jobs = len(os.sched_getaffinity(0))  # nproc
        self.bin = os.path.join(e("CARGO_TARGET_DIR") or "target", "release")
        # The binaries' folder as make's BIN: a path make does not take for
        # its own build folder (BIN=target/release would run cargo build
        # inside the timed runs).
        self.bin_make = self.bin if self.bin.startswith("/") else "./" + self.bin

    def knobs(self):
        """The settings, as recorded in the data."""
        return {k: v for k, v in vars(self).items()}


# Tool, Debian package, sections that need it ("" = the sections of a
# full run only, "*" = every run).
TOOLS = [
    ("/usr/bin/time", "time", "*"),
    ("make", "make", "*"),
    ("cargo", "cargo", "*"),
    ("md5sum", "coreutils", "*"),
    ("jdupes", "jdupes", ""),
    ("ssdeep", "ssdeep", ""),
    ("zstd", "zstd", "*"),  # the record files of make report (COMPRESS=1)
    ("rmlint", "rmlint", "folders"),
    ("pdftotext", "poppler-utils", "documents source"),
]


def needs(only, sections):
    return sections == "*" or (not only) or only in sections.split()


def check_tools(cfg):
    """Stops with one line when a tool this run needs is missing."""
    for tool, package, sections in TOOLS:
        if not needs(cfg.only, sections):
            continue
        found = os.access(tool, os.X_OK) if tool.startswith("/") else shutil.which(tool)
        if not found:
            sys.exit(f"bench: {tool} is missing: install the Debian package {package} "
                     f"(apt-get install {package}); bench installs nothing")
    if needs(cfg.only, "documents source"):
        check_quality(cfg)


def corpus_stamp(fetch="scripts/quality/fetch.sh"):
    """The glob of the stamp FETCH leaves beside a whole corpus
    (".corpus-v4-done-*"): read from the script, so a new corpus version
    there is the one asked for here."""
    with open(fetch, encoding="utf-8") as f:
        m = re.search(r"/(\.corpus-v\d+-done-)", f.read())
    if not m:
        sys.exit(f"bench: {fetch} names no .corpus-vN-done- stamp")
    return m.group(1) + "*"


def check_quality(cfg):
    """The corpus and venv of make quality (QDIR), which the documents and
    source sections (and the datasketch row) read: fetched beforehand, not
    while measuring."""
    q = cfg.qdir
    if not glob.glob(os.path.join(q, corpus_stamp())) or not os.path.isdir(os.path.join(q, "corpus")):
        sys.exit(f"bench: QDIR={q} has no corpus of make quality: run `make quality-venv QDIR={q}` first "
                 "(it downloads the releases; bench fetches nothing)")
    py = os.path.join(q, "venv", "bin", "python")
    mods = "import datasketch, docx, pptx, openpyxl, odf, reportlab"
    if not os.access(py, os.X_OK) or subprocess.run([py, "-c", mods], capture_output=True).returncode:
        sys.exit(f"bench: {py} lacks datasketch or the document writers: run `make quality-venv QDIR={q}` first")
