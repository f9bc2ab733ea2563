#!/usr/bin/env python3
"""Check that the report lists the folder relations fsim-gen planted.

    fsim-gen --folders N --folder-copies K --manifest M TREE
    fsim 'FORMATS=json' WORK=W TREE
    scripts/folder-relations.py M W/report.json TREE

M's lines are `kind<TAB>folder<TAB>folder...` (paths relative to TREE,
tools/src/folders.rs). A relation of two folders (`folder-identical`,
`folder-version`, `folder-renamed`, `folder-nested`) is listed when the
json's `folders` hold the two as a pair, top or child pair at any depth
(`children`); a `folder-copies` relation when every two of its folders are
a pair there. Prints the count listed of each kind, then up to 20 of the
relations missed; exit status 1 when one is.
"""
import json
import os
import sys
from collections import Counter


def pairs(listed):
    """Every pair of the json's `folders`, child pairs included."""
    stack = list(listed)
    while stack:
        p = stack.pop()
        yield p["a"], p["b"]
        stack.extend(p.get("children", []))


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    manifest, report, root = argv[1:]
    with open(report, encoding="utf-8") as f:
        listed = {frozenset(ab) for ab in pairs(json.load(f)["folders"])}
    total, found, missed = Counter(), Counter(), []
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            kind, *folders = line.rstrip("\n").split("\t")
            paths = [os.path.join(root, p) for p in folders]
            every = all(
                frozenset((x, y)) in listed
                for i, x in enumerate(paths)
                for y in paths[i + 1 :]
            )
            total[kind] += 1
            if every:
                found[kind] += 1
            else:
                missed.append(line.rstrip("\n"))
    for kind in sorted(total):
        print(f"{kind}\t{found[kind]} of {total[kind]}")
    print(f"all\t{sum(found.values())} of {sum(total.values())}")
    for line in missed[:20]:
        print(f"missed\t{line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
