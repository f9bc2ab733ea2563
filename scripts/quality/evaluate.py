#!/usr/bin/env python3
"""`make quality`: measure fsim's precision, recall and F1 against an exact
ground truth on a real corpus, and the datasketch MinHash-LSH peer on the same
data; write docs/quality.md.

Run from the repository root after scripts/quality/fetch.sh. Environment:
  QDIR     cache folder (default quality-work): corpus, fsim runs, truth cache
  AVGS     average chunk sizes measured (default "1000 300 100 50")
  FLOORS   analysis floors (% of the smaller file) evaluated (default "5 10 20")
           fsim-analyze runs once at the lowest; higher floors are that
           output filtered by the same rule (bytes in common >= F% of smaller)
  DEFAULT_AVG, DEFAULT_FLOOR  the setting the defaults section argues for
  JOBS     processes for fsim and the diffs (default 2)
  OUT      the document (default docs/quality.md)
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402

QDIR = os.environ.get("QDIR", "quality-work")
CORPUS = os.path.join(QDIR, "corpus")
AVGS = [int(x) for x in os.environ.get("AVGS", "1000 300 100 50").split()]
FLOORS = sorted(float(x) for x in os.environ.get("FLOORS", "5 10 20").split())
BASE_FLOOR = FLOORS[0]
DEFAULT_AVG = int(os.environ.get("DEFAULT_AVG", "100"))
DEFAULT_FLOOR = float(os.environ.get("DEFAULT_FLOOR", "10"))
JOBS = int(os.environ.get("JOBS", "2"))
OUT = os.environ.get("OUT", "docs/quality.md")
THRESHOLDS = [30, 50, 70, 90]
ROOT = os.getcwd()
BIN = os.path.join(ROOT, "target", "release")
STAGES = ["chunks.tsv", "sorted.tsv", "partition.tsv", "bins.tsv", "pairs.tsv", "verified.tsv"]
VENV = os.path.join(QDIR, "venv")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def fmt_floor(f):
    return f"{f:g}"


def unescape(s):
    if "\\" not in s:
        return s
    out, i = bytearray(), 0
    b = s.encode("utf-8")
    while i < len(b):
        c = b[i]
        if c == 0x5C and i + 1 < len(b):
            n = chr(b[i + 1])
            if n == "x":
                out.append(int(b[i + 2:i + 4], 16)); i += 4; continue
            out.append({"\\": 0x5C, "t": 9, "n": 10, "r": 13}[n]); i += 2; continue
        out.append(c); i += 1
    return os.fsdecode(bytes(out))


def trailer(path, key):
    with open(path, "rb") as fh:
        fh.seek(max(0, os.path.getsize(path) - 4096))
        last = fh.read().decode().rstrip("\n").split("\n")[-1]
    for f in last.split("\t"):
        if f.startswith(key + "="):
            return int(f.split("=", 1)[1])
    return None


# ---------------------------------------------------------------- fsim runs

def run_fsim(avg):
    """Run the Makefile's stages one target at a time (so each is timed);
    reuse a previous run with the same parameters."""
    work = os.path.join(QDIR, f"fsim-avg{avg}")
    params = {"avg": avg, "floor": BASE_FLOOR, "jobs": JOBS, "corpus": sorted(os.listdir(CORPUS))}
    pfile, tfile = os.path.join(work, "params.json"), os.path.join(work, "times.json")
    if os.path.exists(tfile) and os.path.exists(pfile) and json.load(open(pfile)) == params:
        return work, json.load(open(tfile))
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    json.dump(params, open(pfile, "w"))
    times = {}
    for st in STAGES:
        rfile = os.path.join(work, ".time")
        cmd = ["/usr/bin/time", "-f", "%e %M", "-o", rfile, "make", "-s", "--no-print-directory",
               os.path.join(work, st), f"REPO={CORPUS}", f"WORK={work}", f"AVG={avg}",
               f"FLOOR={fmt_floor(BASE_FLOOR)}", f"JOBS={JOBS}", f"BIN={BIN}"]
        subprocess.run(cmd, check=True)
        e, m = open(rfile).read().split()[-2:]
        times[st] = {"s": float(e), "rss_kb": int(m)}
        log(f"  avg {avg}: {st} {e} s, {int(m) // 1024} MB")
    json.dump(times, open(tfile, "w"))
    return work, times


def read_files(work):
    ids = {}
    with open(os.path.join(work, "files.tsv"), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            ids[int(f[0])] = (unescape(f[5]), f[3], int(f[1]))  # path, content hash, size
    return ids


def read_pairs(path):
    """(id a, id b) -> (common lower bound, exact or None)"""
    out = {}
    with open(path) as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            ex = int(f[6]) if len(f) >= 8 and f[7] == "exact" else (max(int(f[4]), int(f[6])) if len(f) >= 8 else None)
            out[(int(f[0]), int(f[1]))] = (int(f[4]), ex)
    return out


def chunk_bags(work, want):
    """file id -> Counter of (hash, length) for the wanted file ids."""
    bags = defaultdict(Counter)
    with open(os.path.join(work, "chunks.tsv")) as fh:
        for line in fh:
            if line[0] == "#":
                continue
            h, i, n = line.split("\t")
            i = int(i)
            if i in want:
                bags[i][(h, int(n))] += 1
    return bags


def lower_bound(b1, b2):
    return sum(min(c, b2[k]) * k[1] for k, c in b1.items() if k in b2)


# ---------------------------------------------------------------- metrics

def prf(pred, pos):
    tp = len(pred & pos)
    p = tp / len(pred) if pred else 1.0
    r = tp / len(pos) if pos else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def main():
    t_start = time.time()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bins"], check=True)
    log("hashing the corpus")
    info = truth.content_classes(CORPUS)          # path -> (md5, size)
    classes = defaultdict(list)
    for p, (h, s) in info.items():
        classes[h].append(p)
    rep = {h: min(ps, key=os.fsencode) for h, ps in classes.items()}
    size_of = {h: info[p][1] for h, p in rep.items()}
    n_files, n_bytes = len(info), sum(s for _, s in info.values())
    ident_sets = {h: ps for h, ps in classes.items() if len(ps) > 1 and size_of[h] > 0}

    def key(pa, pb):
        ha, hb = info[pa][0], info[pb][0]
        if ha == hb or size_of[ha] == 0 or size_of[hb] == 0:
            return None
        return (ha, hb) if ha < hb else (hb, ha)

    # fsim runs
    runs = {}
    for avg in AVGS:
        log(f"fsim avg {avg}")
        work, times = run_fsim(avg)
        files = read_files(work)
        pairs = read_pairs(os.path.join(work, "verified.tsv"))
        kp = {}
        for (a, b), (lb, ex) in pairs.items():
            k = key(files[a][0], files[b][0])
            if k is not None:
                kp[k] = (lb, ex, a, b)
        fsim_ident = defaultdict(list)
        for i, (p, ch, s) in files.items():
            if s > 0:
                fsim_ident[ch].append(p)
        runs[avg] = {"work": work, "times": times, "files": files, "pairs": kp,
                     "path_id": {p: i for i, (p, _, _) in files.items()},
                     "records": trailer(os.path.join(work, "chunks.tsv"), "records"),
                     "kept": trailer(os.path.join(work, "partition.tsv"), "records"),
                     "ident_ok": sorted(sorted(v) for v in fsim_ident.values() if len(v) > 1)
                     == sorted(sorted(v) for v in ident_sets.values())}
        types = Counter()
        with open(os.path.join(work, "files.tsv")) as fh:
            for line in fh:
                if not line.startswith("#"):
                    types[line.split("\t")[4]] += 1
        runs[avg]["types"] = types

    # peer
    log("peer: datasketch MinHash-LSH")
    cls_file = os.path.join(QDIR, "classes.tsv")
    with open(cls_file, "w") as fo:
        for h in sorted(rep):
            fo.write(f"{h}\t{size_of[h]}\t{rep[h]}\n")
    peer_out = os.path.join(QDIR, "peer-pairs.tsv")
    peer_json = os.path.join(QDIR, "peer.json")
    rfile = os.path.join(QDIR, ".peer-time")
    if not (os.path.exists(peer_json) and os.path.getmtime(peer_json) > os.path.getmtime(CORPUS)):
        r = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", rfile,
                            os.path.join(VENV, "bin", "python"), "scripts/quality/peer.py", cls_file, peer_out],
                           check=True, stdout=subprocess.PIPE)
        pj = json.loads(r.stdout)
        e, m = open(rfile).read().split()[-2:]
        pj["wall_s"], pj["rss_kb"] = float(e), int(m)
        json.dump(pj, open(peer_json, "w"))
    peer_stats = json.load(open(peer_json))
    peer = {}
    with open(peer_out) as fh:
        for line in fh:
            a, b, j = line.rstrip("\n").split("\t")
            k = key(a, b)
            if k is not None:
                peer[k] = float(j)

    # truth over the pooled candidates
    pool = set(peer)
    for r in runs.values():
        pool |= set(r["pairs"])
    # Pairs independent of every tool: the same relative path in two releases.
    by_rel = defaultdict(set)
    for p in info:
        by_rel[os.path.relpath(p, CORPUS).split(os.sep, 1)[-1]].add(info[p][0])
    samepath = set()
    for hs in by_rel.values():
        hs = sorted(hs)
        for i in range(len(hs)):
            for j in range(i + 1, len(hs)):
                if size_of[hs[i]] and size_of[hs[j]]:
                    samepath.add((hs[i], hs[j]))
    tools_pool = set(pool)
    pool |= samepath
    log(f"truth: {len(pool)} pooled candidate pairs")
    t0 = time.time()
    cache, diffed = truth.exact([(rep[a], rep[b]) for a, b in sorted(pool)], info,
                                os.path.join(QDIR, "truth-cache.tsv"), JOBS)
    t_truth = time.time() - t0
    sim = {}
    for k in pool:
        v = cache.get(k)
        sim[k] = 100.0 * v / max(size_of[k[0]], size_of[k[1]]) if v is not None else 0.0
    pos = {T: {k for k, s in sim.items() if s >= T} for T in THRESHOLDS}
    ratio_skipped = sum(1 for k in pool if k not in cache)
    only_samepath = {T: len(pos[T] - tools_pool) for T in THRESHOLDS}
    diffs = [abs(ex - cache[k]) / max(size_of[k[0]], size_of[k[1]])
             for r in runs.values() for k, (lb, ex, _, _) in r["pairs"].items()
             if k in cache and ex is not None]

    def larger(k):
        return max(size_of[k[0]], size_of[k[1]])

    def smaller(k):
        return min(size_of[k[0]], size_of[k[1]])

    # settings
    results = []  # (name, verify, avg, floor, {T: (p, r, f, npred)})
    for avg in AVGS:
        kp = runs[avg]["pairs"]
        res = {}
        for T in THRESHOLDS:
            pred = {k for k, (lb, ex, _, _) in kp.items() if 100.0 * lb >= T * larger(k)}
            res[T] = prf(pred, pos[T]) + (len(pred),)
        results.append((f"fsim avg {avg}, chunks only", False, avg, None, res))
        for fl in FLOORS:
            res = {}
            for T in THRESHOLDS:
                pred = {k for k, (lb, ex, _, _) in kp.items()
                        if 100.0 * lb >= fl * smaller(k) and 100.0 * ex >= T * larger(k)}
                res[T] = prf(pred, pos[T]) + (len(pred),)
            results.append((f"fsim avg {avg}, floor {fmt_floor(fl)}, verified", True, avg, fl, res))
    res = {}
    for T in THRESHOLDS:
        pred = {k for k, j in peer.items() if j >= T / 100.0}
        res[T] = prf(pred, pos[T]) + (len(pred),)
    results.append(("datasketch LSH 0.5, est. Jaccard ≥ T", None, None, None, res))
    res, cuts = {}, {}
    for T in THRESHOLDS:
        best = None
        for c in [x / 100 for x in range(30, 100, 5)]:
            pred = {k for k, j in peer.items() if j >= c}
            m = prf(pred, pos[T]) + (len(pred),)
            if best is None or m[2] > best[2]:
                best, cuts[T] = m, c
        res[T] = best
    results.append(("datasketch, best Jaccard cut per T (oracle)", None, None, None, res))

    # the Makefile's defaults as committed: `make report` with no AVG/FLOOR
    log("make report with the Makefile's defaults")
    dwork = os.path.join(QDIR, "defaults")
    subprocess.run(["rm", "-rf", dwork], check=True)
    rfile = os.path.join(QDIR, ".defaults-time")
    subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", rfile, "make", "-s", "--no-print-directory",
                    "report", f"REPO={CORPUS}", f"WORK={dwork}", f"JOBS={JOBS}", f"BIN={BIN}"], check=True)
    e, m = open(rfile).read().split()[-2:]
    with open(os.path.join(dwork, "pairs.tsv")) as fh:
        hdr = dict(x.split("=", 1) for x in fh.readline().rstrip("\n").split("\t")[1:] if "=" in x)
    dfiles = read_files(dwork)
    dpairs = {}
    for (a, b), (lb, ex) in read_pairs(os.path.join(dwork, "verified.tsv")).items():
        k = key(dfiles[a][0], dfiles[b][0])
        if k is not None:
            dpairs[k] = (lb, ex)
    res = {}
    for T in THRESHOLDS:
        pred = {k for k, (lb, ex) in dpairs.items() if 100.0 * ex >= T * larger(k)}
        res[T] = prf(pred, pos[T]) + (len(pred),)
    outside = sum(1 for k in dpairs if k not in pool)
    dflt = {"avg": hdr.get("avg"), "floor": hdr.get("min-percent"), "wall_s": float(e),
            "rss_kb": int(m), "pairs": len(dpairs), "outside_pool": outside,
            "records": trailer(os.path.join(dwork, "chunks.tsv"), "records")}
    results.insert(len(results) - 2, (f"**Makefile defaults** (`make report`: avg {dflt['avg']}, "
                                      f"floor {dflt['floor']}, verified)", True, None, None, res))

    # misses at T=50
    T = 50
    misses = {}
    share = {}
    recovered = {}
    for avg in AVGS:
        r = runs[avg]
        kp = r["pairs"]
        lost = [k for k in pos[T] if k not in kp]
        want = set()
        for a, b in lost:
            want.add(r["path_id"][rep[a]]); want.add(r["path_id"][rep[b]])
        bags = chunk_bags(r["work"], want)
        nochunk = 0
        lbs = {}
        for a, b in lost:
            ia, ib = r["path_id"][rep[a]], r["path_id"][rep[b]]
            lb = lower_bound(bags[ia], bags[ib])
            lbs[(a, b)] = lb
            nochunk += lb == 0
        share[avg] = (len(pos[T]) - nochunk, len(pos[T]))
        ratios = [kp[k][0] / cache[k] for k in pos[T] if k in kp and cache.get(k)]
        recovered[avg] = statistics.median(ratios) if ratios else 0.0
        for fl in [None] + FLOORS:
            c = Counter()
            for k in pos[T]:
                if k in kp:
                    lb, ex, _, _ = kp[k]
                    if fl is None:
                        if 100.0 * lb < T * larger(k):
                            c["chunk bound below T (of larger)"] += 1
                    elif 100.0 * lb < fl * smaller(k):
                        c["chunk bound below the floor"] += 1
                    elif 100.0 * ex < T * larger(k):
                        c["fsim-verify figure below T"] += 1
                else:
                    lb = lbs[k]
                    if lb == 0:
                        c["share no chunk"] += 1
                    elif fl is None and 100.0 * lb < T * larger(k):
                        c["chunk bound below T (of larger)"] += 1
                    elif 100.0 * lb < BASE_FLOOR * smaller(k) or (fl is not None and 100.0 * lb < fl * smaller(k)):
                        c["chunk bound below the floor"] += 1
                    else:
                        c["other (ubiquitous chunks dropped)"] += 1
            misses[(avg, fl)] = c

    # cross-check: fsim-verify's exact figure vs GNU diff
    agree = {}
    for avg in AVGS:
        kp = runs[avg]["pairs"]
        n = same = 0
        for k, (lb, ex, _, _) in kp.items():
            if k in cache and ex is not None:
                n += 1
                same += ex == cache[k]
        agree[avg] = (same, n)

    write_doc(locals())
    log(f"wrote {OUT} in {time.time() - t_start:.0f} s")


def versions():
    def out(cmd):
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
        except OSError:
            return "?"
    pkgs = out([os.path.join(VENV, "bin", "python"), "-m", "pip", "freeze"]).replace("\n", ", ")
    return {
        "fsim commit": out(["git", "rev-parse", "--short", "HEAD"]),
        "rustc": out(["rustc", "--version"]),
        "python": platform.python_version(),
        "peer venv": pkgs,
        "GNU diff": out(["diff", "--version"]).split("\n")[0],
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}",
    }


def write_doc(v):
    L = []
    w = L.append
    runs, results, AV = v["runs"], v["results"], AVGS
    sha = open(os.path.join(QDIR, "corpus.sha256")).read().strip().split("\n")
    w("# fsim quality: precision and recall against exact similarity\n")
    w("Generated by `make quality` (scripts/quality/); do not edit by hand. "
      "Timings are wall-clock on a shared 2-CPU machine (other builds may run beside): "
      "read them as ratios.\n")
    w("## Corpus\n")
    w(f"Four releases of Django (sdists from PyPI, `pip download --no-deps --no-binary :all: Django==V`), "
      f"unpacked side by side under `{CORPUS}/django-V/`: code, tests, and the reST documentation. "
      "Text files only: files containing a NUL byte (images, compiled .mo catalogs) are removed, and so are "
      "the translation catalogs `locale/*/LC_MESSAGES/*.po` (≈100 languages sharing msgid lines would add about "
      "a million cross-language candidate pairs, too many to diff for the ground truth).\n")
    w("```")
    for s in sha:
        w(s)
    w("```\n")
    w(f"**{v['n_files']:,} files, {v['n_bytes'] / 1e6:.1f} MB**; {len(v['rep']):,} distinct contents; "
      f"{len(v['ident_sets']):,} identical sets holding {sum(len(p) for p in v['ident_sets'].values()):,} files. "
      f"fsim's identical sets (from its content hashes) equal hashlib's: "
      f"{', '.join(f'avg {a}: ' + ('yes' if runs[a]['ident_ok'] else 'NO') for a in AV)}. "
      f"fsim's file types at avg {AV[0]}: {dict(runs[AV[0]]['types'])}.\n")
    w("## Ground truth\n")
    w("Similarity of two files = bytes of a longest common subsequence of lines (GNU `diff -a --minimal`, "
      "bytes of the unchanged lines) ÷ the larger file's size. A pair is positive at threshold T when its "
      "similarity ≥ T %. Pairs of identical files are the identical sets above (not counted as pairs); "
      "empty files are left out. Candidates are pooled from every setting below, from the peer, and, "
      "independently of any tool, from every two releases of the same relative path "
      f"({len(v['samepath']):,} pairs) (union: **{len(v['pool']):,} pairs**); {v['ratio_skipped']:,} of them have a size ratio below "
      f"{truth.RATIO_FLOOR} and cannot reach 30 % (not diffed, negative); the rest were diffed "
      f"({v['diffed']:,} new this run, {v['t_truth']:.0f} s on {JOBS} processes). Recall is measured on the "
      "pooled positives. Positives that no tool proposed (found only by the same-path pairing): "
      + ", ".join(f"T = {T}: {n:,}" for T, n in v["only_samepath"].items()) + ".\n")
    w("| T | positives |\n|---|---|")
    for T in THRESHOLDS:
        w(f"| {T} | {len(v['pos'][T]):,} |")
    w("")
    w("## F1 per setting\n")
    w("`chunks only`: fsim without verification, the report's chunk lower bound with `--percent-of larger` "
      "(bytes of shared chunks ≥ T % of the larger file). `verified`: fsim-verify's exact figure ÷ the larger "
      "file ≥ T, over the candidates fsim-analyze kept at the floor (bytes of shared chunks ≥ floor % of the "
      "smaller file, `--min-percent`). Peer: datasketch MinHash (128 permutations, word 5-shingles) + "
      "MinHashLSH at threshold 0.5; a pair is reported when its estimated Jaccard ≥ T/100; the oracle row "
      f"picks, per T, the Jaccard cut that maximises F1 against the truth (cuts {v['cuts']}).\n")
    w("| setting | " + " | ".join(f"F1 @{T}" for T in THRESHOLDS) + " |")
    w("|---|" + "---|" * len(THRESHOLDS))
    for name, ver, avg, fl, res in results:
        w(f"| {name} | " + " | ".join(f"{res[T][2]:.3f}" for T in THRESHOLDS) + " |")
    w("")
    w("Precision / recall (pairs reported):\n")
    w("| setting | " + " | ".join(f"P / R @{T}" for T in THRESHOLDS) + " |")
    w("|---|" + "---|" * len(THRESHOLDS))
    for name, ver, avg, fl, res in results:
        w(f"| {name} | " + " | ".join(f"{res[T][0]:.3f} / {res[T][1]:.3f} ({res[T][3]:,})" for T in THRESHOLDS) + " |")
    w("")
    w("## Cost\n")
    w(f"fsim: one run per average chunk size through the Makefile's stages (`make WORK/<stage> REPO={CORPUS} "
      f"AVG=… FLOOR={fmt_floor(BASE_FLOOR)} JOBS={JOBS}`), seconds (peak RSS). Candidate pairs are those "
      f"fsim-analyze kept at floor {fmt_floor(BASE_FLOOR)} and fsim-verify verified; the columns for higher "
      "floors count the subset a run with that FLOOR would verify.\n")
    w("| avg | chunk records | kept records | " + " | ".join(s.split(".")[0] for s in STAGES)
      + " | total s | " + " | ".join(f"pairs @floor {fmt_floor(f)}" for f in FLOORS) + " |")
    w("|---|---|---|" + "---|" * (len(STAGES) + 1 + len(FLOORS)))
    for a in AV:
        r = runs[a]
        t = r["times"]
        cnt = []
        for fl in FLOORS:
            cnt.append(sum(1 for k, (lb, ex, _, _) in r["pairs"].items()
                           if 100.0 * lb >= fl * min(v['size_of'][k[0]], v['size_of'][k[1]])))
        w(f"| {a} | {r['records']:,} | {r['kept']:,} | "
          + " | ".join(f"{t[s]['s']:.1f} ({t[s]['rss_kb'] // 1024} MB)" for s in STAGES)
          + f" | {sum(t[s]['s'] for s in STAGES):.1f} | " + " | ".join(f"{c:,}" for c in cnt) + " |")
    ps = v["peer_stats"]
    w(f"\nPeer (datasketch, one Python process): {ps['files']:,} distinct contents, {ps['pairs']:,} LSH "
      f"candidate pairs; signatures + index {ps['index_s']} s, queries {ps['query_s']} s, "
      f"{ps['wall_s']} s wall including start-up, peak RSS {ps['rss_kb'] // 1024} MB.\n")
    w("## Where the misses come from (T = 50)\n")
    w("Positives at T = 50 that a setting does not report, by cause. *share no chunk*: the two files have no "
      "chunk hash in common at that average size; *chunk bound below T*: without verification, the shared "
      "chunks underestimate the common bytes; *below the floor*: shared chunks < floor % of the smaller file, "
      "so fsim-analyze does not keep the pair; *fsim-verify figure below T*: fsim-verify's LCS differs from "
      "diff's near the threshold.\n")
    w(f"| avg | positives sharing ≥ 1 chunk | median chunk bound ÷ exact (found positives) |")
    w("|---|---|---|")
    for a in AV:
        s, n = v["share"][a]
        w(f"| {a} | {s:,} / {n:,} ({100.0 * s / max(n, 1):.1f} %) | {v['recovered'][a]:.2f} |")
    w("")
    w("| setting | missed | causes |")
    w("|---|---|---|")
    for (a, fl), c in v["misses"].items():
        name = f"avg {a}, chunks only" if fl is None else f"avg {a}, floor {fmt_floor(fl)}, verified"
        w(f"| {name} | {sum(c.values()):,} | " + "; ".join(f"{k}: {n:,}" for k, n in c.most_common()) + " |")
    w("")
    w("fsim-verify's exact figure equals GNU diff's on "
      + ", ".join(f"avg {a}: {s:,} / {n:,}" for a, (s, n) in v["agree"].items())
      + " diffed candidate pairs (both maximise the number of common lines; ties between equally long "
      f"subsequences can differ in bytes); {sum(1 for x in v['diffs'] if x > 0.01):,} figures differ by more "
      f"than 1 % of the larger file, at most {100 * max(v['diffs'] or [0]):.1f} %: the largest gaps are "
      "minified files with lines over 64 KiB, which fsim-verify cuts into ~64-byte pieces while diff "
      "compares whole lines.\n")
    # defaults
    peer_r = results[-2][4]
    oracle_r = results[-1][4]
    dflt = v["dflt"]
    d = next(r for r in results if r[0].startswith("**Makefile defaults**"))
    byname = {r[0]: r[4] for r in results}
    w("## Defaults\n")
    f50 = d[4][50][2]
    meets = f50 > peer_r[50][2] and f50 > oracle_r[50][2] and f50 >= 0.95
    w(f"The Makefile's defaults, as committed, are average chunk size **{dflt['avg']}** (`fsim-chunk "
      f"--avg-size` default, Makefile `AVG`) and analysis floor **{dflt['floor']} %** of the smaller file "
      f"(`FLOOR`), with verification on. `make report REPO={CORPUS}` with nothing else set took "
      f"**{dflt['wall_s']:.1f} s** wall (whole pipeline, {JOBS} jobs, peak RSS {dflt['rss_kb'] // 1024} MB): "
      f"{dflt['records']:,} chunk records, {dflt['pairs']:,} candidate pairs verified "
      f"({dflt['outside_pool']} outside the truth pool). At T = 50 its F1 is **{f50:.3f}** against the "
      f"peer's {peer_r[50][2]:.3f} (best oracle cut {oracle_r[50][2]:.3f}, which took "
      f"{v['peer_stats']['wall_s']:.0f} s): the targets (beat the peer at T = 50, F1 ≥ 0.95 with "
      f"verification) are {'**met**' if meets else '**NOT met**'}.\n")
    w("Why these values, from the tables above:\n")
    def f1(name, T):
        return byname[name][T][2] if name in byname else float("nan")
    w(f"* **1000 → 100.** At 1000 bytes, {100 - 100.0 * v['share'][1000][0] / max(v['share'][1000][1], 1):.0f} % "
      f"of the pairs ≥ 50 % similar share no chunk at all, so no floor and no verification can find them "
      f"(F1 @50 verified {f1('fsim avg 1000, floor 10, verified', 50):.3f}); 300 still misses "
      f"{100 - 100.0 * v['share'][300][0] / max(v['share'][300][1], 1):.0f} %. At 100, "
      f"{100.0 * v['share'][100][0] / max(v['share'][100][1], 1):.1f} % share a chunk and the verified F1 "
      f"is ≥ 0.95 at T = 50, 70, 90. The price is ~{runs[100]['records'] / runs[1000]['records']:.0f}× the "
      f"chunk records of 1000 (sort and partition work and disk) and "
      f"~{sum(1 for k in runs[100]['pairs']) / max(1, sum(1 for k in runs[1000]['pairs'])):.0f}× the candidate "
      f"pairs to verify.\n"
      f"* **not 50.** 50 gains at T = 30 (F1 {f1('fsim avg 50, floor 5, verified', 30):.3f} at floor 5 "
      f"vs {f1('fsim avg 100, floor 5, verified', 30):.3f} at 100) and little at T ≥ 50, for "
      f"~{runs[50]['records'] / runs[100]['records']:.1f}× the records of 100 and more candidates. Use "
      f"`AVG=50 FLOOR=5` to look for pairs of 30-50 % similarity.\n"
      f"* **floor 10.** The floor is on the chunk lower bound, which recovers a median "
      f"{v['recovered'][100]:.0%} of the exact common bytes at 100: floor 20 loses pairs "
      f"(F1 @50 {f1('fsim avg 100, floor 20, verified', 50):.3f}); floor 5 gains "
      f"{f1('fsim avg 100, floor 5, verified', 50) - f1('fsim avg 100, floor 10, verified', 50):+.3f} at T = 50 and "
      f"{f1('fsim avg 100, floor 5, verified', 30) - f1('fsim avg 100, floor 10, verified', 30):+.3f} at T = 30 for "
      f"more pairs to verify, and a lower floor lets boilerplate (licence headers, shared imports) "
      f"link many files on larger, more repetitive collections. 10 was already the default.\n"
      f"* **`--avg-size 1000`** (`AVG=1000`) stays as the paper's fast coarse pass: "
      f"{runs[1000]['records']:,} records instead of {runs[100]['records']:,}, finds the near-copies "
      f"(F1 @90 verified {f1('fsim avg 1000, floor 10, verified', 90):.3f}) but not the edited versions.\n"
      f"* **Without verification** (`VERIFY=0`) no chunk size reaches the peer at T = 50: the chunk "
      f"bound underestimates scattered edits (see the misses), so keep verification on whenever the files "
      f"are reachable.\n")
    w("## Limits of this measurement\n")
    w("* One project (Django, four releases): code, tests and reST documentation, text files only. "
      "Binary files and the translation catalogs are not measured.\n"
      "* Recall is relative to the pooled candidates of the tools measured: a similar pair that no "
      "setting and not the peer proposed is invisible (a brute-force all-pairs diff of 7,000 "
      "contents, ~25 M pairs, is out of budget).\n"
      "* The similarity is line-based (as fsim-verify and diff): a reflowed paragraph counts as changed.\n"
      "* Timings: page cache warm, one run each, on a shared machine.\n")
    w("## Reproduce\n")
    w("```sh\nmake quality                       # fetch (cached), run, rewrite docs/quality.md\n"
      "bash scripts/quality/fetch.sh      # the corpus alone\n"
      "QDIR=quality-work AVGS='1000 300 100 50' FLOORS='5 10 20' python3 scripts/quality/evaluate.py\n```\n")
    w("Versions:\n")
    for k, x in versions().items():
        w(f"* {k}: {x}")
    w("")
    with open(OUT, "w") as fo:
        fo.write("\n".join(L))


if __name__ == "__main__":
    main()
