#!/usr/bin/env python3
"""Ground truth for `make quality`, independent of fsim.

* Identical sets: files grouped by the MD5 of their whole content (hashlib).
* Exact similarity of a pair of distinct contents: the bytes of a longest
  common subsequence of lines, from GNU diff (`diff -a --minimal`, counting the
  bytes of the unchanged lines it prints with `--unchanged-line-format=%L`),
  divided by the larger file's size. Lines include their newline, as in
  fsim-verify; a last line without one differs from the same line with one.
  Binary files are compared the same way (`-a`: bytes between newlines).
* Pairs that cannot reach the lowest threshold measured (RATIO_FLOOR of the
  larger file) are not diffed and count as negatives. Two exact upper bounds
  of the LCS decide that, cheapest first:
  1. the smaller file's size (size ratio below RATIO_FLOOR);
  2. the multiset overlap of lines: sum over distinct lines of
     min(count in a, count in b) × the line's length. Every line of a common
     subsequence is a line of both files, and a line occurring k times in one
     file is used at most k times, so the LCS bytes never exceed it. Computed
     in JOBS forked processes from per-content line counts.
  Neither bound can turn a positive into a negative: the truth at thresholds
  >= RATIO_FLOOR is exactly diff's.
* Results (diff figures and bounds) are cached by content hashes in a TSV
  file, so re-runs only look at new pairs; the diffs run in JOBS processes.

usage: truth.py CORPUS PAIRS.tsv CACHE.tsv   (PAIRS: path_a<TAB>path_b lines)
       prints one line per pair: path_a, path_b, lcs bytes (or - if not diffed)
"""
import hashlib
import os
import subprocess
import sys
from collections import Counter
from multiprocessing import Pool

RATIO_FLOOR = 0.3
DIFF = ["diff", "-a", "--minimal", "--unchanged-line-format=%L",
        "--old-line-format=", "--new-line-format="]


def walk(root):
    """Every regular file under root, in byte order of paths."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in files:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p) and not f.startswith(".done"):
                out.append(p)
    out.sort(key=os.fsencode)
    return out


def content_classes(root, binary=None):
    """path -> (md5 hex, size) for every file under root. binary: a set that
    receives the md5 of every content holding a NUL byte."""
    info = {}
    for p in walk(root):
        with open(p, "rb") as fh:
            data = fh.read()
        h = hashlib.md5(data).hexdigest()
        info[p] = (h, len(data))
        if binary is not None and b"\0" in data:
            binary.add(h)
    return info


def lcs_bytes(pair):
    a, b = pair
    r = subprocess.run(DIFF + [a, b], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"diff {a} {b}: {r.stderr.decode(errors='replace')}")
    return len(r.stdout)


# Line counts of the contents whose pairs are bounded, filled before the
# pool forks (the workers inherit them).
_PROFILES = {}


def _profile(path):
    with open(path, "rb") as fh:
        parts = fh.read().split(b"\n")  # diff's lines: up to and including \n
    c = Counter(x + b"\n" for x in parts[:-1])
    if parts[-1]:
        c[parts[-1]] += 1
    return c


def _overlap(job):
    out = []
    for ka, kb in job:
        ca, cb = _PROFILES[ka], _PROFILES[kb]
        if len(ca) > len(cb):
            ca, cb = cb, ca
        u = 0
        for l, n in ca.items():
            m = cb.get(l)
            if m:
                u += (n if n < m else m) * len(l)
        out.append(u)
    return out


def load_cache(path):
    """(md5a, md5b) -> ('diff' | 'bound', bytes)"""
    cache = {}
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                f = line.split()
                cache[(f[0], f[1])] = (f[3] if len(f) > 3 else "diff", int(f[2]))
    return cache


def exact(pairs, info, cache_path, jobs=2, log=None):
    """pairs: iterable of (path_a, path_b). Returns ({(md5a, md5b) sorted:
    lcs bytes}, stats): the LCS of every pair whose size ratio and line
    overlap allow RATIO_FLOOR (pairs absent from the result are negatives);
    diffs and bounds what the cache lacks."""
    cache = load_cache(cache_path)
    todo = {}
    for a, b in pairs:
        (ha, sa), (hb, sb) = info[a], info[b]
        if ha == hb or min(sa, sb) < RATIO_FLOOR * max(sa, sb):
            continue
        key = (ha, hb) if ha < hb else (hb, ha)
        if key not in cache and key not in todo:
            todo[key] = (a, b) if ha < hb else (b, a)
    stats = {"bounded": 0, "diffed": 0}
    fo = open(cache_path, "a")
    if todo:
        keys = sorted(todo)
        if log:
            log(f"truth: line-overlap bound of {len(keys):,} pairs")
        _PROFILES.clear()
        for k in keys:
            for h, p in zip(k, todo[k]):
                if h not in _PROFILES:
                    _PROFILES[h] = _profile(p)
        step = 2000
        jobs_l = [keys[i:i + step] for i in range(0, len(keys), step)]
        with Pool(jobs) as pool:
            bounds = [u for part in pool.imap(_overlap, jobs_l) for u in part]
        _PROFILES.clear()
        need = []
        for k, u in zip(keys, bounds):
            sa, sb = info[todo[k][0]][1], info[todo[k][1]][1]
            if u < RATIO_FLOOR * max(sa, sb):
                cache[k] = ("bound", u)
                fo.write(f"{k[0]}\t{k[1]}\t{u}\tbound\n")
                stats["bounded"] += 1
            else:
                need.append(k)
        if log:
            log(f"truth: {stats['bounded']:,} pairs under the bound, diffing {len(need):,}")
        with Pool(jobs) as pool:
            for k, v in zip(need, pool.imap(lcs_bytes, [todo[k] for k in need], chunksize=64)):
                cache[k] = ("diff", v)
                fo.write(f"{k[0]}\t{k[1]}\t{v}\tdiff\n")
                stats["diffed"] += 1
    fo.close()
    return {k: v for k, (how, v) in cache.items() if how == "diff"}, stats


def main():
    root, pairs_path, cache_path = sys.argv[1:4]
    info = content_classes(root)
    pairs = [tuple(l.rstrip("\n").split("\t")[:2]) for l in open(pairs_path) if l.strip()]
    cache, _ = exact(pairs, info, cache_path)
    for a, b in pairs:
        ha, hb = info[a][0], info[b][0]
        key = (ha, hb) if ha < hb else (hb, ha)
        print(f"{a}\t{b}\t{cache.get(key, '-')}")


if __name__ == "__main__":
    main()
