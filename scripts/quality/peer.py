#!/usr/bin/env python3
"""The peer: datasketch MinHash-LSH, the tool a user would pick instead of fsim.

128 permutations over word 5-shingles (whitespace-separated words, UTF-8 with
replacement), LSH threshold 0.5. One MinHash per distinct content (identical
files are found by their whole-content hash, as fsim does). Writes
`path_a<TAB>path_b<TAB>estimated_jaccard` for every LSH candidate pair and
prints timings as JSON on stdout.

usage: peer.py CLASSES.tsv OUT.tsv      (CLASSES: content-hash<TAB>size<TAB>path
                                          of one representative per content)
"""
import json
import sys
import time
import resource

from datasketch import MinHash, MinHashLSH

NUM_PERM = 128
SHINGLE = 5
THRESHOLD = 0.5


def shingles(data: bytes):
    words = data.decode("utf-8", "replace").split()
    if len(words) < SHINGLE:
        return {" ".join(words).encode()}
    return {" ".join(words[i:i + SHINGLE]).encode() for i in range(len(words) - SHINGLE + 1)}


def main():
    classes, out = sys.argv[1], sys.argv[2]
    reps = []
    with open(classes, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            h, size, path = line.rstrip("\n").split("\t", 2)
            if int(size) > 0:
                reps.append(path)
    t0 = time.perf_counter()
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    sigs = []
    for i, path in enumerate(reps):
        with open(path, "rb") as fh:
            data = fh.read()
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch(list(shingles(data)))
        sigs.append(m)
        lsh.insert(i, m)
    t1 = time.perf_counter()
    pairs = 0
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as fo:
        for i, m in enumerate(sigs):
            for j in lsh.query(m):
                if j > i:
                    fo.write(f"{reps[i]}\t{reps[j]}\t{m.jaccard(sigs[j]):.4f}\n")
                    pairs += 1
    t2 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"files": len(reps), "pairs": pairs, "index_s": round(t1 - t0, 2),
                      "query_s": round(t2 - t1, 2), "total_s": round(t2 - t0, 2),
                      "max_rss": rss}))


if __name__ == "__main__":
    main()
