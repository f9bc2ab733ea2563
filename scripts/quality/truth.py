#!/usr/bin/env python3
"""Ground truth for `make quality`, independent of fsim.

* Identical sets: files grouped by the MD5 of their whole content (hashlib).
* Exact similarity of a pair of distinct contents: the bytes of a longest
  common subsequence of lines, from GNU diff (`diff -a --minimal`, counting the
  bytes of the unchanged lines it prints with `--unchanged-line-format=%L`),
  divided by the larger file's size. Lines include their newline, as in
  fsim-verify; a last line without one differs from the same line with one.
* Pairs whose size ratio (smaller / larger) is below RATIO_FLOOR cannot reach
  the lowest threshold measured (the LCS is at most the smaller file): they
  are not diffed and count as negatives.
Results are cached by content hashes in a TSV file, so re-runs only diff new
pairs; the diffs run in JOBS processes (default 2).

usage: truth.py CORPUS PAIRS.tsv CACHE.tsv   (PAIRS: path_a<TAB>path_b lines)
       prints one line per pair: path_a, path_b, lcs bytes (or - if not diffed)
"""
import hashlib
import os
import subprocess
import sys
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


def content_classes(root):
    """path -> (md5 hex, size) for every file under root."""
    info = {}
    for p in walk(root):
        with open(p, "rb") as fh:
            data = fh.read()
        info[p] = (hashlib.md5(data).hexdigest(), len(data))
    return info


def lcs_bytes(pair):
    a, b = pair
    r = subprocess.run(DIFF + [a, b], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"diff {a} {b}: {r.stderr.decode(errors='replace')}")
    return len(r.stdout)


def load_cache(path):
    cache = {}
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                ha, hb, v = line.split()
                cache[(ha, hb)] = int(v)
    return cache


def exact(pairs, info, cache_path, jobs=2):
    """pairs: iterable of (path_a, path_b). Returns {(md5a, md5b) sorted: lcs bytes},
    for pairs whose size ratio allows RATIO_FLOOR; diffs what the cache lacks."""
    cache = load_cache(cache_path)
    todo = {}
    for a, b in pairs:
        (ha, sa), (hb, sb) = info[a], info[b]
        if ha == hb or min(sa, sb) < RATIO_FLOOR * max(sa, sb):
            continue
        key = (ha, hb) if ha < hb else (hb, ha)
        if key not in cache and key not in todo:
            todo[key] = (a, b)
    if todo:
        keys = sorted(todo)
        with Pool(jobs) as pool, open(cache_path, "a") as fo:
            for key, v in zip(keys, pool.imap(lcs_bytes, [todo[k] for k in keys], chunksize=32)):
                cache[key] = v
                fo.write(f"{key[0]}\t{key[1]}\t{v}\n")
    return cache, len(todo)


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
