#!/bin/sh
# Incremental re-run benchmark: a run from scratch on TREE, then
# 1 % of its files changed, then `make report PREVIOUS=<first work>` and,
# for comparison, a run from scratch on the changed tree; the reports of
# the last two must be the same bytes. CHANGE is `edit` (a line inserted in
# the middle of every 100th file, the default) or `touch` (every 100th file
# given a new mtime, its bytes kept: a checkout, a copy, a restore).
# make bench-changes runs the same changes on three trees, with the
# scratch space of each run. Usage: scripts/rerun-bench.sh TREE SCRATCH_DIR [BIN [CHANGE]]
# (TREE is copied into SCRATCH_DIR, which is removed first).
set -eu
tree=$1 dir=$2 bin=${3:-target/release} change=${4:-edit}
case $change in edit|touch) ;; *) echo "rerun-bench.sh: CHANGE is edit or touch, not $change" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
case $bin in /*) ;; *) bin=$here/$bin ;; esac
rm -rf "$dir" && mkdir -p "$dir" && cp -a "$tree" "$dir/repo"
run() { # work dir, extra make args...
    w=$1; shift
    # No run waits on the write-back of the one before (untimed).
    sync
    s=$(date +%s.%N)
    make -s -C "$here" report BIN="$bin" REPO="$dir/repo" WORK="$dir/$w" FORMATS="txt json tsv html" "$@" >/dev/null
    e=$(date +%s.%N)
    echo "$w $(echo "$e - $s" | bc)"
}
run first
python3 - "$dir/repo" "$change" <<'PY'
import os, sys, time
root, change = sys.argv[1], sys.argv[2]
paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
n = 0
for i, p in enumerate(paths):
    if i % 100 != 7:
        continue
    n += 1
    if change == 'touch':
        later = time.time() + 60
        os.utime(p, (later, later))
        continue
    b = open(p, 'rb').read()
    mid = b.find(b'\n', len(b) // 2)
    mid = len(b) if mid < 0 else mid + 1
    open(p, 'wb').write(b[:mid] + b'edited line %d\n' % i + b[mid:])
print("touched" if change == 'touch' else "edited", n, "of", len(paths), "files")
PY
run rerun PREVIOUS="$dir/first"
run scratch
for f in report.txt report.json report.tsv report.html verified.tsv; do
    cmp "$dir/rerun/$f" "$dir/scratch/$f" || { echo "rerun and scratch differ: $f" >&2; exit 1; }
done
echo "rerun and scratch reports: same bytes"
