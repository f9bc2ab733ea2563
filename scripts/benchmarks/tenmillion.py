"""The run on 10^7 files: TM_FILES small files (fsim-gen --bulk, ~TM_SIZE
bytes each) written to an ext4 image on a loop device whose inodes hold
the files' bytes (inline_data), the whole default `make report` on it
from a cold page cache with every stage measured (wall, CPU, peak RSS
against its memory flag, bytes read and written: proc.py), and `md5sum`
on JOBS processes on the same tree from a cold cache as the reference.
The work folder is on BENCH's file system, not in the image. Setup
(image, mount), the runs and the teardown (unmount, image and work
folder removed) are this module's; without root, a loop device, the
tools or the free space, the section says which and measures nothing."""

import os
import shutil
import subprocess
import threading

from . import outofcore
from .measure import Failed, log
from .proc import run_measured

# Inodes of 512 bytes hold up to ~380 bytes of a file inline (60 in the
# block map, the rest in the inode's extended attribute space): fsim-gen's
# bulk documents of --bulk-size 200 are 93-437 bytes, >99 % of them inline.
INODE = 512
# Blocks beyond the inode tables: the folders (TM_DIRS of ~1,000 names),
# the files over the inline limit, the journal.
DATA_SLACK = 3 << 30
# The work folder of the default run, bytes a file, with a margin: at
# 10^7 files the disk's use grew by up to 10.1 GB before fsim-analyze
# was stopped (docs/measurements/2026-11-29-tenmillion.md).
WORK_PER_FILE = 1400
TOOLS = ("losetup", "mkfs.ext4", "mount", "umount", "md5sum", "xargs", "find")


def image_bytes(files):
    """The image's size: an inode a file (and 1 % for the folders) plus the data blocks."""
    return files * 101 // 100 * INODE + DATA_SLACK


def need_bytes(files):
    """Free bytes the run needs on BENCH's file system: the image (written
    in full by the inodes) and the work folder."""
    return image_bytes(files) + files * WORK_PER_FILE


def skip_reason(euid, missing, loop_control, free, need):
    """Why the run cannot be made here, or None: EUID (root needed for the
    mount and the cold cache), MISSING (tools not found), LOOP_CONTROL
    (/dev/loop-control exists), FREE and NEED (bytes on BENCH's file system)."""
    if euid != 0:
        return "not root (the image is mounted on a loop device and the page cache dropped: `sudo make bench-tenmillion`)"
    if missing:
        return f"{', '.join(missing)} not found (Debian packages mount, e2fsprogs, coreutils, findutils)"
    if not loop_control:
        return "no loop device (/dev/loop-control is missing: a container without loop devices)"
    if free < need:
        return (f"not enough free space: {free >> 30} GiB free where the image and the work folder need "
                f"{need >> 30} GiB (lower TM_FILES or point BENCH elsewhere)")
    return None


def preflight(where, files):
    """skip_reason for this process and the file system of WHERE."""
    os.makedirs(where, exist_ok=True)
    st = os.statvfs(where)
    missing = [t for t in TOOLS if not shutil.which(t)]
    return skip_reason(os.geteuid(), missing, os.path.exists("/dev/loop-control"),
                       st.f_bavail * st.f_frsize, need_bytes(files))


def mkfs_args(img, files):
    return ["mkfs.ext4", "-q", "-F", "-b", "4096", "-O", "inline_data", "-I", str(INODE),
            "-N", str(files * 101 // 100), "-E", "lazy_itable_init=1,nodiscard", img]


def mount_image(img, mnt, files):
    """A new sparse image IMG, formatted and mounted on MNT (noatime: the
    reads write no inode)."""
    with open(img, "wb") as f:
        f.truncate(image_bytes(files))
    subprocess.run(mkfs_args(img, files), check=True)
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(["mount", "-o", "loop,noatime,noinit_itable", img, mnt], check=True)


def teardown(mnt, img):
    """Unmounts MNT (its loop device freed with it) and removes IMG."""
    if os.path.ismount(mnt):
        subprocess.run(["umount", mnt], check=False)
    if os.path.exists(img) and not os.path.ismount(mnt):
        os.remove(img)
    if os.path.isdir(mnt) and not os.path.ismount(mnt) and not os.listdir(mnt):
        os.rmdir(mnt)


def used(path):
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def folder_blocks(path):
    """Disk bytes (st_blocks) of the regular files under PATH, each inode
    once; files that vanish while it walks are skipped."""
    total, seen = 0, set()
    for d, _, names in os.walk(path):
        for n in names:
            try:
                st = os.lstat(os.path.join(d, n))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


class DiskPeak:
    """While the block runs (sampled every second): the largest growth of
    the used bytes of PATH's file system (other writers on it included)
    and the largest disk bytes of the folder WORK itself (its files' blocks:
    what the run holds, whatever else writes to the disk)."""

    def __init__(self, path, work):
        self.path, self.work, self.base = path, work, used(path)
        self.peak = self.work_peak = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def sample(self):
        self.peak = max(self.peak, used(self.path) - self.base)
        self.work_peak = max(self.work_peak, folder_blocks(self.work))

    def loop(self):
        while not self.stop.wait(1.0):
            self.sample()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.sample()


def du(path):
    r = subprocess.run(["du", "-sb", path], stdout=subprocess.PIPE, text=True, check=False)
    return int(r.stdout.split()[0]) if r.returncode == 0 and r.stdout else None


def generate(bench, cfg, tree):
    """fsim-gen into the image, timed."""
    opts = ["--bulk", str(cfg.tm_files), "--bulk-size", str(cfg.tm_size), "--bulk-dirs", str(cfg.tm_dirs)]
    with open(os.devnull, "wb") as null:
        d = run_measured([os.path.join(bench.b, "fsim-gen")] + opts + [tree], stdout=null, stderr=null)
    if d["status"] != 0:
        raise Failed(f"fsim-gen {' '.join(opts)} {tree} failed (exit {d['status']})")
    d["opts"] = " ".join(opts)
    log(f"fsim-gen: {d['wall']:.0f}s")
    return d


def tree_size(tree):
    """Files and bytes of TREE (find's -type f, one walk)."""
    r = subprocess.run(["bash", "-c", f"find {tree} -type f -printf '%s\\n' | awk '{{n++; s+=$1}} END {{printf \"%.0f %.0f\\n\", n, s}}'"],
                       stdout=subprocess.PIPE, text=True, check=True)
    n, s = r.stdout.split()
    return int(n), int(s)


def make_args(wrap, tree, work, cfg):
    args = ["make", "-s", "report", f"BIN={wrap}", f"REPO={tree}", f"WORK={work}", "QUIET=-q"]
    args += [f"MEMORY={cfg.tm_memory}"] if cfg.tm_memory else []
    return args + ([f"CAPACITY={cfg.tm_capacity}"] if cfg.tm_capacity else [])


def runs(bench, cfg, tree, root):
    """make report, then md5sum, each from a cold page cache."""
    wrap = outofcore.make_wrap(bench)
    work, slog = os.path.join(root, "work"), os.path.join(root, "stages.log")
    shutil.rmtree(work, ignore_errors=True)
    if os.path.exists(slog):
        os.remove(slog)
    err = os.path.join(root, "make.err")
    env = dict(os.environ, STAGE_LOG=slog)
    with DiskPeak(root, work) as disk:
        m = outofcore.failed_text(outofcore.run_cold(make_args(wrap, tree, work, cfg), err, env=env), err)
    m.update(stages=outofcore.stage_log(slog), work_peak=disk.peak, work_blocks_peak=disk.work_peak,
             work_end=du(work),
             cmd=" ".join(make_args("<wrapper>", tree, "<dir>", cfg)))
    log(f"make report: {m['wall']:.0f}s, status {m['status']}")
    shutil.rmtree(work, ignore_errors=True)
    cmd = f"find {tree} -type f -print0 | xargs -0 -P{bench.jobs} -n 5000 md5sum > /dev/null"
    md5 = outofcore.failed_text(outofcore.run_cold(["bash", "-c", cmd], os.path.join(root, "md5.err")),
                                os.path.join(root, "md5.err"))
    md5["cmd"] = cmd
    log(f"md5sum: {md5['wall']:.0f}s, status {md5['status']}")
    return m, md5


def tenmillion(bench, cfg):
    """The section's data: the image, the tree, make report and md5sum, or why they were skipped."""
    root = os.path.join(bench.w, "tenmillion")
    d = {"files_asked": cfg.tm_files, "size": cfg.tm_size, "dirs": cfg.tm_dirs, "memory": cfg.tm_memory or None,
         "capacity": cfg.tm_capacity or None,
         "jobs": bench.jobs, "inode": INODE, "image_bytes": image_bytes(cfg.tm_files),
         "mkfs": " ".join(mkfs_args("IMG", cfg.tm_files))}
    why = preflight(root, cfg.tm_files)
    if why:
        log(f"the run on {cfg.tm_files} files is skipped: {why}")
        return dict(d, skipped=why)
    img, mnt = os.path.join(root, "tm.img"), os.path.join(root, "mnt")
    tree = os.path.join(mnt, "tree")
    teardown(mnt, img)
    try:
        mount_image(img, mnt, cfg.tm_files)
        d["gen"] = generate(bench, cfg, tree)
        d["files"], d["bytes"] = tree_size(tree)
        st = os.statvfs(mnt)
        d["image_used"] = (st.f_blocks - st.f_bfree) * st.f_frsize
        d["image_disk"] = os.stat(img).st_blocks * 512
        d["make"], d["md5"] = runs(bench, cfg, tree, root)
    finally:
        teardown(mnt, img)
    if d["make"]["status"] != 0:
        log(f"make report failed:\n{d['make'].get('stderr', '')}")
    d["skipped"] = None
    return d
