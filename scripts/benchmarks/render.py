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

def section_end(lines, k):
    """The index of the first "## " line after line K (or the end)."""
    e = k + 1
    while e < len(lines) and not lines[e].startswith("## "):
        e += 1
    return e


def replace_section(text, title, section, after=None):
    """TEXT with its section TITLE (a "## " line) replaced by SECTION, the
    rest kept; when TEXT has no such section, SECTION goes after the
    section AFTER if there is one, else at the end."""
    lines = text.split("\n")
    new = section.rstrip("\n").split("\n")
    k = next((n for n, x in enumerate(lines) if x == title), None)
    a = next((n for n, x in enumerate(lines) if x == after), None) if after else None
    if k is None and a is not None:
        e = section_end(lines, a)
        lines[e:e] = new + [""]
    elif k is None:
        lines += [""] + new
    else:
        lines[k:section_end(lines, k)] = new + [""]
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


# -- out of core ----------------------------------------------------------------

def mib(n):
    """Bytes as MiB (no decimals), "-" when unknown."""
    return "-" if n is None else f"{n / 1048576:.0f} MiB"


def kib(n):
    """KiB (a peak RSS) as MiB, "-" when unknown."""
    return "-" if n is None else mib(n * 1024)


def measured_stages(stages):
    """The stages of a run as make ran them: fsim-reuse (a wrapper around
    a stage, its figures the stage's) and the settings queries left out."""
    return [st for st in stages if st["stage"] != "fsim-reuse"
            and not any(a.startswith("--print-") for a in st["args"])]


def stage_budget(st, b):
    """The memory a stage is given by make (MEMORY, CAPACITY) or by its own default."""
    n = st["stage"]
    if n in ("fsim-sort", "fsim-verify", "fsim-report"):
        return mib(b["memory"])
    if n == "fsim-analyze":
        return f"{mib(b['capacity'] * 5 // 4)} (1.25 × CAPACITY)"
    return "files, not records"


def run_row(label, m):
    g = m.get("group") or {}
    load = f"{m['load'][0]:.1f}"
    return (f"| {label} | {m['wall']:.2f} s | {m['user'] + m['sys']:.2f} s | {kib(m['rss_kib'])} "
            f"| {mib(g.get('peak'))} | {mib(g.get('anon'))} | {mib(g.get('file'))} | {g.get('limit_hits', '-')} "
            f"| {g.get('oom_kills', '-')} | {mib(m['rchar'])} | {mib(m['wchar'])} | {mib(m['read_bytes'])} "
            f"| {mib(m['write_bytes'])} | {load} | {'yes' if m['cold'] else 'no'} |")


def stage_rows(d):
    """One row a stage of the group's run (else the run outside), with the
    run outside's wall time and disk reads beside it."""
    main = d.get("group") or d["free"]
    rows, free = measured_stages(main["stages"]), measured_stages(d["free"]["stages"])
    same = [f["stage"] for f in free] == [r["stage"] for r in rows]
    out = []
    for i, st in enumerate(rows):
        fw, fr = (f"{free[i]['wall']:.2f} s", mib(free[i]["read_bytes"])) if same else ("-", "-")
        killed = f" (killed by signal {st['signal']})" if st.get("signal") else ""
        out.append(f"| {report_stage_name(st)}{killed} | {st['wall']:.2f} s | {st['user'] + st['sys']:.2f} s "
                   f"| {kib(st['rss_kib'])} | {stage_budget(st, d['budget'])} | {mib(st['rchar'])} "
                   f"| {mib(st['wchar'])} | {mib(st['read_bytes'])} | {mib(st['write_bytes'])} | {fw} | {fr} |")
    return out


def group_commands(d):
    """The shell lines that make the group and enter it, for its version."""
    lim = d["budget"]["limit"]
    version, folder = d["place"] or ("v2", "/sys/fs/cgroup")
    g = f"{folder}/fsim-bench-make-PID"
    if version == "v1":
        return f"mkdir {g} && echo {lim} > {g}/memory.limit_in_bytes && echo $$ > {g}/cgroup.procs   # cgroup v1"
    return (f"echo +memory > {folder}/cgroup.subtree_control; mkdir {g} && echo {lim} > {g}/memory.max "
            f"&& echo $$ > {g}/cgroup.procs   # cgroup v2")


def outofcore_verdict(d):
    """What the group's runs showed: the ratio to md5sum and the reports
    compared, or the stage that failed, or why they were skipped."""
    if not d.get("group"):
        return texts.OUTOFCORE_SKIPPED.substitute(why=d["skipped"])
    g, mg, f, mf = d["group"], d["md5_group"], d["free"], d["md5_free"]
    if g["status"] != 0:
        killed = [st["stage"] for st in g["stages"] if st.get("signal")]
        return (f"**The run in the group failed** (status {g['status']}, OOM kills {g['group']['oom_kills']}"
                f"{', killed: ' + ', '.join(killed) if killed else ''}):\n\n```\n{g.get('stderr', '').strip()}\n```")
    same = ", ".join(f"{n} {yes(ok)}" for n, ok in d["same"].items())
    gg = g["group"]
    kills = gg["oom_kills"]
    return (f"In the group the whole run took **{ratio(g['wall'], mg['wall'])}× md5sum**'s wall time in the same "
            f"group ({ratio(f['wall'], mf['wall'])}× outside it), {'no' if not kills else kills} process"
            f"{'es' if kills > 1 else ''} killed by the OOM killer; the reports byte-identical to the run outside "
            f"the group: {same}. The group's largest figures while make ran (sampled, each at its own time): "
            f"anonymous memory {mib(gg.get('anon'))}, page cache {mib(gg.get('file'))}, of it dirty "
            f"{mib(gg.get('dirty'))} and under writeback {mib(gg.get('writeback'))}, kernel memory "
            f"{mib(gg.get('kernel'))}.")


def outofcore_section(data):
    """The section "Out of core", from a run's data ("" without one)."""
    d = data["sections"].get("outofcore")
    if not d:
        return ""
    b, c = d["budget"], common(data)
    runs = [run_row("md5sum, outside the group", d["md5_free"]), run_row("make report, outside the group", d["free"])]
    if d.get("group"):
        runs += [run_row("md5sum, in the group", d["md5_group"]), run_row("make report, in the group", d["group"])]
    place = (f"the group was made in {d['place'][1]} (cgroup {d['place'][0]})." if d["place"]
             else "no memory group could be made (below).")
    return texts.OUTOFCORE.substitute(
        c, limit_mib=b["limit"] >> 20, memory_mib=b["memory"] >> 20, margin_mib=b["margin"] >> 20,
        ratio=ratio(d["bytes"], b["limit"]), jobs=d["jobs"], place_text=place, gen=d["gen"], tree=d["tree"],
        files=d["files"], bytes=d["bytes"], group_cmds=group_commands(d), memory=b["memory"],
        capacity=b["capacity"], md5_cmd=d["md5_free"]["cmd"], runs="\n".join(runs), verdict=outofcore_verdict(d),
        stages_of="in the group" if d.get("group") else "outside a group", stages="\n".join(stage_rows(d)))


# -- 10^7 files --------------------------------------------------------------

MIB = 1 << 20
# What a stage may hold besides its model: its fixed I/O buffers, threads'
# stacks and code (as the section "Scale beyond RAM" allows).
FIXED = 32 * MIB


def tm_model(name, memory, files, jobs, capacity=None):
    """The flag bounding a stage's memory and its model in bytes at FILES
    files (the stages' --help, docs/usage.md), for the table. MEMORY and
    CAPACITY: make's, in bytes (None: the stages' defaults)."""
    m = memory or 256 * MIB
    flag = f"`--memory {m >> 20}M`" + ("" if memory else " (default)")
    per_file = {"fsim-partition": 9, "fsim-binpack": 50}
    if name == "fsim-sort":
        return flag, m + 3 * MIB, "the flag + 3 MiB"
    if name == "fsim-verify":
        return flag, m, "the flag + the file table"
    if name.startswith("fsim-report"):
        # --memory holds the model (the file table, the sets, the folder
        # pairs) and the links beside it; over it, the report warns.
        return flag, m, "the flag: the model and the links"
    if name == "fsim-analyze":
        c = capacity or 1 << 30
        cflag = f"`--capacity {c >> 20}M`" + ("" if capacity else " (default)")
        return cflag, 5 * c // 4, "1.25 × the capacity"
    if name in per_file:
        return "none", per_file[name] * files, f"{per_file[name]} B a file"
    return "none", jobs * MIB, "~1 MiB a job"


def tm_stage_rows(d):
    out, md5 = [], d["md5"]["wall"]
    for st in measured_stages(d["make"]["stages"]):
        name = report_stage_name(st)
        flag, model, how = tm_model(name, tm_memory_bytes(d), d["files"], d["jobs"], tm_capacity_bytes(d))
        rss = None if st["rss_kib"] is None else st["rss_kib"] * 1024
        verdict = "-" if rss is None else ("yes" if rss <= model + FIXED else f"**no: +{mib(rss - model)}**")
        killed = f" (killed by signal {st['signal']})" if st.get("signal") else ""
        out.append(f"| {name}{killed} | {st['wall']:.1f} s | {ratio(st['wall'], md5)} | {st['user'] + st['sys']:.1f} s "
                   f"| {kib(st['rss_kib'])} "
                   f"| {flag} | {mib(model)} ({how}) | {verdict} | {mib(st['rchar'])} | {mib(st['wchar'])} "
                   f"| {mib(st['read_bytes'])} | {mib(st['write_bytes'])} |")
    return out


def tm_capacity_bytes(d):
    """make's CAPACITY of the run in bytes, or None for fsim-analyze's default."""
    from .outofcore import parse_size
    return parse_size(d["capacity"]) if d.get("capacity") else None


def tm_memory_bytes(d):
    """make's MEMORY of the run in bytes, or None for the stages' defaults."""
    from .outofcore import parse_size
    return parse_size(d["memory"]) if d.get("memory") else None


def tenmillion_section(data):
    """The section "10^7 files", from a run's data ("" without one)."""
    d = data["sections"].get("tenmillion")
    if not d:
        return ""
    c = common(data)
    if d.get("skipped"):
        return texts.TENMILLION_SKIPPED.substitute(c, files=d["files_asked"], why=d["skipped"])
    m, md5, g = d["make"], d["md5"], d["gen"]
    if m["status"] == 0:
        verdict = (f"make report took **{ratio(m['wall'], md5['wall'])}× md5sum**'s wall time "
                   f"({ratio(m['user'] + m['sys'], md5['user'] + md5['sys'])}× its CPU)")
    else:
        last = measured_stages(m["stages"])[-1]
        verdict = (f"**make report did not finish**: {report_stage_name(last)} ended with status {last['status']}"
                   f"{' (signal ' + str(last['signal']) + ')' if last.get('signal') else ''} after "
                   f"{last['wall']:.0f} s, the run after {m['wall']:.0f} s ({ratio(m['wall'], md5['wall'])}× md5sum "
                   f"so far)")
    return texts.TENMILLION.substitute(
        c, files=d["files"], bytes=d["bytes"], size=d["size"], dirs=d["dirs"], inode=d["inode"], mkfs=d["mkfs"],
        image_gib=f"{d['image_bytes'] / (1 << 30):.1f}", image_used=mib(d["image_used"]),
        image_disk=mib(d["image_disk"]), gen_opts=g["opts"], gen_wall=f"{g['wall']:.0f}",
        gen_cpu=f"{g['user'] + g['sys']:.0f}", make_cmd=m["cmd"], md5_cmd=md5["cmd"],
        memory=d["memory"] or "unset (each stage's default)",
        capacity=d.get("capacity") or "unset (fsim-analyze's default, 1G)",
        make_wall=f"{m['wall']:.1f}", make_cpu=f"{m['user'] + m['sys']:.1f}", make_rss=kib(m["rss_kib"]),
        md5_wall=f"{md5['wall']:.1f}", md5_cpu=f"{md5['user'] + md5['sys']:.1f}", md5_rss=kib(md5["rss_kib"]),
        verdict=verdict,
        make_load=f"{m['load'][0]:.1f}", md5_load=f"{md5['load'][0]:.1f}",
        cold="yes" if m["cold"] and md5["cold"] else "no", work_peak=mib(d["make"]["work_peak"]),
        work_blocks_peak=mib(d["make"].get("work_blocks_peak")),
        work_end=mib(d["make"]["work_end"]), stages="\n".join(tm_stage_rows(d)))


# -- re-runs and scratch space ------------------------------------------------

def share(a, b):
    """A as a percentage of B, no decimals."""
    return f"{100 * a / b:.0f} %" if b else "-"


def rerun_kinds(t):
    """(what, files changed, re-run, run from scratch, files that differ)
    of each re-run of tree T."""
    kinds = [("edited", t["edited"], t["edit"], t["scratch"], t["edit_differs"])]
    if "edit_drop" in t:
        kinds.append(("edited, `DROP_PREVIOUS=1` (as fsim re-runs)", t["edited"], t["edit_drop"], t["scratch"],
                      t["edit_drop_differs"]))
    kinds.append(("touched", t["touched"], t["touch"], t["scratch2"], t["touch_differs"]))
    if "touch_drop" in t:
        kinds.append(("touched, `DROP_PREVIOUS=1` (as fsim re-runs)", t["touched"], t["touch_drop"], t["scratch2"],
                      t["touch_drop_differs"]))
    if "remove_drop" in t:
        kinds.append(("removed, `DROP_PREVIOUS=1` (as fsim re-runs)", t["removed"], t["remove_drop"],
                      t["scratch3"], t["remove_drop_differs"]))
    if "add_drop" in t:
        kinds.append(("added (a new version beside), `DROP_PREVIOUS=1` (as fsim re-runs)", t["added"],
                      t["add_drop"], t["scratch4"], t["add_drop_differs"]))
    return kinds


def change_rows(t):
    """The re-run rows of tree T: edited, touched, each kept and as fsim
    re-runs; removed, added, as fsim re-runs."""
    rows = []
    for how, n, run, scratch, differs in rerun_kinds(t):
        wall = run["wall_seconds"] / scratch["wall_seconds"] if scratch["wall_seconds"] else 1
        rows.append(
            f"| {t['label']} ({t['files']} files) | {how}, {n} files | {s2(run['wall_seconds'])} s "
            f"| {s2(run['cpu_seconds'])} s | {s2(scratch['wall_seconds'])} s | {s2(scratch['cpu_seconds'])} s "
            f"| **{share(run['wall_seconds'], scratch['wall_seconds'])}** "
            f"| {share(run['cpu_seconds'], scratch['cpu_seconds'])} | {yes(wall <= 0.15)} "
            f"| {'yes' if not differs else 'NO: ' + ', '.join(differs)} |")
    return rows


def largest(files, n=3):
    """The N largest of FILES ([name, bytes], largest first), a name met in
    both folders of a re-run once with its count: "report.json 52.7 (×2)"."""
    seen = {}
    for name, b in files:
        c, big = seen.get(name, (0, 0))
        seen[name] = (c + 1, max(big, b))
    top = sorted(seen.items(), key=lambda kv: (-kv[1][1], kv[0]))[:n]
    return ", ".join(f"{name} {b / 1e6:.1f}" + (f" (×{c})" if c > 1 else "") for name, (c, b) in top)


def scratch_rows(t):
    """The scratch rows of tree T: the first run, each re-run with the
    folder it links from."""
    rows = []
    runs = [("from scratch", t["first"]), ("edited, `PREVIOUS=`; both folders", t["edit"])]
    if "edit_drop" in t:
        runs.append(("edited, `PREVIOUS=` `DROP_PREVIOUS=1`; both folders", t["edit_drop"]))
    runs.append(("touched, `PREVIOUS=`; both folders", t["touch"]))
    if "touch_drop" in t:
        runs.append(("touched, `PREVIOUS=` `DROP_PREVIOUS=1`; both folders", t["touch_drop"]))
    if "remove_drop" in t:
        runs.append(("removed, `PREVIOUS=` `DROP_PREVIOUS=1`; both folders", t["remove_drop"]))
    if "add_drop" in t:
        runs.append(("added, `PREVIOUS=` `DROP_PREVIOUS=1`; both folders", t["add_drop"]))
    for name, run in runs:
        top = largest(run["peak_files"])
        rows.append(
            f"| {t['label']} ({run['repository_bytes'] / 1e6:.1f} MB) | {name} "
            f"| {run['peak_disk_bytes'] / 1e6:.1f} MB | **{run['peak_ratio']:.2f}×** "
            f"| {run['final_disk_bytes'] / 1e6:.1f} MB | {run['final_ratio']:.2f}× | {top} MB "
            f"| {yes(run['peak_ratio'] <= 1)} |")
    return rows


def changes_verdict(done):
    """One sentence per target: which runs meet it and which do not."""
    within, over = [], []
    for t in done:
        for how, _, run, scratch, _ in rerun_kinds(t):
            s = run["wall_seconds"] / scratch["wall_seconds"] if scratch["wall_seconds"] else 1
            (within if s <= 0.15 else over).append(f"{t['label']} {how} ({100 * s:.0f} %)")
    peaks_in, peaks_over = [], []
    for t in done:
        for how, _, run, _, _ in [("from scratch", 0, t["first"], 0, 0)] + rerun_kinds(t):
            (peaks_in if run["peak_ratio"] <= 1 else peaks_over).append(
                f"{t['label']} {how} ({run['peak_ratio']:.2f}×)")
    say = lambda xs: "; ".join(xs) if xs else "none"  # noqa: E731
    return (f"Re-runs within 15 % of a run from scratch: {say(within)}. Over it: {say(over)}.\n\n"
            f"Work folders within 1× the tree at their fullest: {say(peaks_in)}. Over it: {say(peaks_over)}.")


def lines_kept(done):
    """Which trees' first runs kept their line sets (LINE_SETS=auto), and
    their size against the tree; "" when the data predates the record."""
    kept, not_kept = [], []
    for t in done:
        if "lines_bytes" not in t:
            return ""
        b, tree = t["lines_bytes"], t["first"]["repository_bytes"]
        if b is None:
            not_kept.append(t["label"])
        else:
            kept.append(f"{t['label']} ({b / 1e6:.1f} MB, {b / tree:.2f}× the tree)")
    say = lambda xs: "; ".join(xs) if xs else "none"  # noqa: E731
    return (f"Line sets kept by the first run (`LINE_SETS=auto`, the default: kept when twice the chunk "
            f"records and the file table, with the line sets, take at most 4/5 of the tree), so that the re-runs took the "
            f"unchanged contents' lines instead of reading them: {say(kept)}. Not kept, every file read "
            f"again by the line source: {say(not_kept)}.")


def linked(done):
    """How many files the edited files are linked to (the files a re-run
    whose figures are a run from scratch's reads or credits again): a
    paragraph and a blank line, "" when the data predates the record."""
    said = []
    for t in done:
        p = t.get("partners")
        if not p:
            return ""
        share = (p["edited"] + p["partners"]) / p["files"] if p["files"] else 0
        said.append(f"{t['label']}: {p['edited']:,} edited of {p['files']:,} files, linked to {p['partners']:,} "
                    f"unchanged ones ({p['links']:,} links kept): {100 * share:.1f} %")
    return ("\nFiles an exact re-run after the edit reads or credits again, the edited ones and the "
            "unchanged files linked to one (fsim-verify measures each changed link from both files; "
            f"fsim-report credits both in their folder pairs): {'; '.join(said)}.\n")


def changes_section(data):
    """The section "Re-runs and scratch space" ("" without its data)."""
    d = data["sections"].get("changes")
    if not d:
        return ""
    done = [t for t in d["trees"] if "skipped" not in t]
    skipped = "".join(f"\nNot measured: {t['label']}, {t['skipped']}.\n" for t in d["trees"] if "skipped" in t)
    return texts.CHANGES.substitute(
        common(data), mem=data["meta"]["mem"],
        compared=", ".join(f"`{f}`" for f in d.get("compared", ("report.*", "verified.tsv"))),
        rerun_rows="\n".join(r for t in done for r in change_rows(t)),
        scratch_rows="\n".join(r for t in done for r in scratch_rows(t)), skipped=skipped,
        verdict=changes_verdict(done), lines_kept=lines_kept(done), linked=linked(done))
