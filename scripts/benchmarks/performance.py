"""docs/performance.md whole, from the data of a full run: the tables of
each section, then the text of texts.PERFORMANCE around them."""

import os

from . import render, texts
from .measure import ratio
from .render import rate, s2, yes


def table_rows(data):
    t = data["sections"]["table"]
    rows = [f"| {r['name']} | `{r['fsim']['cmd']}` | {s2(r['fsim']['wall'])} s | {r['fsim']['rss']} MB "
            f"| `{r['ref']['cmd']}` | {s2(r['ref']['wall'])} s | {r['ref']['rss']} MB "
            f"| **{ratio(r['fsim']['wall'], r['ref']['wall'])}** | {r['target']} |" for r in t["rows"]]
    doc_rows, note = render.documents_rows(data)
    return rows + doc_rows, note


def single_rows(data):
    d = data["sections"]["single"]

    def row(m):
        return (f"| {m['name']} | `{m['cmd']}` | {s2(m['wall'])} s | {rate(m['items'] / 1e6, m['wall'], '%.1f')} "
                f"M {m['unit']}/s | {m['rss']} MB | {m['target']} |")

    p, fl, q, v = d["partition"], d["floor"], d["query"], d["verify"]
    rows = [row(p), row(d["partition_null"]),
            f"| fsim-partition against its I/O floor (copy {d['pout'] // 1000000} MB of its inputs to a new file "
            f"and fsync it) | `{fl['cmd']}` | {s2(fl['wall'])} s | **{ratio(p['wall'], fl['wall'])}** × the floor | | |",
            row(d["analyze"]),
            f"| fsim-query, index of {q['qfiles']} files, 100 query files | `{q['shown']}` | {s2(q['wall'])} s "
            f"| {q['wall'] * 1000 / 100:.2f} ms per query file | {q['rss']} MB | ≤ 10 ms per query |",
            f"| fsim-verify -j {v['jobs']}, {v['pairs']} pairs ({v['exact']} exact) of {v['files']} text files of "
            f"~{v['size']} bytes (`fsim-gen --versions {v['vdocs']}`: each document and two versions with 1-5 line "
            f"edits; pairs by fsim-analyze, AVG=1000) | `{v['cmd']}` | {s2(v['wall'])} s ({s2(v['cpu'])} CPU-s) "
            f"| {rate(v['pairs'], v['wall'], '%d')} pairs/s ({rate(v['pairs'], v['cpu'], '%d')} per CPU-second) "
            f"| {v['rss']} MB | ≥ 50,000 pairs/s on 2 cores |"]
    return rows, {"pfiles": d["pfiles"], "pgroups": d["pgroups"], "pwall": s2(p["wall"]),
                  "pnull": s2(d["partition_null"]["wall"]), "pfloor": s2(fl["wall"]),
                  "prate": rate(d["precs"] / 1e6, p["wall"], "%.1f"),
                  "pnull_rate": rate(d["precs"] / 1e6, d["partition_null"]["wall"], "%.1f"),
                  "pout_mb": d["pout"] // 1000000}


def scale_rows(data):
    d = data["sections"]["scale"]
    bud = d["budget"]
    rows, stages = [], []
    for r in d["runs"]:
        xs = f"{r['record_bytes'] / bud:.2f}" if bud else "-"
        per = f"{r['total'] * 1e9 / r['records']:.0f}" if r["records"] else "-"
        rows.append(f"| {r['files']} | {r['records']} | {r['record_bytes']} | {xs}× | {s2(r['total'])} s "
                    f"| {per} ns | {r['peak_kib'] / 1024:.0f} MB |")
        for st in r["stages"]:
            b = f"{st['budget'] / 1048576:.0f} MB" if "budget" in st else "-"
            ok = yes(st["within"]) if "within" in st else "-"
            stages.append(f"| {r['files']} ({xs}×) | {st['stage']} | {st['wall']:.2f} s "
                          f"| {st['rss_kib'] / 1024:.0f} MB | {b} | {ok} |")
    return rows, stages, {"scale_files": d["files"], "scale_avg": d["avg"], "budget": bud,
                          "budget_mb": f"{bud / 1048576:.0f}"}


def overlap_values(data):
    d = data["sections"]["overlap"]
    rows = [f"| {st['stage']} | {st['wall']:.2f} s | {st['rss_kib'] / 1024:.0f} MB | {yes(st['rss_kib'] <= 1048576)} |"
            for st in d["stages"] if st["stage"] != "fsim-reuse"]
    return {"ovl_files": d["files"], "ovl_bytes": d["bytes"], "ovl_pairs": d["candidates"],
            "ovl_links": d["links"], "ovl_big": d["largest_cluster"], "ovl_total": s2(d["total"]),
            "ovl_md5": s2(d["md5"]["wall"]), "ovl_ratio": ratio(d["total"], d["md5"]["wall"]),
            "ovl_vrate": rate(d["candidates"], d["verify_wall"], "%.0f"), "overlap_rows": "\n".join(rows)}


def report_link_rows(data):
    return [f"| {m['links']} | {m['format']} | {s2(m['wall'])} s | {m['wall'] * 1e9 / m['links']:.0f} ns "
            f"| {m['rss']} MB | {yes(m['rss'] <= 256)} |" for m in data["sections"]["report_links"]]


def hard_link(data):
    """HARD_OUT as a link from docs/performance.md (its docs/ taken off)."""
    h = data["hard_out"]
    return h[len("docs/"):] if h.startswith("docs/") else h


def performance(data):
    """docs/performance.md of a full run."""
    k, t = data["knobs"], data["sections"]["table"]
    table, doc_note = table_rows(data)
    single, pvals = single_rows(data)
    srows, sstages, svals = scale_rows(data)
    checks = t["checks"]
    values = dict(render.common(data), **pvals, **svals, **overlap_values(data))
    values.update(
        files=k["files"], size=k["size"], tree=os.path.join(k["bench"], "tree"), tree_bytes=t["tree_bytes"],
        big_bytes=t["big_bytes"], table="\n".join(table), doc_note=doc_note.rstrip("\n"),
        single="\n".join(single), scale_rows="\n".join(srows), scale_stages="\n".join(sstages),
        report_links="\n".join(report_link_rows(data)), hard_section=render.hard_section(data).rstrip("\n"),
        hard_link=hard_link(data), source_section=render.source_section(data).rstrip("\n"),
        folders_section=render.folders_section(data).rstrip("\n"),
        outofcore_section=render.outofcore_section(data).rstrip("\n"),
        tenmillion_section=render.tenmillion_section(data).rstrip("\n"),
        changes_section=render.changes_section(data).rstrip("\n"),
        sort_same="identical" if checks["sort_same"] else "DIFFERENT",
        fs_sets=checks["fsim_sets"], jd_sets=checks["jdupes_sets"], data=data.get("path", "bench-work/bench.json"))
    return texts.PERFORMANCE.substitute(values)
