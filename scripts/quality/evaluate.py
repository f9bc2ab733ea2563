#!/usr/bin/env python3
"""`make quality`: measure fsim's precision, recall and F1 against an exact
ground truth on a real corpus, per kind of file, and the datasketch
MinHash-LSH peer on the same data; write docs/quality.md.

Run from the repository root after scripts/quality/fetch.sh. Environment:
  QDIR     cache folder (default quality-work): corpus, fsim runs, truth cache
  RUNS     fsim settings measured, `;`-separated `label|MAKEVAR=V MAKEVAR=V`
           (default: avg 100 and 50 with chunks only, and the line source's
           variants at avg 100, floor 10). Each runs the
           Makefile's stages once up to bins.tsv, then analysis and
           verification once per floor, each timed.
  FLOORS   analysis floors (`FLOOR`, % of the smaller file) run for every
           setting whose RUNS entry does not set FLOOR (default "5 10")
  DEFAULTS the setting that the Makefile's defaults amount to, `label|floor`
           (default "avg 100, lines of any size, catalogs|10"): its
           per-project, per-kind table and its hard cases (long lines,
           reformatted code)
  REPORT_BEFORE  more `make report` runs to time beside the defaults,
           `;`-separated `name|MAKEVAR=V ...`
  JOBS     processes for fsim and the diffs (default 2)
  REUSE_RUNS=1   reuse cached runs although the binaries are newer
  OUT      the document (default docs/quality.md)
  BINARY_TRUTH=lines  binary pairs against the line truth of before (for
           comparison); default bytes: the byte LCS (truth.py)
"""
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from records import compressed, record_lines  # noqa: E402

QDIR = os.environ.get("QDIR", "quality-work")
CORPUS = os.path.join(QDIR, "corpus")
RUNS = [r.split("|", 1) for r in os.environ.get(
    "RUNS", ";".join([
        "avg 100|AVG=100 LINES=0 CATALOGS=0",
        "avg 50|AVG=50 LINES=0 CATALOGS=0 FLOOR=5",
        "avg 100, lines ≤ 1 KiB|AVG=100 LINES=1K CATALOGS=0 FLOOR=10",
        "avg 100, catalogs|AVG=100 LINES=0 CATALOGS=1 FLOOR=10",
        "avg 100, lines ≤ 1 KiB, catalogs|AVG=100 LINES=1K CATALOGS=1 FLOOR=10",
        "avg 100, lines ≤ 4 KiB, catalogs|AVG=100 LINES=4K CATALOGS=1 FLOOR=10",
        "avg 100, lines of any size, catalogs|AVG=100 LINES=any CATALOGS=1 FLOOR=10",
    ])).split(";") if r.strip()]
FLOORS = sorted(float(x) for x in os.environ.get("FLOORS", "5 10").split())
JOBS = int(os.environ.get("JOBS", "2"))
# REUSE_RUNS=1: reuse the runs of the same settings even when the binaries
# were rebuilt since (regenerating the document after a change that does
# not alter the results, e.g. formatting); the runs record which binaries.
REUSE_RUNS = os.environ.get("REUSE_RUNS") == "1"
DEFAULTS = os.environ.get("DEFAULTS", "avg 100, lines of any size, catalogs|10").split("|")
OUT = os.environ.get("OUT", "docs/quality.md")
# BINARY_TRUTH=lines: binary pairs measured by the line truth of before
# (newline-separated pieces), for comparison; default bytes (byte LCS).
BINARY_TRUTH = os.environ.get("BINARY_TRUTH", "bytes")
THRESHOLDS = [30, 50, 70, 90]
KIND_T = [30, 50, 70]
ROOT = os.getcwd()
BIN = os.path.join(ROOT, "target", "release")
BASE_STAGES = ["chunks.tsv", "sorted.tsv", "partition.tsv", "bins.tsv"]
FLOOR_STAGES = ["pairs.tsv", "verified.tsv"]
STAGES = BASE_STAGES + FLOOR_STAGES
LINKED = ["files.tsv", "chunks.tsv", "sorted.tsv", "partition.tsv", "bins.tsv", "plan.tsv"]
VENV = os.path.join(QDIR, "venv")
KINDS = ["text ≥ 1 KiB", "text 256 B–1 KiB", "text < 256 B", "catalogs, same locale",
         "catalogs, two locales", "compiled catalogs (.mo)", "binary"]
# Compiled catalogs are text too: fsim and the truth read their messages.
TEXT_KINDS = KINDS[:6]
CATALOG_KINDS = KINDS[3:5]
LOCALE_RE = re.compile(r"/locale/[^/]+/LC_MESSAGES/")
# GNU's layout: one catalog per locale in a po/ folder (po/de.po), the
# template beside them (po/bash.pot).
PO_DIR_RE = re.compile(r"(^|/)po/[^/]+\.pot?$")


def is_catalog_path(p):
    """A translation catalog of either layout: Django's
    locale/LL/LC_MESSAGES/D.po or GNU's po/LL.po (and its po/D.pot)."""
    return (p.endswith(".po") and LOCALE_RE.search(p) is not None) or PO_DIR_RE.search(p) is not None


def catalog_domain(rel):
    """The catalogs of one domain share this key, whatever their locale:
    the path with the locale folder starred (Django) or the po/ folder
    itself (GNU)."""
    if LOCALE_RE.search(rel):
        return LOCALE_RE.sub("/locale/*/", rel)
    return os.path.dirname(rel) + "/*.po"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def fmt_floor(f):
    return f"{f:g}"


def slug(label):
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")


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


def header_fields(path):
    """The KEY=VALUE fields of a record file's header line."""
    head = next(record_lines(path), "")
    return dict(x.split("=", 1) for x in head.rstrip("\n").split("\t")[1:] if "=" in x)


def trailer(path, key):
    if compressed(path):
        last = ""
        for line in record_lines(path):
            last = line
        last = last.rstrip("\n")
    else:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 4096))
            last = fh.read().decode().rstrip("\n").split("\n")[-1]
    for f in last.split("\t"):
        if f.startswith(key + "="):
            return int(f.split("=", 1)[1])
    return None


def timed_make(target, work, makevars, rfile, repo=CORPUS):
    """make TARGET timed; KEEP=1 keeps the records a later stage consumed
    (their trailers are counted, and each floor's run links them)."""
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", rfile, "make", "-s", "--no-print-directory",
           target, f"REPO={repo}", f"WORK={work}", f"JOBS={JOBS}", f"BIN={BIN}", "KEEP=1"] + makevars
    subprocess.run(cmd, check=True)
    e, m = open(rfile).read().split()[-2:]
    return {"s": float(e), "rss_kb": int(m)}


def bin_stamp():
    return max(int(os.path.getmtime(os.path.join(BIN, f))) for f in os.listdir(BIN)
               if f.startswith("fsim-") and not f.endswith(".d"))


# ---------------------------------------------------------------- fsim runs

def run_fsim(label, makevars):
    """The Makefile's stages one target at a time (so each is timed): once up
    to bins.tsv, then pairs.tsv and verified.tsv once per floor in a
    sub-folder holding hard links of the shared files. A previous run with
    the same parameters and binaries is reused."""
    work = os.path.join(QDIR, "fsim-" + slug(label))
    mv = makevars.split()
    floors = [float(v.split("=", 1)[1]) for v in mv if v.startswith("FLOOR=")]
    mv = [v for v in mv if not v.startswith("FLOOR=")]
    floors = floors or FLOORS
    params = {"vars": mv, "floors": floors, "jobs": JOBS, "corpus": sorted(os.listdir(CORPUS)),
              "bin": bin_stamp()}
    pfile, tfile = os.path.join(work, "params.json"), os.path.join(work, "times.json")
    if os.path.exists(tfile) and os.path.exists(pfile):
        old = json.load(open(pfile))
        if REUSE_RUNS:
            old["bin"] = params["bin"]
        if old == params:
            return work, floors, json.load(open(tfile))
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    json.dump(params, open(pfile, "w"))
    times = {"base": {}}
    rfile = os.path.join(work, ".time")
    for st in BASE_STAGES:
        times["base"][st] = timed_make(os.path.join(work, st), work, mv, rfile)
        log(f"  {label}: {st} {times['base'][st]['s']} s, {times['base'][st]['rss_kb'] // 1024} MB")
    for fl in floors:
        fdir = os.path.join(work, f"floor-{fmt_floor(fl)}")
        os.makedirs(fdir)
        for f in LINKED:
            if os.path.exists(os.path.join(work, f)):
                os.link(os.path.join(work, f), os.path.join(fdir, f))
        t = {}
        for st in FLOOR_STAGES:
            # MIN_PERCENT=0: fsim-verify keeps every pair (T = 30 of the larger
            # file needs pairs under the report's default 50 % of the smaller)
            t[st] = timed_make(os.path.join(fdir, st), fdir, mv + [f"FLOOR={fmt_floor(fl)}", "MIN_PERCENT=0"],
                               rfile)
            log(f"  {label} floor {fmt_floor(fl)}: {st} {t[st]['s']} s, {t[st]['rss_kb'] // 1024} MB")
        times[fmt_floor(fl)] = t
    json.dump(times, open(tfile, "w"))
    return work, floors, times


def read_files(work):
    """id -> (path, hash, size, type) of the corpus's files, and the ids of
    the archive members fsim read besides (`ARCHIVE!/MEMBER`, view `…!N`:
    an .egg or .whl is a zip): a member is no file of the corpus, so it has
    no truth, and its pairs are left out (counted in the document)."""
    ids, members = {}, set()
    with open(os.path.join(work, "files.tsv"), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            if "!" in f[5]:
                members.add(int(f[0]))
                continue
            ids[int(f[0])] = (unescape(f[-1]), f[3], int(f[1]), f[4])  # path (last), hash, size, type
    return ids, members


def corpus_pairs(path, files, members, key):
    """The verified pairs of two files of the corpus, by `key` (of paths),
    and how many pairs had an archive member (left out)."""
    kp, with_member = {}, 0
    for (a, b), (lb, ex) in read_pairs(path).items():
        if a in members or b in members:
            with_member += 1
            continue
        k = key(files[a][0], files[b][0])
        if k is not None:
            kp[k] = (lb, ex, a, b)
    return kp, with_member


def read_pairs(path):
    """(id a, id b) -> (common lower bound, exact or None)"""
    out = {}
    for line in record_lines(path):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        ex = int(f[6]) if len(f) >= 8 and f[7] == "exact" else (max(int(f[4]), int(f[6])) if len(f) >= 8 else None)
        out[(int(f[0]), int(f[1]))] = (int(f[4]), ex)
    return out


def chunk_bags(work, want):
    """file id -> Counter of (hash, length) for the wanted file ids."""
    bags = defaultdict(Counter)
    for line in record_lines(os.path.join(work, "chunks.tsv")):
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
    binary = set()
    info = truth.content_classes(CORPUS, binary, os.path.join(QDIR, "mo-views"))  # path -> (md5, size)
    classes = defaultdict(list)
    for p, (h, _s) in info.items():
        classes[h].append(p)
    rep = {h: min(ps, key=os.fsencode) for h, ps in classes.items()}
    size_of = {h: info[p][1] for h, p in rep.items()}
    n_files, n_bytes = len(info), sum(s for _, s in info.values())
    ident_sets = {h: ps for h, ps in classes.items() if len(ps) > 1 and size_of[h] > 0}

    def release_rel(p):
        """(project, path inside the release)"""
        top, rest = os.path.relpath(p, CORPUS).split(os.sep, 1)
        return top.rsplit("-", 1)[0], rest

    proj_of = {h: release_rel(p)[0] for h, p in rep.items()}
    rels = {h: {release_rel(p) for p in ps} for h, ps in classes.items()}
    catalog = {h for h, ps in classes.items() if all(is_catalog_path(p) for p in ps)}
    projects = sorted(set(proj_of.values()))

    def kind(k):
        a, b = k
        if a in binary or b in binary:
            return "binary"
        if a.startswith("mo:") or b.startswith("mo:"):
            return "compiled catalogs (.mo)"
        if a in catalog and b in catalog:
            return "catalogs, same locale" if rels[a] & rels[b] else "catalogs, two locales"
        big = max(size_of[a], size_of[b])
        return "text ≥ 1 KiB" if big >= 1024 else "text 256 B–1 KiB" if big >= 256 else "text < 256 B"

    def project(k):
        a, b = k
        return proj_of[a] if proj_of[a] == proj_of[b] else "across projects"

    def key(pa, pb):
        ha, hb = info[pa][0], info[pb][0]
        if ha == hb or size_of[ha] == 0 or size_of[hb] == 0:
            return None
        return (ha, hb) if ha < hb else (hb, ha)

    # fsim runs
    runs = {}      # label -> run
    settings = []  # (label, floor) in order
    for label, mvars in RUNS:
        log(f"fsim {label}")
        work, floors, times = run_fsim(label, mvars)
        files, members = read_files(work)
        fsim_ident = defaultdict(list)
        types = Counter()
        for _i, (p, ch, s, ty) in files.items():
            types[ty] += 1
            if s > 0:
                fsim_ident[ch].append(p)
        r = {"work": work, "vars": mvars, "times": times, "files": files, "floors": floors, "pairs": {},
             "path_id": {p: i for i, (p, _, _, _) in files.items()},
             "records": trailer(os.path.join(work, "chunks.tsv"), "records"),
             "kept": trailer(os.path.join(work, "partition.tsv"), "records"), "types": types,
             "ident_ok": sorted(sorted(v) for v in fsim_ident.values() if len(v) > 1)
             == sorted(sorted(v) for v in ident_sets.values())}
        r["members"], r["member_pairs"] = len(members), 0
        for fl in floors:
            kp, n = corpus_pairs(os.path.join(work, f"floor-{fmt_floor(fl)}", "verified.tsv"), files, members,
                                 key)
            r["pairs"][fl] = kp
            r["member_pairs"] = max(r["member_pairs"], n)
            settings.append((label, fl))
        runs[label] = r

    def cost(label, fl):
        t = runs[label]["times"]
        st = list(t["base"].values()) + list(t[fmt_floor(fl)].values())
        return sum(x["s"] for x in st), max(x["rss_kb"] for x in st) // 1024

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
        for kp in r["pairs"].values():
            pool |= set(kp)
    tools_pool = set(pool)

    def pairs_within(groups):
        out = set()
        for hs in groups.values():
            hs = sorted(h for h in hs if size_of[h])
            for i in range(len(hs)):
                for j in range(i + 1, len(hs)):
                    out.add((hs[i], hs[j]))
        return out

    # Pairs independent of every tool: the same relative path in two
    # releases, and every two catalogs of one domain (any locales, any
    # releases).
    by_rel, by_domain = defaultdict(set), defaultdict(set)
    for p, (h, _) in info.items():
        pr, rel = release_rel(p)
        by_rel[(pr, rel)].add(h)
        if h in catalog:
            by_domain[(pr, catalog_domain(rel))].add(h)
    samepath = pairs_within(by_rel)
    domain_pairs = pairs_within(by_domain)
    pool |= samepath | domain_pairs
    log(f"truth: {len(pool):,} pooled candidate pairs")
    t0 = time.time()
    cache, tstats = truth.exact([(rep[a], rep[b]) for a, b in sorted(pool)], info,
                                os.path.join(QDIR, "truth-cache.tsv"), JOBS, log,
                                binary, os.path.join(QDIR, "truth-bytes-cache.tsv")
                                if BINARY_TRUTH == "bytes" else None)
    t_truth = time.time() - t0
    sim = {}
    for k in pool:
        v = cache.get(k)
        sim[k] = 100.0 * v / max(size_of[k[0]], size_of[k[1]]) if v is not None else 0.0
    pos = {T: {k for k, s in sim.items() if s >= T} for T in THRESHOLDS}
    def is_bin(k):
        return k[0] in binary or k[1] in binary

    def ratio_low(k):
        return min(size_of[k[0]], size_of[k[1]]) < truth.RATIO_FLOOR * max(size_of[k[0]], size_of[k[1]])

    n_diffed = sum(1 for k in pool if k in cache and not is_bin(k))
    ratio_skipped = sum(1 for k in pool if ratio_low(k) and not is_bin(k))
    bound_skipped = sum(1 for k in pool if not is_bin(k)) - n_diffed - ratio_skipped
    n_bin = sum(1 for k in pool if is_bin(k))
    n_bin_lcs = sum(1 for k in pool if k in cache and is_bin(k))
    bin_ratio_skipped = sum(1 for k in pool if ratio_low(k) and is_bin(k))
    bin_bound_skipped = n_bin - n_bin_lcs - bin_ratio_skipped
    only_indep = {T: len(pos[T] - tools_pool) for T in THRESHOLDS}
    kind_of = {k: kind(k) for k in pool}
    proj = {k: project(k) for k in pool}
    kind_pos = {T: Counter(kind_of[k] for k in pos[T]) for T in THRESHOLDS}
    kind_pool = Counter(kind_of.values())

    def larger(k):
        return max(size_of[k[0]], size_of[k[1]])

    def smaller(k):
        return min(size_of[k[0]], size_of[k[1]])

    def measure(pred_at, kinds=None, prj=None):
        """{T: (p, r, f, n)} of the predictions restricted to kinds / project."""
        res = {}
        for T in THRESHOLDS:
            pred, ps = pred_at(T), pos[T]
            if kinds is not None:
                pred = {k for k in pred if kind_of.get(k, kind(k)) in kinds}
                ps = {k for k in ps if kind_of[k] in kinds}
            if prj is not None:
                pred = {k for k in pred if proj.get(k, project(k)) == prj}
                ps = {k for k in ps if proj[k] == prj}
            res[T] = prf(pred, ps) + (len(pred),)
        return res

    def verified_at(kp):
        return lambda T: {k for k, (lb, ex, _, _) in kp.items() if 100.0 * ex >= T * larger(k)}

    # settings
    results = []  # (name, label, floor, {T: (p, r, f, npred)}, {kind: res})
    for label, fl in settings:
        kp = runs[label]["pairs"][fl]
        res = measure(verified_at(kp))
        per_kind = {kd: measure(verified_at(kp), {kd}) for kd in KINDS}
        per_kind["text (all kinds)"] = measure(verified_at(kp), set(TEXT_KINDS))
        results.append((f"fsim {label}, floor {fmt_floor(fl)}, verified", label, fl, res, per_kind))
    chunk_rows = []
    for label, mvars in RUNS:
        if "LINES=0" not in mvars.split() or "CATALOGS=0" not in mvars.split():
            continue  # the line source's pairs carry no chunk figure
        fl = runs[label]["floors"][0]
        kp = runs[label]["pairs"][fl]
        chunk_rows.append((f"fsim {label}, chunks only (floor {fmt_floor(fl)})", label, fl,
                           measure(lambda T: {k for k, (lb, ex, _, _) in kp.items() if 100.0 * lb >= T * larger(k)}),  # noqa: B023 (called at once)
                           None))
    peer_rows = []
    peer_rows.append(("datasketch LSH 0.5, est. Jaccard ≥ T", None, None,
                      measure(lambda T: {k for k, j in peer.items() if j >= T / 100.0}),
                      {kd: measure(lambda T: {k for k, j in peer.items() if j >= T / 100.0}, {kd})
                       for kd in KINDS}))
    res, cuts = {}, {}
    for T in THRESHOLDS:
        best = None
        for c in [x / 100 for x in range(30, 100, 5)]:
            pred = {k for k, j in peer.items() if j >= c}
            m = prf(pred, pos[T]) + (len(pred),)
            if best is None or m[2] > best[2]:
                best, cuts[T] = m, c
        res[T] = best
    peer_rows.append(("datasketch, best Jaccard cut per T (oracle)", None, None, res, None))

    # `make report` with the Makefile's defaults as committed, in a clean
    # folder, timed as a whole; and with chunks only (no line source)
    def make_report(name, extra, repo=CORPUS):
        log(f"make report: {name}")
        dwork = os.path.join(QDIR, "report-" + slug(name))
        subprocess.run(["rm", "-rf", dwork], check=True)
        # The runs before wrote gigabytes: flushed first, so that this
        # run does not wait for their writeback.
        subprocess.run(["sync"], check=True)
        rfile = os.path.join(QDIR, ".report-time")
        tm = timed_make("report", dwork, extra.split(), rfile, repo)
        files, members = read_files(dwork)
        if repo != CORPUS:  # a project's tree of hard links: its paths in the corpus
            files = {i: (os.path.join(CORPUS, os.path.relpath(p, repo)),) + tuple(rest)
                     for i, (p, *rest) in files.items()}
        hdr = header_fields(os.path.join(dwork, "pairs.tsv"))
        vh = header_fields(os.path.join(dwork, "verified.tsv"))
        vmp = float(vh.get("verify-min-percent", 0))
        dp, _ = corpus_pairs(os.path.join(dwork, "verified.tsv"), files, members, key)
        return {"name": name, "extra": extra, "hdr": hdr, "wall_s": tm["s"], "rss_kb": tm["rss_kb"],
                "pairs": dp, "outside_pool": sum(1 for k in dp if k not in pool),
                "records": trailer(os.path.join(dwork, "chunks.tsv"), "records"),
                "res": measure(verified_at(dp)), "vmp": vmp,
                "files": len(files), "bytes": sum(f[2] for f in files.values())}
    reports = [make_report("defaults", "")]
    # The documented minimum of a link (docs/usage.md, *Tiny links*):
    # every link of the default report's tsv (which lists them all, large
    # clusters too) has at least MIN_BYTES bytes in common.
    dwork = os.path.join(QDIR, "report-defaults")
    subprocess.run(["make", "-s", "--no-print-directory", "report", f"REPO={CORPUS}", f"WORK={dwork}",
                    f"JOBS={JOBS}", f"BIN={BIN}", "FORMATS=tsv"], check=True, stdout=subprocess.DEVNULL)
    tiny = {"links": 0, "under": 0, "least": None}
    with open(os.path.join(dwork, "report.tsv"), encoding="utf-8") as fh:
        cols = fh.readline().rstrip("\n").split("\t")
        ci, bi = cols.index("cluster"), cols.index("bytes_in_common")
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if f[ci] in ("folders", "same-content", "note", "hard-links") or not f[ci].isdigit():
                continue
            b = int(f[bi])
            tiny["links"] += 1
            tiny["under"] += b < 32
            tiny["least"] = b if tiny["least"] is None else min(tiny["least"], b)
    dkp = runs[DEFAULTS[0]]["pairs"][float(DEFAULTS[1])]
    by_kind = {(prj, kd): measure(verified_at(dkp), set(TEXT_KINDS) if kd == "text" else
                                  None if kd == "all" else {kd}, prj)
               for prj in projects for kd in KINDS + ["text", "all"]}

    # binary pairs of the defaults split: compiled catalogs (.mo, both
    # files) and the other binary files
    def bin_sub(k):
        return "compiled catalogs (.mo)" if rep[k[0]].endswith(".mo") and rep[k[1]].endswith(".mo") \
            else "other binary"
    bin_split = {}
    for prj in projects:
        for sub in ["compiled catalogs (.mo)", "other binary"]:
            res = {}
            for T in KIND_T:
                pred = {k for k in verified_at(dkp)(T) if kind_of.get(k, kind(k)) == "binary" and bin_sub(k) == sub
                        and proj.get(k, project(k)) == prj}
                ps = {k for k in pos[T] if kind_of[k] == "binary" and bin_sub(k) == sub and proj[k] == prj}
                res[T] = prf(pred, ps) + (len(ps),)
            if any(res[T][3] for T in KIND_T):
                bin_split[(prj, sub)] = res
    # Hard cases that cut across the kinds, with the defaults: recall at
    # T = 30 / 50 / 70 of the pairs of each (target ≥ 0.97). *Long lines*:
    # either file has a line over truth.LONG_LINE bytes (minified code and
    # CSS, one-line JSON such as source maps, one-line SVG). *Reformatted
    # code*: a Python module of Django 3.2 and the same module of a later
    # release (Django ran the black formatter on its code in 4.0).
    long_of = {}

    def has_long(h):
        if h not in long_of:
            long_of[h] = h not in binary and not h.startswith("mo:") and \
                truth.has_long_line(open(rep[h], "rb").read())
        return long_of[h]

    def django_line(h):
        """{"3", "later"}: the Django release lines a content is in."""
        tops = {os.path.relpath(p, CORPUS).split(os.sep)[0] for p in classes[h]}
        return {"3" if t.startswith("django-3.") else "later" for t in tops if t.startswith("django-")}

    def reformatted(k):
        a, b = k
        same_module = any(xa == xb and xa.endswith(".py") and pa == pb == "django"
                          for pa, xa in rels[a] for pb, xb in rels[b])
        return same_module and (("3" in django_line(a) and "later" in django_line(b))
                                or ("3" in django_line(b) and "later" in django_line(a)))

    hard_cases = {"long lines (minified, one-line JSON, SVG)": lambda k: kind_of.get(k, kind(k)) != "binary" and (has_long(k[0]) or has_long(k[1])),
                  "reformatted code (Django 3.2 → later, black)": reformatted}
    hard = {}
    for name, test in hard_cases.items():
        res = {}
        for T in KIND_T:
            ps = {k for k in pos[T] if test(k)}
            pred = {k for k in verified_at(dkp)(T) if k in pool and test(k)}
            res[T] = prf(pred, ps) + (len(ps),)
        hard[name] = res
    for spec in [s for s in os.environ.get(
            "REPORT_BEFORE", "chunks only (no line source)|LINES=0 CATALOGS=0").split(";") if s.strip()]:
        name, extra = spec.split("|", 1)
        reports.append(make_report(name, extra))
    # Each project alone (its releases as hard links under
    # QDIR/projects/NAME): the default run's time and peak RSS beside its
    # F1 on that project's text pairs, at the thresholds it keeps.
    project_reports = {}
    for prj in projects:
        ptree = os.path.join(QDIR, "projects", prj)
        subprocess.run(["rm", "-rf", ptree], check=True)
        os.makedirs(ptree)
        for top in sorted(os.listdir(CORPUS)):
            if top.rsplit("-", 1)[0] == prj:
                subprocess.run(["cp", "-al", os.path.join(CORPUS, top), ptree], check=True)
        rp = make_report(f"defaults, {prj} alone", "", ptree)
        dp = rp["pairs"]
        rp["text"] = measure(verified_at(dp), set(TEXT_KINDS), prj)
        rp["catalogs"] = measure(verified_at(dp), set(CATALOG_KINDS), prj)
        project_reports[prj] = rp

    # misses at T = 50 per kind, per setting
    T = 50
    misses = {}
    share = {}
    recovered = {}
    for label, _ in RUNS:
        r = runs[label]
        lost_any = set()
        for fl in r["floors"]:
            lost_any |= {k for k in pos[T] if k not in r["pairs"][fl]}
        want = set()
        for a, b in lost_any:
            want.add(r["path_id"][rep[a]]); want.add(r["path_id"][rep[b]])
        bags = chunk_bags(r["work"], want)
        lbs = {k: lower_bound(bags[r["path_id"][rep[k[0]]]], bags[r["path_id"][rep[k[1]]]]) for k in lost_any}
        base = r["pairs"][r["floors"][0]]
        nochunk = sum(1 for k in pos[T] if k not in base and lbs[k] == 0)
        share[label] = (len(pos[T]) - nochunk, len(pos[T]))
        ratios = [base[k][0] / cache[k] for k in pos[T] if k in base and cache.get(k)]
        recovered[label] = statistics.median(ratios) if ratios else 0.0
        for fl in r["floors"]:
            kp = r["pairs"][fl]
            c = defaultdict(Counter)
            for k in pos[T]:
                kd = kind_of[k]
                if k in kp:
                    lb, ex, _, _ = kp[k]
                    if 100.0 * ex < T * larger(k):
                        c[kd]["fsim-verify figure below T"] += 1
                else:
                    lb = lbs[k]
                    if lb == 0:
                        c[kd]["share no chunk"] += 1
                    elif 100.0 * lb < fl * smaller(k):
                        c[kd]["chunk bound below the floor"] += 1
                    else:
                        c[kd]["other (ubiquitous chunks dropped)"] += 1
            misses[(label, fl)] = c

    # cross-check: fsim-verify's exact figure vs GNU diff, text pairs
    agree = {}
    diffs = []
    for label, _ in RUNS:
        kp = runs[label]["pairs"][runs[label]["floors"][0]]
        n = same = 0
        for k, (_lb, ex, _, _) in kp.items():
            if k in cache and ex is not None and kind_of[k] != "binary":
                n += 1
                same += ex == cache[k]
                diffs.append(abs(ex - cache[k]) / larger(k))
        agree[label] = (same, n)

    # fsim-verify's byte figure of binary pairs (chain of identical byte
    # runs) is a lower bound of the byte LCS: any pair above it is a bug in
    # fsim-verify, listed by path.
    bin_check = {}
    above = {}
    for label, _ in RUNS:
        fl = runs[label]["floors"][0]
        kp = runs[label]["pairs"][fl]
        files = runs[label]["files"]
        n = eq = 0
        ratios = []
        for k, (_lb, ex, a, b) in kp.items():
            if kind_of[k] != "binary" or ex is None or k not in cache or BINARY_TRUTH != "bytes":
                continue
            n += 1
            eq += ex == cache[k]
            ratios.append(ex / cache[k] if cache[k] else 1.0)
            if ex > cache[k]:
                above[k] = (files[a][0], files[b][0], ex, cache[k], larger(k))
        bin_check[label] = (n, eq, statistics.median(ratios) if ratios else 0.0,
                            sum(1 for x in ratios if x >= 0.99))
    for _k, (pa, pb, ex, lc, big) in sorted(above.items()):
        log(f"fsim-verify ABOVE the byte LCS: {pa} {pb}: fsim {ex}, byte LCS {lc}, larger file {big}")

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
        "npm": out(["npm", "--version"]),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}",
    }


def trailer_count(rp):
    """The candidates (pairs.tsv's records) of a make report run."""
    return trailer(os.path.join(QDIR, "report-" + slug(rp["name"]), "pairs.tsv"), "pairs") or 0


def write_doc(v):
    L = []
    w = L.append
    runs, results = v["runs"], v["results"]
    sha = open(os.path.join(QDIR, "corpus.sha256")).read().strip().split("\n")
    kind_pool, kind_pos = v["kind_pool"], v["kind_pos"]
    w("# fsim quality: precision and recall against exact similarity\n")
    w("Generated by `make quality` (scripts/quality/); do not edit by hand. "
      "Timings are wall-clock on a shared 2-CPU machine (other builds may run beside): "
      "read them as ratios.\n")
    w("## Corpus\n")
    w(f"Four projects from three ecosystems, several releases each, unpacked side by side under `{CORPUS}/`:\n")
    w("* **Django** (Python): four sdists from PyPI (`pip download --no-deps --no-binary :all: Django==V`): "
      "code, tests, the reST documentation, ~100 translation catalogs per app "
      "(`locale/*/LC_MESSAGES/*.po`) and their compiled `.mo`, images, fonts;\n"
      "* **moment** (JavaScript): four npm tarballs (`npm pack moment@V`): code, ~130 locale modules in "
      "several builds (`src/locale`, `locale`, `dist/locale`), TypeScript declarations, minified bundles;\n"
      "* **Bootstrap** (CSS and JavaScript): four npm tarballs (`npm pack bootstrap@V`): SCSS and JavaScript "
      "sources and what they build into, minified CSS and JavaScript of one line each and their source maps "
      "(one-line JSON of up to ~700 KB);\n"
      "* **bash** (C, Debian): the upstream tarballs of four Debian releases' source packages "
      "(`bash_V.orig.tar.*` from deb.debian.org's pool, SHA-256 checked against Debian's Sources index): "
      "code, Texinfo, man pages, HTML, PostScript and PDF manuals, tests, and ~40 translation catalogs "
      "(`po/*.po`, 120-390 KB each, as large as a documentation project's) with their "
      "compiled `.gmo`.\n")
    w("Everything the archives hold is kept: binary files, catalogs, small files (only symbolic links are "
      "removed).\n")
    w("```")
    for s in sha:
        w(s)
    w("```\n")
    first = runs[RUNS[0][0]]
    w(f"**{v['n_files']:,} files, {v['n_bytes'] / 1e6:.1f} MB**; {len(v['rep']):,} distinct contents "
      f"({len(v['binary']):,} binary: holding a NUL byte; {len(v['catalog']):,} catalogs); "
      f"{len(v['ident_sets']):,} identical sets holding {sum(len(p) for p in v['ident_sets'].values()):,} files. "
      f"fsim's identical sets (from its content hashes) equal hashlib's: "
      f"{', '.join(f'{a}: ' + ('yes' if r['ident_ok'] else 'NO') for a, r in runs.items())}. "
      f"fsim's file types ({RUNS[0][0]}): {dict(first['types'])}. "
      f"fsim also reads the members of archives (docs/documents.md): {first['members']:,} here, in "
      f"{first['member_pairs']:,} verified pairs at the lowest floor; a member is no file of the corpus and "
      f"has no truth, so those pairs are left out.\n")
    w("## Ground truth\n")
    w("Similarity of two text files = bytes of a longest common subsequence of lines (GNU `diff -a --minimal`, "
      "bytes of the unchanged lines) ÷ the larger file's size; a line over 1 KiB counts as the pieces "
      "fsim-verify cuts it into (docs/formats.md, *Long lines*; the truth diffs one line per piece). Similarity of a **binary pair** (either file "
      "holds a NUL byte) = bytes of a longest common subsequence of **bytes** ÷ the larger file's size, "
      "computed exactly by `scripts/quality/bytelcs.c` (common prefix and suffix removed, then the "
      "bit-parallel LCS length of Allison–Dix / Hyyrö, O(n·m/64) word operations; built with `cc -O2` on "
      "first use). fsim-verify measures a binary pair as a chain of identical byte runs (docs/formats.md): "
      "its figure is a **lower bound** of the byte LCS (it lies between the LCS of its ~64-byte pieces and "
      "the byte LCS, as `scripts/check-runs.py` and the proptests check), and the byte LCS also counts the "
      "chance single bytes that two unrelated binary files share in order (about 12 % of 100 KB of random "
      "bytes; test_truth.py checks known answers). A pair is positive at threshold T when its similarity ≥ T %. Pairs of identical "
      "files are the identical sets above (not counted as pairs); empty files are left out.\n")
    w("Candidates are pooled from every setting below, from the peer, and, independently of any tool, from "
      f"every two releases of the same relative path ({len(v['samepath']):,} pairs) and every two catalogs "
      f"of one domain, whatever their locales and releases ({len(v['domain_pairs']):,} pairs; e.g. "
      "`django/contrib/admin/locale/*/LC_MESSAGES/django.po`), union **"
      f"{len(v['pool']):,} pairs**, {v['n_bin']:,} of them binary. Recall is measured on the pooled "
      "positives.\n")
    w("Keeping the truth feasible (the catalogs of ~100 locales make hundreds of thousands of pairs) with "
      "two exact upper bounds of the LCS, so that no pair is dropped on a guess: a pair is not diffed, and is "
      f"negative, when (1) the smaller file is under {truth.RATIO_FLOOR:.0%} of the larger "
      f"({v['ratio_skipped']:,} pairs), or (2) the **multiset line overlap** (Σ over distinct lines of min(count "
      "in a, count in b) × length: every line of a common subsequence is a line of both files, used at most "
      "as often as it occurs in each) is under 30 % of the larger file "
      f"({v['bound_skipped']:,} pairs). The other {v['n_diffed']:,} text pairs are diffed, {JOBS} diff "
      "processes at a time; figures and bounds are cached by the two content hashes "
      f"(`{QDIR}/truth-cache.tsv`), so a re-run only looks at new pairs (this run: "
      f"{v['tstats']['bounded']:,} bounded and {v['tstats']['diffed']:,} diffed). Binary pairs the same way "
      f"with bytes: (1) size ratio ({v['bin_ratio_skipped']:,} pairs), (2) the **multiset byte overlap** "
      f"(Σ over the 256 byte values of min(count in a, count in b)) under 30 % of the larger file "
      f"({v['bin_bound_skipped']:,} pairs), the byte LCS of the other {v['n_bin_lcs']:,}, {JOBS} helper "
      f"processes at a time, cached in `{QDIR}/truth-bytes-cache.tsv` (this run: "
      f"{v['tstats'].get('byte_bounded', 0):,} bounded and {v['tstats'].get('byte_lcs', 0):,} computed in "
      f"{v['tstats'].get('byte_s', 0.0):.0f} s). The whole truth took {v['t_truth']:.0f} s this run. "
      "Positives that no tool proposed (found only by the tool-independent pairs): "
      + ", ".join(f"T = {T}: {n:,}" for T, n in v["only_indep"].items()) + ".\n")
    w("| kind of pair | pooled | " + " | ".join(f"positives @{T}" for T in THRESHOLDS) + " |")
    w("|---|---|" + "---|" * len(THRESHOLDS))
    for kd in KINDS:
        w(f"| {kd} | {kind_pool[kd]:,} | " + " | ".join(f"{kind_pos[T][kd]:,}" for T in THRESHOLDS) + " |")
    w(f"| all | {len(v['pool']):,} | " + " | ".join(f"{len(v['pos'][T]):,}" for T in THRESHOLDS) + " |\n")
    w("Kinds: a pair is *binary* when either file holds a NUL byte; *catalogs* when both are translation catalogs, "
      "`.po` files in `locale/*/LC_MESSAGES/` (Django) or `.po`/`.pot` files in a `po/` folder (GNU), of the "
      "*same locale* when they share a path inside their releases, else of "
      "*two locales*; other pairs are text, by the larger file's size.\n")

    w("## F1 and cost per setting\n")
    w("`verified`: fsim-verify's exact figure ÷ the larger file ≥ T, over the candidates fsim-analyze kept at "
      "the floor (bytes of shared chunks ≥ floor % of the smaller file, `FLOOR`). Cost: the Makefile's stages "
      "for that setting (`make WORK/<stage> REPO=… AVG=… FLOOR=… JOBS=" + str(JOBS) + "`), seconds summed over "
      "the stages, and the largest peak RSS of one stage. `chunks only`: no verification, the report's chunk "
      "lower bound ≥ T % of the larger file. Peer: datasketch MinHash (128 permutations, word 5-shingles) + "
      "MinHashLSH at threshold 0.5; a pair is reported when its estimated Jaccard ≥ T/100; the oracle row "
      f"picks, per T, the Jaccard cut that maximises F1 against the truth (cuts {v['cuts']}).\n")
    w("| setting | make variables | " + " | ".join(f"F1 @{T}" for T in THRESHOLDS)
      + " | candidates | time s | peak RSS |")
    w("|---|---|" + "---|" * (len(THRESHOLDS) + 3))
    for name, label, fl, res, _ in results:
        s, m = v["cost"](label, fl)
        mv = " ".join(x for x in runs[label]["vars"].split() if not x.startswith("FLOOR="))
        w(f"| {name} | `{mv or '-'} FLOOR={fmt_floor(fl)}` | "
          + " | ".join(f"{res[T][2]:.3f}" for T in THRESHOLDS)
          + f" | {len(runs[label]['pairs'][fl]):,} | {s:.1f} | {m} MB |")
    for name, _label, _fl, res, _ in v["chunk_rows"]:
        w(f"| {name} | | " + " | ".join(f"{res[T][2]:.3f}" for T in THRESHOLDS) + " | | | |")
    ps = v["peer_stats"]
    for name, _, _, res, _ in v["peer_rows"]:
        w(f"| {name} | | " + " | ".join(f"{res[T][2]:.3f}" for T in THRESHOLDS)
          + f" | {ps['pairs']:,} | {ps['wall_s']:.1f} | {ps['rss_kb'] // 1024} MB |")
    w("")
    for T in KIND_T:
        w(f"F1 per kind of pair at T = {T} (positives: "
          + ", ".join(f"{kd} {kind_pos[T][kd]:,}" for kd in KINDS) + "):\n")
        w("| setting | " + " | ".join(KINDS) + " | text (all) | all: P / R |")
        w("|---|" + "---|" * (len(KINDS) + 2))
        for name, _label, _fl, res, pk in results + v["peer_rows"][:1]:
            w(f"| {name} | " + " | ".join(f"{pk[kd][T][2]:.3f}" for kd in KINDS)
              + (f" | {pk['text (all kinds)'][T][2]:.3f}" if "text (all kinds)" in pk else " | –")
              + f" | {res[T][0]:.3f} / {res[T][1]:.3f} |")
        w("")
    w("Precision / recall, all kinds (pairs reported):\n")
    w("| setting | " + " | ".join(f"P / R @{T}" for T in THRESHOLDS) + " |")
    w("|---|" + "---|" * len(THRESHOLDS))
    for name, _label, _fl, res, _ in results + v["chunk_rows"] + v["peer_rows"]:
        w(f"| {name} | " + " | ".join(f"{res[T][0]:.3f} / {res[T][1]:.3f} ({res[T][3]:,})" for T in THRESHOLDS) + " |")
    w("")

    w("## Cost per stage\n")
    w("Seconds (peak RSS) of each Makefile stage; the stages up to bins.tsv run once per setting, analysis "
      "and verification once per floor.\n")
    w("| setting | chunk records | kept records | " + " | ".join(s.split(".")[0] for s in BASE_STAGES)
      + " | " + " | ".join(f"pairs / verified @floor {fmt_floor(f)}" for f in FLOORS) + " |")
    w("|---|---|---|" + "---|" * (len(BASE_STAGES) + len(FLOORS)))
    for label, r in runs.items():
        t = r["times"]
        cells = []
        for f in FLOORS:
            tf = t.get(fmt_floor(f))
            cells.append(" / ".join(f"{tf[s]['s']:.1f} ({tf[s]['rss_kb'] // 1024} MB)" for s in FLOOR_STAGES)
                         if tf else "–")
        w(f"| {label} | {r['records']:,} | {r['kept']:,} | "
          + " | ".join(f"{t['base'][s]['s']:.1f} ({t['base'][s]['rss_kb'] // 1024} MB)" for s in BASE_STAGES)
          + " | " + " | ".join(cells) + " |")
    w(f"\nPeer (datasketch, one Python process): {ps['files']:,} distinct contents, {ps['pairs']:,} LSH "
      f"candidate pairs; signatures + index {ps['index_s']} s, queries {ps['query_s']} s, "
      f"{ps['wall_s']} s wall including start-up, peak RSS {ps['rss_kb'] // 1024} MB.\n")

    w("## `make report` and the targets\n")
    w("`make report REPO=" + CORPUS + " JOBS=" + str(JOBS) + " KEEP=1` (every record file kept, to count its records) in a clean folder, timed as a whole (every stage, "
      "reports txt and json). fsim-verify keeps only the pairs that can reach the report's `MIN_PERCENT` of the "
      "smaller file, so F1 is shown for T ≥ that threshold (a pair ≥ T % of the larger file is ≥ T % of the "
      "smaller).\n")
    w("| run | make variables | time s | peak RSS | chunk records | candidates | outside the pool | F1 @30 | F1 @50 | F1 @70 | F1 @90 |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for rp in v["reports"]:
        w(f"| {rp['name']} | `{rp['extra'] or '(none)'}` (avg {rp['hdr'].get('avg')}, floor "
          f"{rp['hdr'].get('min-percent')}) | {rp['wall_s']:.1f} | {rp['rss_kb'] // 1024} MB | {rp['records']:,} | "
          f"{len(rp['pairs']):,} | {rp['outside_pool']} | "
          + " | ".join(f"{rp['res'][T][2]:.3f}" if T >= rp["vmp"] else "–" for T in THRESHOLDS) + " |")
    w("")
    w(f"Targets, per project, text pairs (all kinds but binary), with the default settings (`AVG`, "
      f"`FLOOR`: the setting *fsim {DEFAULTS[0]}, floor {DEFAULTS[1]}* above, every pair verified): F1 ≥ 0.97 "
      "and precision ≥ 0.99 at T = 30, 50 and 70; recall ≥ 0.95 on text 256 B–1 KiB and on catalogs. "
      "P / R / F1:\n")
    for _rp in v["reports"][:1]:
        w("| project | kind | " + " | ".join(f"@{T}" for T in KIND_T) + " | target |")
        w("|---|---|" + "---|" * (len(KIND_T) + 1))
        for prj in v["projects"]:
            for kd in KINDS + ["text", "all"]:
                m = v["by_kind"][(prj, kd)]
                npos = sum(1 for T in KIND_T for k in v["pos"][T]
                           if v["proj"][k] == prj and (v["kind_of"][k] == kd or (kd == "text" and v["kind_of"][k] in TEXT_KINDS)))
                if npos == 0 and kd not in ("text", "all"):
                    continue
                if kd == "text":
                    ok = all(m[T][2] >= 0.97 and m[T][0] >= 0.99 for T in KIND_T)
                    tgt = ("F1 ≥ 0.97, P ≥ 0.99: " + ("**met**" if ok else "**NOT met**"))
                elif kd in CATALOG_KINDS or kd == "text 256 B–1 KiB":
                    ok = all(m[T][1] >= 0.95 for T in KIND_T)
                    tgt = "R ≥ 0.95: " + ("**met**" if ok else "**NOT met**")
                else:
                    tgt = ""
                name = {"text": "**text (all kinds)**", "all": "all kinds, binary too"}.get(kd, kd)
                w(f"| {prj} | {name} | "
                  + " | ".join(f"{m[T][0]:.3f} / {m[T][1]:.3f} / {m[T][2]:.3f}" for T in KIND_T) + f" | {tgt} |")
        w("")

    w("Each project alone: `make report REPO=" + os.path.join(QDIR, "projects", "NAME") + " JOBS=" + str(JOBS)
      + "` (its releases as hard links of the corpus's) in a clean folder, timed as a whole like the runs above; "
      "P / R / F1 of its text pairs and of its catalogs (both kinds) at the thresholds it keeps (its "
      "fsim-verify keeps the pairs that can reach the report's 50 % of the smaller file):\n")
    w("| project | files | MB | time s | peak RSS | candidates | text @50 | text @70 | catalogs @50 | catalogs @70 |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    for prj, rp in v["project_reports"].items():
        cell = lambda m, T: f"{m[T][0]:.3f} / {m[T][1]:.3f} / **{m[T][2]:.3f}**"
        w(f"| {prj} | {rp['files']:,} | {rp['bytes'] / 1e6:.1f} | {rp['wall_s']:.1f} | {rp['rss_kb'] // 1024} MB | "
          f"{trailer_count(rp):,} | {cell(rp['text'], 50)} | {cell(rp['text'], 70)} | "
          f"{cell(rp['catalogs'], 50)} | {cell(rp['catalogs'], 70)} |")
    w("")

    w("Binary pairs of the same setting, split into compiled catalogs (`.mo`, both files) and the other binary "
      "files (images, fonts, archives, ...), against the byte-LCS truth. P / R / F1 (positives):\n")
    w("| project | binary pairs | " + " | ".join(f"@{T}" for T in KIND_T) + " |")
    w("|---|---|" + "---|" * len(KIND_T))
    for (prj, sub), m in v["bin_split"].items():
        w(f"| {prj} | {sub} | " + " | ".join(f"{m[T][0]:.3f} / {m[T][1]:.3f} / {m[T][2]:.3f} ({m[T][3]:,})"
                                              for T in KIND_T) + " |")
    w("")

    t = v["tiny"]
    w(f"**Tiny links**: the default report's tsv lists {t['links']:,} links; the least bytes in common of one is "
      f"{t['least']:,}; {t['under']:,} are under the documented minimum of 32 bytes (`MIN_BYTES`, docs/usage.md, "
      "*Tiny links*; target: none).\n")
    w("**Hard cases** of the same setting (every project), across the kinds above: *long lines*, either file has "
      f"a line over {truth.LONG_LINE} bytes (minified JavaScript and CSS, one-line JSON such as source maps, "
      "one-line SVG; both fsim-verify and the truth compare such lines by the pieces of docs/formats.md, "
      "*Long lines*); *reformatted code*, a Python module of Django 3.2 and the same module of a later "
      "release (Django ran the black formatter over its code in 4.0). Target: recall ≥ 0.97 at T = 30, 50, "
      "70. P / R / F1 (positives):\n")
    w("| hard case | " + " | ".join(f"@{T}" for T in KIND_T) + " | target |")
    w("|---|" + "---|" * (len(KIND_T) + 1))
    for name, m in v["hard"].items():
        met = all(m[T][1] >= 0.97 for T in KIND_T)
        w(f"| {name} | " + " | ".join(f"{m[T][0]:.3f} / {m[T][1]:.3f} / {m[T][2]:.3f} ({m[T][3]:,})"
                                      for T in KIND_T) + f" | R ≥ 0.97: **{'met' if met else 'not met'}** |")
    w("")

    w("## Where the misses come from (T = 50)\n")
    w("Positives at T = 50 that a setting does not report, by kind and cause. *share no chunk*: the two files "
      "have no chunk hash in common; *below the floor*: shared chunks < floor % of the smaller file, so "
      "fsim-analyze does not keep the pair; *fsim-verify figure below T*: fsim-verify's figure differs from "
      "diff's near the threshold (binary files: fsim-verify's chain of byte runs is a lower bound of the "
      "byte LCS, which also counts chance bytes in common).\n")
    w("| setting | positives sharing ≥ 1 chunk | median chunk bound ÷ exact (found positives) |")
    w("|---|---|---|")
    for a in runs:
        s, n = v["share"][a]
        w(f"| {a} | {s:,} / {n:,} ({100.0 * s / max(n, 1):.1f} %) | {v['recovered'][a]:.2f} |")
    w("")
    w("| setting | " + " | ".join(KINDS) + " |")
    w("|---|" + "---|" * len(KINDS))
    for (a, fl), c in v["misses"].items():
        w(f"| {a}, floor {fmt_floor(fl)} | " + " | ".join(
            (f"{sum(c[kd].values()):,}: " + "; ".join(f"{x} {n:,}" for x, n in sorted(c[kd].items(), key=lambda t: (-t[1], t[0])))) if c[kd] else "0"
            for kd in KINDS) + " |")
    w("")
    w("fsim-verify's exact figure equals GNU diff's on "
      + ", ".join(f"{a}: {s:,} / {n:,}" for a, (s, n) in v["agree"].items())
      + " diffed text candidate pairs at the lowest floor (both maximise the number of common lines; ties "
      f"between equally long subsequences can differ in bytes); {sum(1 for x in v['diffs'] if x > 0.01):,} "
      f"figures differ by more than 1 % of the larger file, at most {100 * max(v['diffs'] or [0]):.1f} %: "
      "ties aside, a gap is a bug (both cut long lines into the same pieces).\n")
    above = v["above"]
    w("fsim-verify's byte figure of binary pairs against the byte LCS (lowest floor): "
      + ", ".join(f"{a}: {n:,} pairs, {eq:,} equal, {hi:,} within 1 %, median figure ÷ LCS {md:.3f}"
                  for a, (n, eq, md, hi) in v["bin_check"].items())
      + ". " + ("**Above the byte LCS (a bug in fsim-verify's byte measure): "
                + "; ".join(f"`{pa}` and `{pb}`: fsim {ex:,} B, byte LCS {lc:,} B" for pa, pb, ex, lc, _ in
                            above.values()) + ".**\n" if above else
                "No pair's figure is above its byte LCS (the figure is a lower bound, as documented).\n"))
    w(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "defaults.md")).read())
    # The documents corpus, measured by documents.py just before
    # (make quality) into its own section.
    docs_section = os.path.join(QDIR, "documents", "section.md")
    if os.path.exists(docs_section):
        w(open(docs_section, encoding="utf-8").read())
    w("## Reproduce\n")
    w("```sh\nmake quality                       # fetch (cached), run, rewrite docs/quality.md\n"
      "bash scripts/quality/fetch.sh      # the corpus alone\n"
      "make quality-documents             # the section Documents alone (scripts/quality/documents.py)\n"
      "QDIR=quality-work RUNS='avg 100|AVG=100' FLOORS='5 10' python3 scripts/quality/evaluate.py\n```\n")
    w("Versions:\n")
    for k, x in versions().items():
        w(f"* {k}: {x}")
    w("")
    with open(OUT, "w") as fo:
        fo.write("\n".join(L))


if __name__ == "__main__":
    main()
