#!/usr/bin/env python3
"""Check the byte measure of binary pairs, independently of fsim.

    scripts/check-runs.py WORK/files.tsv WORK/verified.tsv WORK/regions.tsv

(regions.tsv from `fsim-verify --regions`, i.e. `make report` defaults.)
For every `exact` pair of verified.tsv whose files are not both text, the
regions must be (docs/formats.md, "verified pairs", binary pairs):

  * equal bytes in both files (each region compared byte for byte);
  * in the same order and disjoint in both files;
  * maximal: on each side, the byte next to the region differs in the two
    files, or is past a file's end, or belongs to the neighbouring region
    in one of the files;
  * adding up to the figure (field 7).

Runs without templates only (with templates the offsets are in payloads).
Prints one line per failure and a summary; exit status 1 on any failure.
"""
import re
import subprocess
import sys
from collections import defaultdict


def unescape(p):
    table = {"\\": b"\\", "t": b"\t", "n": b"\n", "r": b"\r"}
    out = bytearray()
    i = 0
    raw = p.encode("utf-8")
    while i < len(raw):
        c = raw[i : i + 1]
        if c == b"\\":
            n = raw[i + 1 : i + 2].decode()
            if n == "x":
                out += bytes([int(raw[i + 2 : i + 4], 16)])
                i += 4
                continue
            out += table[n]
            i += 2
            continue
        out += c
        i += 1
    return bytes(out)


def lines(path):
    """The file's lines; `zstd -dcf` reads a record file that `make report`
    kept compressed (COMPRESS=1) and passes text through."""
    out = subprocess.run(["zstd", "-dcfq", path], check=True, stdout=subprocess.PIPE).stdout
    return out.decode("utf-8").splitlines()


def data_lines(path):
    for line in lines(path):
        if not line.startswith("#"):
            yield line.split("\t")


def main(files_tsv, verified_tsv, regions_tsv):
    files = {}
    for f in data_lines(files_tsv):
        if len(f) >= 6:
            files[int(f[0])] = (f[4], unescape(f[-1]))  # type, path (last: v2 and v3)
    header = lines(verified_tsv)[0]
    if "\tverify-binary=byte-runs" not in header:
        sys.exit(f"{verified_tsv}: no verify-binary=byte-runs: binary pairs measured by pieces")
    if re.search(r"\ttemplates=", header):
        sys.exit(f"{verified_tsv}: made with templates: offsets are in payloads, not checked")
    regions = defaultdict(list)
    for r in data_lines(regions_tsv):
        regions[(int(r[0]), int(r[1]))].append(tuple(int(x) for x in r[2:5]))
    bad = checked = 0
    for v in data_lines(verified_tsv):
        a, b = int(v[0]), int(v[1])
        if len(v) < 8 or v[7] != "exact":
            continue
        if files[a][0] in ("text", "empty") and files[b][0] in ("text", "empty"):
            continue
        da = open(files[a][1], "rb").read()
        db = open(files[b][1], "rb").read()
        runs = regions.get((a, b), [])
        errors = []
        end_a = end_b = 0
        total = 0
        for k, (oa, ob, n) in enumerate(runs):
            if n <= 0 or oa < end_a or ob < end_b:
                errors.append(f"region {k} ({oa}, {ob}, {n}) empty, out of order or overlapping")
            elif da[oa : oa + n] != db[ob : ob + n] or oa + n > len(da) or ob + n > len(db):
                errors.append(f"region {k} ({oa}, {ob}, {n}): bytes differ")
            else:
                na, nb = runs[k + 1][:2] if k + 1 < len(runs) else (len(da), len(db))
                left = oa == end_a or ob == end_b or da[oa - 1] != db[ob - 1]
                right = oa + n == na or ob + n == nb or da[oa + n] != db[ob + n]
                if not (left and right):
                    errors.append(f"region {k} ({oa}, {ob}, {n}) is not maximal")
            end_a, end_b = oa + n, ob + n
            total += n
        if total != int(v[6]):
            errors.append(f"regions add up to {total}, figure {v[6]}")
        checked += 1
        for e in errors:
            bad += 1
            print(f"pair {a}-{b}: {e}")
    print(f"{checked} binary pairs checked, {bad} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
