"""Markdown from the measurements (the data bench.py writes first):
docs/performance.md whole, or the one section a BENCH_ONLY run replaces in
it, or the record of the hard inputs (HARD_OUT)."""

from . import texts
from .measure import ratio


def s2(x):
    """Seconds (or any figure) to two decimals, as /usr/bin/time's %e."""
    return "-" if x is None else f"{x:.2f}"


def rate(n, wall, fmt):
    return fmt % (n / wall) if wall and wall > 0 else "-"


def yes(ok):
    return "yes" if ok else "NO"


def common(data):
    """The values every text takes: the run's date, machine and settings."""
    m, k = data["meta"], data["knobs"]
    return dict(date=m["date"], cores=m["cores"], mem=m["mem"], cpu=m["cpu"], commit=m["commit"],
                runs=k["runs"], jobs=k["jobs"], bp=k["bin_make"])


# -- whole default run on hard inputs --------------------------------------

def report_stage_name(st):
    """A stage's name in the tables; fsim-report with its formats."""
    n = st["stage"]
    if n != "fsim-report":
        return n
    a = st["args"]
    for i in range(len(a) - 1):
        if a[i] == "--format":
            n += " " + a[i + 1]
        if a[i] == "--also":
            n += " + " + a[i + 1].split("=", 1)[0]
    if n == "fsim-report" and "--print-settings" in a:
        n += " --print-settings"
    return n


def hard_section(data):
    d, c = data["sections"]["hard"], common(data)
    rows, cmds, stages = [], [], []
    for h in d["inputs"]:
        md5, total, nbytes = h["md5"]["wall"], h["total"], h["bytes"]
        peak = max((st["rss_kib"] for st in h["stages"]), default=0)
        (bigname, big), (rname, rbig) = h["biggest"], h["biggest_report"]
        rows.append(
            f"| {h['label']} | {h['files']} | {nbytes} | {s2(md5)} s | **{s2(total)} s** | **{ratio(total, md5)}×** "
            f"| {h['candidates']} | {h['links']} | {s2(h['verify_wall'])} s "
            f"| {rate(h['candidates'], h['verify_wall'], '%.0f')} pairs/s | {peak / 1024:.0f} MB "
            f"| {bigname}, {big} bytes ({ratio(big, nbytes)}× the tree): {yes(big <= nbytes)} | {rname}, {rbig} bytes |")
        cmds.append(f"| {h['label']} | `{c['bp']}/fsim-gen {h['gen']} {h['tree']}` | `{h['md5']['cmd']}` |")
        # fsim-reuse is make's wrapper around a stage: not a stage of its own.
        for st in h["stages"]:
            if st["stage"] != "fsim-reuse":
                stages.append(f"| {h['label']} | {report_stage_name(st)} | {st['wall']:.2f} s "
                              f"| {st['rss_kib'] / 1024:.0f} MB | {yes(st['rss_kib'] <= 1048576)} |")
    return texts.HARD.substitute(c, rows="\n".join(rows), commands="\n".join(cmds), stages="\n".join(stages))


def hard_file(data):
    """HARD_OUT: the hard inputs' section with a header of its own."""
    head = texts.HEADER.substitute(common(data), title="Performance on hard inputs")
    return head + hard_section(data)


# -- documents --------------------------------------------------------------

DOC_LABEL = "whole pipeline on documents, content views (make report)"


def documents_rows(data):
    """The two rows of the first table on documents, and the note after it."""
    d, c = data["sections"]["documents"], common(data)
    v, r, m = d["views"], d["raw"], d["md5"]
    rows = [f"| {DOC_LABEL} | `{v['cmd']}` | {s2(v['wall'])} s | {v['rss']} MB | `{r['cmd']}` | {s2(r['wall'])} s "
            f"| {r['rss']} MB | **{ratio(v['wall'], r['wall'])}** | ≤ 3 |",
            f"| {DOC_LABEL} | `{v['cmd']}` | {s2(v['wall'])} s | {v['rss']} MB | `{m['cmd']}` | {s2(m['wall'])} s "
            f"| {m['rss']} MB | **{ratio(v['wall'], m['wall'])}** |  |"]
    note = texts.DOC_NOTE.substitute(c, files=d["files"], bytes=d["bytes"], tree=d["tree"])
    return rows, note


# -- folder pairs -------------------------------------------------------------

def folders_section(data):
    d, c, k = data["sections"]["folders"], common(data), data["knobs"]
    mk, rm, rep, md5 = d["make"], d["rmlint"], d["report"], d["md5"]
    scale = [f"| {k['folders_files']} | {d['links']} | {m['format']} | {s2(m['wall'])} s "
             f"| {m['wall'] * 1e9 / d['links']:.0f} ns | {m['rss']} MB | {yes(m['rss'] <= 256)} |"
             for m in d["scale"]]
    f = d["found"]
    return texts.FOLDERS.substitute(
        c, cat_locales=k["cat_locales"], cat_releases=k["cat_releases"], files=d["files"], bytes=d["bytes"],
        nfolders=f["folders"], nfamilies=f["families"], first_a=f["a"], first_b=f["b"],
        first_percent=f["percent"], mk=mk["cmd"], kw=s2(mk["wall"]), kr=mk["rss"], rm=rm["cmd"],
        rw=s2(rm["wall"]), rr=rm["rss"], md5=md5["cmd"], mw=s2(md5["wall"]), mr=md5["rss"], rep=rep["cmd"],
        pw=s2(rep["wall"]), pr=rep["rss"], ratio_rmlint=ratio(mk["wall"], rm["wall"]),
        ratio_md5=ratio(mk["wall"], md5["wall"]), ratio_report=ratio(rep["wall"], md5["wall"]),
        folders_files=k["folders_files"], folders_releases=k["folders_releases"], scale_rows="\n".join(scale),
        folders_million=texts.FOLDERS_MILLION)


# -- whole default run on a real repository ---------------------------------

def source_section(data):
    d, c = data["sections"]["source"], common(data)
    rows = []
    for r in d["rows"]:
        mw, kw = r["md5"]["wall"], r["make"]["wall"]
        rows.append(f"| {r['label']} | {r['files']} | {r['bytes']} | {r['candidates']} | {s2(mw)} s "
                    f"| **{s2(kw)} s** | **{ratio(kw, mw)}×** | {r['target']} | {r['make']['rss']} MB |")
    rel = texts.RELEASES_TEXT.substitute(releases=d["releases_tree"]) if d["releases_tree"] else ""
    return texts.SOURCE.substitute(c, all=d["corpus"], rows="\n".join(rows), releases_text=rel)


# -- replacing parts of an existing docs/performance.md ----------------------

def replace_section(text, title, section):
    """TEXT with its section TITLE (a "## " line) replaced by SECTION, the
    rest kept; SECTION appended when TEXT has no such section."""
    lines = text.split("\n")
    new = section.rstrip("\n").split("\n")
    k = next((n for n, x in enumerate(lines) if x == title), None)
    if k is None:
        lines += [""] + new
    else:
        e = k + 1
        while e < len(lines) and not lines[e].startswith("## "):
            e += 1
        lines[k:e] = new + [""]
    return "\n".join(lines)


def replace_documents(text, rows, note):
    """TEXT with the documents rows of the first table and the note after
    the table replaced (the other rows kept)."""
    lines = [x for x in text.split("\n") if not x.startswith("| whole pipeline on documents")]
    note = note.rstrip("\n").split("\n")
    k = next((n for n, x in enumerate(lines) if x.startswith("Documents")), None)
    if k is not None:
        e = k
        while e < len(lines) and lines[e].strip():
            e += 1
        del lines[k:e + 1]
    i = next(i for i, x in enumerate(lines) if x.startswith("| fsim | command |"))
    j = i
    while j + 1 < len(lines) and lines[j + 1].startswith("|"):
        j += 1
    lines[j + 1:j + 1] = rows + [""] + note
    return "\n".join(lines)
