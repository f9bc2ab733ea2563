#!/usr/bin/env python3
"""Ground truth for `make quality`, independent of fsim.

* Identical sets: files grouped by the MD5 of their whole content (hashlib).
* Exact similarity of a pair of distinct contents: the bytes of a longest
  common subsequence of lines, from GNU diff (`diff -a --minimal`, counting the
  bytes of the unchanged lines it prints with `--unchanged-line-format=%L`),
  divided by the larger file's size. Lines include their newline, as in
  fsim-verify; a last line without one differs from the same line with one.
* Long lines (over LONG_LINE bytes: one-line XML, minified code, single-line
  JSON) are cut into pieces exactly as fsim-verify cuts them (`pieces`, the
  rule of src/stages/verify/long_lines.rs; test_truth.py checks a sample
  cuts the same): a pair with such a line is diffed as one line per token
  (its MD5 and length), and the bytes of the common tokens are summed. The
  cache marks those figures `pieces` (bounds `pbound`), so a figure cached
  before the rule, of whole long lines, is not reused.
* Binary pairs (either file holds a NUL byte), when a byte cache is given:
  the bytes of a longest common subsequence of BYTES, divided by the larger
  file's size, exact, from bytelcs.c beside this script (common prefix and
  suffix removed, then the bit-parallel LCS length of Allison-Dix / Hyyro,
  O(n m / 64) word operations; compiled with `cc -O2` on first use, next to
  the cache). fsim-verify's byte measure of a binary pair (a chain of
  identical byte runs, docs/formats.md) is a lower bound of this figure.
  Without a byte cache binary pairs are compared like text (`-a`: bytes
  between newlines), as before.
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
  >= RATIO_FLOOR is exactly diff's. For binary pairs the second bound is
  the multiset overlap of bytes (sum over the 256 byte values of
  min(count in a, count in b)), an upper bound of the byte LCS for the same
  reason.
* Compiled gettext catalogs (the .mo magic number, either byte order) are
  compared as their messages, as fsim's content view reads them: the text
  GNU gettext's `msgunfmt --force-po --no-wrap` prints, without its blank
  lines, written once per content to MO_VIEWS (a folder beside the cache),
  sized and diffed like any text. Their cache keys are the raw contents'
  MD5s prefixed `mo:`, so a cache written when they were binary keeps its
  meaning.
* Text files that read as prose by fsim's rule (prose.reads_as_prose, the
  mirror of content::plaintext: licences, READMEs written as paragraphs)
  are compared as fsim's `prose` view, one sentence a line (prose.py),
  written beside the compiled catalogs' messages, keyed by the view's MD5
  prefixed `sentences:` (a change of the rules is a new key, never a stale
  figure).
* Stand-alone HTML documents by fsim's rule (htmltext.is_document, the
  mirror of content::html: a page that loads no site's style sheet or
  script and is no template) are compared as fsim's `html` view, their
  text a block a line cut into sentences, keyed by the view's MD5
  prefixed `html:`.
* Results (diff figures and bounds) are cached by content hashes in a TSV
  file, so re-runs only look at new pairs; the diffs run in JOBS processes.
  The byte figures of binary pairs have their own cache file (BYTES-CACHE),
  so a line cache written before them keeps its meaning.

usage: truth.py CORPUS PAIRS.tsv CACHE.tsv [BYTES-CACHE.tsv]
       (PAIRS: path_a<TAB>path_b lines) prints one line per pair: path_a,
       path_b, lcs bytes (or - if not diffed); with BYTES-CACHE, binary
       pairs in bytes.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from multiprocessing import Pool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htmltext  # noqa: E402
import prose  # noqa: E402

RATIO_FLOOR = 0.3
# fsim-verify's cutting of long lines (src/stages/verify/long_lines.rs).
LONG_LINE = 1024
MAX_PIECE = 256
LONG_LINES_RULE = "pieces-1024-sep-fnv8-4-max256"
_SEPARATOR = re.compile(rb"[ \t\r,;>{}]")
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


# path -> the file the truth reads for it (a compiled catalog's messages),
# filled by content_classes before any pool forks.
VIEWS = {}
MO_MAGICS = (b"\xde\x12\x04\x95", b"\x95\x04\x12\xde")


def mo_view(path, data, folder):
    """The messages of the compiled catalog at path, written to folder once
    per content (msgunfmt's text without blank lines): its path."""
    out = os.path.join(folder, hashlib.md5(data).hexdigest() + ".po")
    if not os.path.exists(out):
        r = subprocess.run(["msgunfmt", "--force-po", "--no-wrap", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError(f"msgunfmt {path}: {r.stderr.decode(errors='replace')}")
        text = b"".join(l for l in r.stdout.splitlines(keepends=True) if l != b"\n")
        with open(out + ".tmp", "wb") as fh:
            fh.write(text)
        os.replace(out + ".tmp", out)
    return out


def prose_view(data, folder, text=None):
    """A text that reads as prose as fsim's `prose` view cuts it, one
    sentence a line (prose.py, the mirror of content::plaintext and
    content::prose), written to folder once per content: its path. text:
    the words of data when they are not its bytes (an HTML document's,
    htmltext.py), cut the same way."""
    suffix = ".prose.txt" if text is None else ".html.txt"
    out = os.path.join(folder, hashlib.md5(data).hexdigest() + suffix)
    if not os.path.exists(out):
        with open(out + ".tmp", "wb") as fh:
            fh.write(prose.sentences(data if text is None else text))
        os.replace(out + ".tmp", out)
    return out


def content_classes(root, binary=None, mo_views=None):
    """path -> (md5 hex, size) for every file under root. binary: a set that
    receives the md5 of every content holding a NUL byte. mo_views: a folder
    for the messages of compiled catalogs (then their size is the messages'
    and their md5 is prefixed `mo:`)."""
    info = {}
    for p in walk(root):
        with open(p, "rb") as fh:
            data = fh.read()
        h = hashlib.md5(data).hexdigest()
        if mo_views is not None and data[:4] in MO_MAGICS:
            os.makedirs(mo_views, exist_ok=True)
            VIEWS[p] = mo_view(p, data, mo_views)
            with open(VIEWS[p], "rb") as fh:
                data = fh.read()
            h = "mo:" + h
        elif mo_views is not None and htmltext.is_document(data):
            os.makedirs(mo_views, exist_ok=True)
            VIEWS[p] = prose_view(data, mo_views, htmltext.text(htmltext.decoded(data)))
            with open(VIEWS[p], "rb") as fh:
                data = fh.read()
            h = "html:" + hashlib.md5(data).hexdigest()
        elif mo_views is not None and prose.reads_as_prose(data):
            os.makedirs(mo_views, exist_ok=True)
            VIEWS[p] = prose_view(data, mo_views)
            with open(VIEWS[p], "rb") as fh:
                data = fh.read()
            h = "sentences:" + hashlib.md5(data).hexdigest()
        info[p] = (h, len(data))
        if binary is not None and b"\0" in data:
            binary.add(h)
    return info


def _fnv1a(data):
    h = 0xcbf29ce484222325
    for c in data:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def pieces(line):
    """The tokens of one line (with its newline) as fsim-verify cuts it:
    the line itself when at most LONG_LINE bytes; else pieces ending after a
    separator (space, tab, CR, , ; > { }) whose FNV-1a 64 hash of the up to
    8 bytes of the line ending with it has its top two bits zero, or at
    MAX_PIECE bytes; the last piece ends with the line."""
    if len(line) <= LONG_LINE:
        return [line]
    out, start = [], 0
    for m in _SEPARATOR.finditer(line):
        i = m.start()
        while i + 1 - start > MAX_PIECE:
            out.append(line[start:start + MAX_PIECE])
            start += MAX_PIECE
        if i + 1 - start == MAX_PIECE or _fnv1a(line[max(0, i - 7):i + 1]) >> 62 == 0:
            out.append(line[start:i + 1])
            start = i + 1
    while len(line) - start > MAX_PIECE:
        out.append(line[start:start + MAX_PIECE])
        start += MAX_PIECE
    if start < len(line):
        out.append(line[start:])
    return out


def lines_of(data):
    """diff's lines: up to and including \\n (the last may lack it)."""
    parts = data.split(b"\n")
    out = [x + b"\n" for x in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def has_long_line(data):
    return any(len(x) > LONG_LINE for x in lines_of(data))


def tokens(data):
    """fsim-verify's tokens of a text: lines, long ones cut in pieces."""
    return [p for line in lines_of(data) for p in pieces(line)]


def _read(path):
    with open(VIEWS.get(path, path), "rb") as fh:
        return fh.read()


def lcs_bytes(pair):
    """The LCS bytes of (path a, path b[, has a long line]): diff's lines,
    or its tokens when either file has a long line (read to know, unless
    the third item says)."""
    a, b = (VIEWS.get(p, p) for p in pair[:2])
    long = pair[2] if len(pair) > 2 else None
    if long is None or long:
        da, db = _read(pair[0]), _read(pair[1])
        if has_long_line(da) or has_long_line(db):
            return _piece_lcs(da, db)
    r = subprocess.run(DIFF + [a, b], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"diff {a} {b}: {r.stderr.decode(errors='replace')}")
    return len(r.stdout)


def _piece_lcs(da, db):
    """diff's LCS of the tokens of two texts, one line per token (its MD5
    and length): the bytes of the common tokens."""
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for n, data in (("a", da), ("b", db)):
            p = os.path.join(d, n)
            with open(p, "wb") as fh:
                fh.write(b"".join(b"%s %d\n" % (hashlib.md5(t).hexdigest().encode(), len(t))
                                  for t in tokens(data)))
            paths.append(p)
        r = subprocess.run(DIFF + paths, capture_output=True, check=False)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"diff: {r.stderr.decode(errors='replace')}")
    return sum(int(x.split()[1]) for x in r.stdout.splitlines())


# Line counts of the contents whose pairs are bounded, filled before the
# pool forks (the workers inherit them).
_PROFILES = {}


def _profile(path):
    return Counter(tokens(_read(path)))


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


# The cache marks of figures and bounds of pairs with a long line.
PIECE_MARKS = ("pieces", "pbound")


def load_cache(path):
    """(md5a, md5b) -> ('diff' | 'bound' | 'pieces' | 'pbound' | 'lcs', bytes)"""
    cache = {}
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                f = line.split()
                cache[(f[0], f[1])] = (f[3] if len(f) > 3 else "diff", int(f[2]))
    return cache


def exact(pairs, info, cache_path, jobs=2, log=None, binary=None, bytes_cache_path=None):
    """pairs: iterable of (path_a, path_b). Returns ({(md5a, md5b) sorted:
    lcs bytes}, stats): the LCS of every pair whose size ratio and line
    overlap allow RATIO_FLOOR (pairs absent from the result are negatives);
    diffs and bounds what the cache lacks. With binary (md5s of the contents
    holding a NUL byte) and bytes_cache_path, a pair with a binary content
    gets the byte LCS instead (exact_bytes)."""
    pairs = list(pairs)
    byte_pairs = []
    if binary is not None and bytes_cache_path is not None:
        byte_pairs = [(a, b) for a, b in pairs if info[a][0] in binary or info[b][0] in binary]
        pairs = [(a, b) for a, b in pairs if not (info[a][0] in binary or info[b][0] in binary)]
    cache = load_cache(cache_path)
    longs = {}

    def long_pair(key, a, b):
        for h, p in zip(key, sorted((a, b), key=lambda x: info[x][0])):
            if h not in longs:
                longs[h] = has_long_line(_read(p))
        return longs[key[0]] or longs[key[1]]
    todo = _uncached(pairs, info, cache, long_pair)
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
                how = "pbound" if long_pair(k, *todo[k]) else "bound"
                cache[k] = (how, u)
                fo.write(f"{k[0]}\t{k[1]}\t{u}\t{how}\n")
                stats["bounded"] += 1
            else:
                need.append(k)
        if log:
            log(f"truth: {stats['bounded']:,} pairs under the bound, diffing {len(need):,}")
        with Pool(jobs) as pool:
            for k, v in zip(need, pool.imap(lcs_bytes, [(*todo[k], long_pair(k, *todo[k])) for k in need],
                                           chunksize=64)):
                how = "pieces" if long_pair(k, *todo[k]) else "diff"
                cache[k] = (how, v)
                fo.write(f"{k[0]}\t{k[1]}\t{v}\t{how}\n")
                stats["diffed"] += 1
    fo.close()
    out = {k: v for k, (how, v) in cache.items() if how in ("diff", "pieces")}
    if byte_pairs:
        bout, bstats = exact_bytes(byte_pairs, info, bytes_cache_path, jobs, log)
        out.update(bout)
        stats.update(bstats)
    return out, stats


# ------------------------------------------------------------ byte truth

BYTELCS_C = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bytelcs.c")


def bytelcs_exe(folder):
    """The byte-LCS helper, compiled from bytelcs.c into folder on first use
    (its name carries the source's hash, so an edited source is rebuilt)."""
    src = open(BYTELCS_C, "rb").read()
    exe = os.path.join(os.path.abspath(folder), "bytelcs-" + hashlib.md5(src).hexdigest()[:12])
    if not os.path.exists(exe):
        cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
        tmp = f"{exe}.{os.getpid()}.tmp"
        subprocess.run([cc, "-O2", "-o", tmp, BYTELCS_C], check=True)
        os.replace(tmp, exe)
    return exe


def byte_lcs_many(exe, pairs):
    """Byte LCS lengths of [(path_a, path_b), ...], one helper process."""
    if not pairs:
        return []
    inp = b"".join(os.fsencode(a) + b"\0" + os.fsencode(b) + b"\0" for a, b in pairs)
    r = subprocess.run([exe], input=inp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError(f"bytelcs: {r.stderr.decode(errors='replace')}")
    out = [int(x) for x in r.stdout.split()]
    if len(out) != len(pairs):
        raise RuntimeError(f"bytelcs: {len(out)} figures for {len(pairs)} pairs")
    return out


def _byte_job(job):
    exe, pairs = job
    return byte_lcs_many(exe, pairs)


def _uncached(pairs, info, cache, long_pair=None):
    """{(md5a, md5b) sorted: (path a, path b)} of the pairs of distinct
    contents whose size ratio allows RATIO_FLOOR and that `cache` lacks.
    long_pair(key, a, b): whether the pair has a long line, whose figure is
    cached only when marked `pieces` or `pbound`."""
    todo = {}
    for a, b in pairs:
        (ha, sa), (hb, sb) = info[a], info[b]
        if ha == hb or min(sa, sb) < RATIO_FLOOR * max(sa, sb):
            continue
        key = (ha, hb) if ha < hb else (hb, ha)
        cached = key in cache and (long_pair is None or not long_pair(key, a, b)
                                   or cache[key][0] in PIECE_MARKS)
        if not cached and key not in todo:
            todo[key] = (a, b) if ha < hb else (b, a)
    return todo


def _byte_profile(path):
    with open(path, "rb") as fh:
        return Counter(fh.read())


def exact_bytes(pairs, info, cache_path, jobs=2, log=None):
    """The byte truth: ({(md5a, md5b) sorted: byte LCS}, stats) for the pairs
    whose size ratio and byte-multiset overlap allow RATIO_FLOOR; the rest
    are negatives. Cached in cache_path (md5a, md5b, bytes, lcs | bound)."""
    cache = load_cache(cache_path)
    todo = _uncached(pairs, info, cache)
    stats = {"byte_bounded": 0, "byte_lcs": 0, "byte_s": 0.0}
    if todo:
        t0 = time.time()
        keys = sorted(todo)
        prof = {}
        need = []
        with open(cache_path, "a") as fo:
            for k in keys:
                for h, p in zip(k, todo[k]):
                    if h not in prof:
                        prof[h] = _byte_profile(p)
                ca, cb = prof[k[0]], prof[k[1]]
                u = sum(min(n, cb[c]) for c, n in ca.items())
                if u < RATIO_FLOOR * max(info[todo[k][0]][1], info[todo[k][1]][1]):
                    cache[k] = ("bound", u)
                    fo.write(f"{k[0]}\t{k[1]}\t{u}\tbound\n")
                    stats["byte_bounded"] += 1
                else:
                    need.append(k)
            prof.clear()
            if log:
                log(f"truth: {len(keys):,} binary pairs, {stats['byte_bounded']:,} under the byte-overlap "
                    f"bound, byte LCS of {len(need):,}")
            exe = bytelcs_exe(os.path.dirname(os.path.abspath(cache_path)))
            step = 32
            parts = [need[i:i + step] for i in range(0, len(need), step)]
            with Pool(jobs) as pool:
                for part, vals in zip(parts, pool.imap(_byte_job, [(exe, [todo[k] for k in p]) for p in parts])):
                    for k, v in zip(part, vals):
                        cache[k] = ("lcs", v)
                        fo.write(f"{k[0]}\t{k[1]}\t{v}\tlcs\n")
                        stats["byte_lcs"] += 1
        stats["byte_s"] = time.time() - t0
    return {k: v for k, (how, v) in cache.items() if how == "lcs"}, stats


def main():
    root, pairs_path, cache_path = sys.argv[1:4]
    bytes_cache = sys.argv[4] if len(sys.argv) > 4 else None
    binary = set()
    info = content_classes(root, binary)
    pairs = [tuple(l.rstrip("\n").split("\t")[:2]) for l in open(pairs_path) if l.strip()]
    cache, _ = exact(pairs, info, cache_path, binary=binary, bytes_cache_path=bytes_cache)
    for a, b in pairs:
        ha, hb = info[a][0], info[b][0]
        key = (ha, hb) if ha < hb else (hb, ha)
        print(f"{a}\t{b}\t{cache.get(key, '-')}")


if __name__ == "__main__":
    main()
