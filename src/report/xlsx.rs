//! `fsim-report --format xlsx`: the report as a workbook, as the paper
//! delivered it (figures 5 and 6): rows grouped in outlines so an analyst
//! can fold, sort and filter clusters.
//!
//! * sheet `Summary` — the summary counts, the ranking, what a sheet left
//!   out, and the run's parameters;
//! * sheet `A Identical` — one row per identical set (set, files, overhead,
//!   size, first path), its files as outline level-1 rows below it;
//! * sheet `B Clusters` — one row per cluster in the report's ranking
//!   (cluster #, id, type, total size, files, links, average similarity,
//!   reclaimable bytes, sub-clusters of a large cluster), its files as
//!   level-1 rows (file size, % similar, filename, identical copies, its
//!   sub-cluster at 50/70/90 %), like figure 5;
//! * sheet `C Links` — the links, one row each, with an autofilter, in
//!   the clusters' order: at most 1,048,574; a note row then says how many
//!   were left out (report.tsv and report.json have them all).
//!
//! Paths are written escaped (as in every machine-readable report) and as
//! strings, never as formulas. A sheet that would exceed Excel's 1,048,576
//! rows stops with a note naming the rows left out (report.tsv has them).
//!
//! Memory: the Summary and Links sheets are written in rust_xlsxwriter's
//! constant-memory mode (a row at a time to a temporary file), the links
//! coming through the shared walk within `--memory` (src/report/stream/walk.rs).
//! Sheets A and B are held in memory for their outlines (figures 5 and 6;
//! that mode drops them) when their rows fit in their share of `--memory`
//! (about 2.5 KiB a row; A a quarter, B half of the rest, the links read
//! back within what is left); a larger one is written in constant-memory
//! mode too, without outlines, and the Summary says so. The workbook is
//! zipped to a temporary file next to the output and copied to it (written
//! atomically).

use crate::error::{Error, Result};
use crate::formats::escape_path_string;
use crate::formats::{percent, symmetric};
use crate::io::Output;
use crate::report::model::{r1, Pair, Report};
use crate::report::stream::{Source, Visit};
use rust_xlsxwriter::{Format, FormatAlign, Workbook, Worksheet, XlsxError};

/// Rows per sheet in Excel (the header included).
const ROW_MAX: u32 = 1_048_576;

fn xerr(e: XlsxError) -> Error {
    Error::msg(format!("xlsx: {e}"))
}

struct Styles {
    head: Format,
    group: Format,
    group_num: Format,
    bytes: Format,
    pct: Format,
    group_pct: Format,
}

impl Styles {
    fn new() -> Styles {
        let group = Format::new().set_bold().set_background_color("#E8EFFC");
        Styles {
            head: Format::new()
                .set_bold()
                .set_font_color("#FFFFFF")
                .set_background_color("#1F2A44")
                .set_align(FormatAlign::Center),
            group_num: group.clone().set_num_format("#,##0"),
            group_pct: group.clone().set_num_format("0.0"),
            group,
            bytes: Format::new().set_num_format("#,##0"),
            pct: Format::new().set_num_format("0.0"),
        }
    }
}

/// A header row, column widths, frozen header, autofilter over `rows`.
fn header(ws: &mut Worksheet, s: &Styles, cols: &[(&str, f64)], rows: u32) -> Result<()> {
    for (i, (name, width)) in cols.iter().enumerate() {
        ws.write_string_with_format(0, i as u16, *name, &s.head)
            .map_err(xerr)?;
        ws.set_column_width(i as u16, *width).map_err(xerr)?;
    }
    ws.set_freeze_panes(1, 0).map_err(xerr)?;
    ws.autofilter(0, 0, rows.max(1), cols.len() as u16 - 1)
        .map_err(xerr)?;
    ws.group_symbols_above(true);
    Ok(())
}

/// Write a note in the first column when a sheet had to stop early.
fn truncated(ws: &mut Worksheet, row: u32, left: usize) -> Result<()> {
    ws.write_string(
        row,
        0,
        format!("truncated: {left} more rows do not fit in a sheet; see report.tsv or report.json"),
    )
    .map_err(xerr)?;
    Ok(())
}

/// A sheet of outlined groups (figures 5 and 6): the header, then for each
/// group a summary row with its `sizes[k]` detail rows folded under it, as
/// many groups as fit in a sheet (a note says how many rows were left out).
/// `summary` writes group `k`'s summary row at row `r`; `detail` writes its
/// `i`th detail row at row `r`.
#[allow(clippy::too_many_arguments)]
fn grouped_sheet(
    ws: &mut Worksheet,
    s: &Styles,
    cols: &[(&str, f64)],
    sizes: &[usize],
    outline: bool,
    mut summary: impl FnMut(&mut Worksheet, usize, u32) -> Result<()>,
    mut detail: impl FnMut(&mut Worksheet, usize, usize, u32) -> Result<()>,
) -> Result<()> {
    let rows: usize = sizes.iter().map(|n| n + 1).sum();
    header(ws, s, cols, rows.min(ROW_MAX as usize - 1) as u32)?;
    let mut r = 1u32;
    for (k, &n) in sizes.iter().enumerate() {
        if r as usize + n + 1 > ROW_MAX as usize - 1 {
            let left: usize = sizes[k..].iter().map(|n| n + 1).sum();
            truncated(ws, r, left)?;
            break;
        }
        summary(ws, k, r)?;
        if n > 0 && outline {
            ws.group_rows(r + 1, r + n as u32).map_err(xerr)?;
        }
        for i in 0..n {
            r += 1;
            detail(ws, k, i, r)?;
        }
        r += 1;
    }
    Ok(())
}

/// Memory of a row held by a sheet in memory (measured: about 2.3 KiB
/// with its cells, formats and strings).
const ROW_BYTES: u64 = 2_560;

/// The memory a grouped sheet of these groups takes when held in memory
/// with its outlines (rust_xlsxwriter's constant-memory mode drops them).
fn sheet_bytes(sizes: &[usize]) -> u64 {
    let rows: u64 = sizes.iter().map(|&n| n as u64 + 1).sum();
    rows.min(ROW_MAX as u64) * ROW_BYTES
}

/// Links on the Links sheet at most: its rows less the header and the
/// note row.
const LINK_ROWS: usize = ROW_MAX as usize - 2;

/// Writes the Links sheet as the links come (stream::walk).
struct Links<'a> {
    ws: &'a mut Worksheet,
    s: &'a Styles,
    row: u32,
    written: usize,
}

impl Visit for Links<'_> {
    fn wants(&self, _: &Report, _: usize) -> bool {
        true
    }
    fn start(&mut self, _: &Report, _: usize) -> Result<()> {
        Ok(())
    }
    fn end(&mut self, _: &Report, _: usize) -> Result<()> {
        Ok(())
    }
    fn link(&mut self, report: &Report, k: usize, l: &Pair) -> Result<()> {
        if self.written >= LINK_ROWS {
            return Ok(());
        }
        let (ws, s, r) = (&mut *self.ws, self.s, self.row);
        let c = &report.clusters[k];
        let path = |id: u32| escape_path_string(report.files.path(id));
        let (ua, ub) = (report.size(l.a), report.size(l.b));
        let (sa, sb) = (ua as f64, ub as f64);
        ws.write_number(r, 0, (k + 1) as f64).map_err(xerr)?;
        ws.write_string(r, 1, c.id.as_str()).map_err(xerr)?;
        ws.write_string(r, 2, c.kind).map_err(xerr)?;
        ws.write_number_with_format(r, 3, r1(symmetric(l.common, ua, ub)), &s.pct)
            .map_err(xerr)?;
        ws.write_number_with_format(r, 4, l.common as f64, &s.bytes)
            .map_err(xerr)?;
        ws.write_number_with_format(r, 5, l.shared_chunks as f64, &s.bytes)
            .map_err(xerr)?;
        ws.write_number_with_format(r, 6, r1(percent(l.common, ua)), &s.pct)
            .map_err(xerr)?;
        ws.write_number_with_format(r, 7, r1(percent(l.common, ub)), &s.pct)
            .map_err(xerr)?;
        ws.write_number_with_format(r, 8, sa, &s.bytes)
            .map_err(xerr)?;
        ws.write_number_with_format(r, 9, sb, &s.bytes)
            .map_err(xerr)?;
        ws.write_string(r, 10, path(l.a)).map_err(xerr)?;
        ws.write_string(r, 11, path(l.b)).map_err(xerr)?;
        // The views compared; raw bytes leave the cells empty.
        for (col, id) in [(12, l.a), (13, l.b)] {
            let view = report.view_field(id);
            if !view.is_empty() {
                ws.write_string(r, col, view).map_err(xerr)?;
            }
        }
        self.row += 1;
        self.written += 1;
        Ok(())
    }
}

/// How the workbook is laid out within `--memory`: what the Links sheet
/// holds and which grouped sheets keep their outlines.
struct Layout {
    links_written: usize,
    links_left: usize,
    /// The clusters whose links the Links sheet holds (the last maybe cut).
    upto: usize,
    set_sizes: Vec<usize>,
    cluster_sizes: Vec<usize>,
    outline_a: bool,
    outline_b: bool,
    /// What the links read back may take.
    budget: u64,
}

impl Layout {
    fn new(report: &Report) -> Layout {
        let total_links: usize = report.clusters.iter().map(|c| c.link_count).sum();
        let links_written = total_links.min(LINK_ROWS);
        let mut upto = 0;
        let mut n = 0;
        while upto < report.clusters.len() && n < links_written {
            n += report.clusters[upto].link_count;
            upto += 1;
        }
        let set_sizes: Vec<usize> = report.identical.iter().map(|x| x.files.len()).collect();
        let cluster_sizes: Vec<usize> = report.clusters.iter().map(|c| c.files.len()).collect();
        // What --memory leaves beside the model is shared: sheet A may take a
        // quarter of it, sheet B half of what is left, and the links read back
        // the rest.
        let memory = report.link_budget();
        let (bytes_a, bytes_b) = (sheet_bytes(&set_sizes), sheet_bytes(&cluster_sizes));
        let outline_a = bytes_a <= memory / 4;
        let left = memory - if outline_a { bytes_a } else { 0 };
        let outline_b = bytes_b <= left / 2;
        let budget = left - if outline_b { bytes_b } else { 0 };
        Layout {
            links_written,
            links_left: total_links - links_written,
            upto,
            set_sizes,
            cluster_sizes,
            outline_a,
            outline_b,
            budget,
        }
    }
}

/// Write the workbook to the output: Summary and Links in constant-memory
/// mode (rows go to a temporary file as they are written), saved to a
/// temporary file, then copied to the output.
pub(crate) fn write(
    report: &Report,
    source: &mut Source,
    rank: &[u32],
    output: &std::path::Path,
) -> Result<()> {
    let s = Styles::new();
    let mut wb = Workbook::new();
    // A fixed date, not the time of the run: the same report gives the
    // same bytes.
    let date = rust_xlsxwriter::ExcelDateTime::from_ymd(2000, 1, 1).map_err(xerr)?;
    wb.set_properties(&rust_xlsxwriter::DocProperties::new().set_creation_datetime(&date));
    let layout = Layout::new(report);
    summary_sheet(&mut wb, &s, report, &layout)?;
    folders_sheet(&mut wb, &s, report)?;
    identical_sheet(&mut wb, &s, report, &layout)?;
    hard_links_sheet(&mut wb, &s, report)?;
    same_content_sheet(&mut wb, &s, report)?;
    clusters_sheet(&mut wb, &s, report, &layout)?;
    links_sheet(&mut wb, &s, report, &layout, source, rank)?;
    save(&mut wb, output)
}

/// Summary first: counts, what the sheets leave out, the parameters.
fn summary_sheet(wb: &mut Workbook, s: &Styles, report: &Report, layout: &Layout) -> Result<()> {
    let ws = wb.add_worksheet_with_constant_memory();
    ws.set_name("Summary").map_err(xerr)?;
    ws.set_column_width(0, 24.0).map_err(xerr)?;
    ws.set_column_width(1, 40.0).map_err(xerr)?;
    ws.write_string_with_format(0, 0, "fsim report", &s.head)
        .map_err(xerr)?;
    ws.write_blank(0, 1, &s.head).map_err(xerr)?;
    let mut r = 1u32;
    if let serde_json::Value::Object(m) = report.summary() {
        for (k, v) in m {
            ws.write_string(r, 0, k).map_err(xerr)?;
            ws.write_number_with_format(r, 1, v.as_f64().unwrap_or(0.0), &s.bytes)
                .map_err(xerr)?;
            r += 1;
        }
    }
    ws.write_string(r, 0, "links_on_sheet_c").map_err(xerr)?;
    ws.write_number_with_format(r, 1, layout.links_written as f64, &s.bytes)
        .map_err(xerr)?;
    r += 1;
    let mut notes: Vec<(&str, String)> = vec![(
        "ranking",
        "clusters by reclaimable bytes (over a cluster's files, the most bytes each shares with one larger file of the cluster), then files".into(),
    )];
    let flat: Vec<&str> = [
        (layout.outline_a, "A Identical"),
        (layout.outline_b, "B Clusters"),
    ]
    .iter()
    .filter(|x| !x.0)
    .map(|x| x.1)
    .collect();
    if !flat.is_empty() {
        notes.push((
            "outlines",
            format!(
                "{} written without outlines (rows one after the other, group rows in colour): their rows are more than their share of --memory holds (about {} bytes a row)",
                flat.join(" and "),
                ROW_BYTES
            ),
        ));
    }
    if layout.links_left > 0 {
        notes.push(("left out", links_note(layout.links_left)));
    }
    if let Some(note) = report.walk_note() {
        notes.push(("walk", note));
    }
    if let Some(note) = report.pruned_note() {
        notes.push(("pruned", note));
    }
    notes.extend(report.notes_lines().into_iter().map(|l| ("note", l)));
    for (k, v) in &notes {
        ws.write_string(r, 0, *k).map_err(xerr)?;
        ws.write_string(r, 1, v).map_err(xerr)?;
        r += 1;
    }
    r += 1;
    for (k, v) in &report.params.0 {
        ws.write_string(r, 0, k).map_err(xerr)?;
        ws.write_string(r, 1, v).map_err(xerr)?;
        r += 1;
    }
    Ok(())
}

/// A sheet in memory for its outlines when they fit in its share of
/// `--memory`, else in constant-memory mode.
fn grouped_worksheet(wb: &mut Workbook, outline: bool) -> &mut Worksheet {
    if outline {
        wb.add_worksheet()
    } else {
        wb.add_worksheet_with_constant_memory()
    }
}

/// Sheet A: identical sets, files folded under each set.
fn identical_sheet(wb: &mut Workbook, s: &Styles, report: &Report, layout: &Layout) -> Result<()> {
    let path = |id: u32| escape_path_string(report.files.path(id));
    let ws = grouped_worksheet(wb, layout.outline_a);
    ws.set_name("A Identical").map_err(xerr)?;
    grouped_sheet(
        ws,
        s,
        &[
            ("Set", 13.0),
            ("Files", 8.0),
            ("Overhead (bytes)", 17.0),
            ("Size (bytes)", 14.0),
            ("Path", 90.0),
            ("Note", 60.0),
        ],
        &layout.set_sizes,
        layout.outline_a,
        |ws, k, r| {
            let set = &report.identical[k];
            ws.write_string_with_format(r, 0, &set.id, &s.group)
                .map_err(xerr)?;
            ws.write_number_with_format(r, 1, set.files.len() as f64, &s.group_num)
                .map_err(xerr)?;
            ws.write_number_with_format(r, 2, set.overhead() as f64, &s.group_num)
                .map_err(xerr)?;
            ws.write_number_with_format(r, 3, set.size as f64, &s.group_num)
                .map_err(xerr)?;
            ws.write_string_with_format(r, 4, path(set.files[0]), &s.group)
                .map_err(xerr)?;
            let note = report.disk_note(set).unwrap_or_default();
            ws.write_string_with_format(r, 5, note, &s.group)
                .map_err(xerr)?;
            Ok(())
        },
        |ws, k, i, r| {
            let set = &report.identical[k];
            let f = set.files[i];
            ws.write_string(r, 0, &set.id).map_err(xerr)?;
            ws.write_number_with_format(r, 3, set.size as f64, &s.bytes)
                .map_err(xerr)?;
            ws.write_string(r, 4, path(f)).map_err(xerr)?;
            if let Some(k) = set.disk.name_of(f) {
                let note = format!("another name of {}: hard link", path(k));
                ws.write_string(r, 5, note).map_err(xerr)?;
            }
            Ok(())
        },
    )
}

/// The folder pairs, one row each (src/report/folders/), family by
/// family as in every format, before the file-level sheets; a note when
/// they do not fit in a sheet.
fn folders_sheet(wb: &mut Workbook, s: &Styles, report: &Report) -> Result<()> {
    let ws = wb.add_worksheet_with_constant_memory();
    ws.set_name("Folders").map_err(xerr)?;
    let pairs = &report.folders.pairs;
    let fit = pairs.len().min(ROW_MAX as usize - 2);
    let cols = [
        ("Folder", 50.0),
        ("Folder", 50.0),
        ("Similarity %", 13.0),
        ("First in second (bytes)", 22.0),
        ("First (bytes)", 14.0),
        ("Second in first (bytes)", 22.0),
        ("Second (bytes)", 14.0),
        ("Same", 8.0),
        ("Changed", 9.0),
        ("Only in first", 13.0),
        ("Only in second", 14.0),
        ("Family (its pattern)", 50.0),
    ];
    header(ws, s, &cols, fit as u32)?;
    let families = &report.folders.families;
    for (k, p) in pairs.iter().take(fit).enumerate() {
        let r = k as u32 + 1;
        ws.write_string(r, 0, escape_path_string(&p.a))
            .map_err(xerr)?;
        ws.write_string(r, 1, escape_path_string(&p.b))
            .map_err(xerr)?;
        ws.write_number_with_format(r, 2, r1(p.percent()), &s.pct)
            .map_err(xerr)?;
        let counts = [
            p.a_in_b, p.bytes_a, p.b_in_a, p.bytes_b, p.same, p.changed, p.only_a, p.only_b,
        ];
        for (c, v) in counts.into_iter().enumerate() {
            ws.write_number_with_format(r, 3 + c as u16, v as f64, &s.bytes)
                .map_err(xerr)?;
        }
        let fam = &families[p.family as usize];
        ws.write_string(r, 11, escape_path_string(&fam.label))
            .map_err(xerr)?;
    }
    if fit < pairs.len() {
        truncated(ws, fit as u32 + 1, pairs.len() - fit)?;
    }
    Ok(())
}

/// Sheet A1 (only when there are any): names of one file with no other
/// file of their content, one row per name.
fn hard_links_sheet(wb: &mut Workbook, s: &Styles, report: &Report) -> Result<()> {
    if report.hard_links.is_empty() {
        return Ok(());
    }
    let ws = wb.add_worksheet_with_constant_memory();
    ws.set_name("A1 Hard links").map_err(xerr)?;
    let rows: usize = report.hard_links.iter().map(|h| h.files.len()).sum();
    let fit = rows.min(ROW_MAX as usize - 2);
    let cols = [
        ("File", 13.0),
        ("Names", 8.0),
        ("Size (bytes)", 14.0),
        ("Name", 90.0),
    ];
    header(ws, s, &cols, fit as u32)?;
    let all = report
        .hard_links
        .iter()
        .flat_map(|h| h.files.iter().map(move |&f| (h, f)));
    for (k, (h, f)) in all.take(fit).enumerate() {
        let r = k as u32 + 1;
        ws.write_string(r, 0, &h.id).map_err(xerr)?;
        ws.write_number(r, 1, h.files.len() as f64).map_err(xerr)?;
        ws.write_number_with_format(r, 2, h.size as f64, &s.bytes)
            .map_err(xerr)?;
        ws.write_string(r, 3, escape_path_string(report.files.path(f)))
            .map_err(xerr)?;
    }
    if fit < rows {
        truncated(ws, fit as u32 + 1, rows - fit)?;
    }
    Ok(())
}

/// Sheet A2 (only when there are groups): files whose content views are
/// equal but whose bytes differ, one row per file.
fn same_content_sheet(wb: &mut Workbook, s: &Styles, report: &Report) -> Result<()> {
    if report.same_content.is_empty() {
        return Ok(());
    }
    let ws = wb.add_worksheet_with_constant_memory();
    ws.set_name("A2 Same content").map_err(xerr)?;
    let rows: usize = report.same_content.iter().map(|g| g.files.len()).sum();
    let fit = rows.min(ROW_MAX as usize - 2);
    let cols = [
        ("Group", 13.0),
        ("Files", 8.0),
        ("Content size (bytes)", 20.0),
        ("View compared", 22.0),
        ("Path", 90.0),
    ];
    header(ws, s, &cols, fit as u32)?;
    let all = report
        .same_content
        .iter()
        .flat_map(|g| g.files.iter().map(move |&f| (g, f)));
    for (k, (g, f)) in all.take(fit).enumerate() {
        let r = k as u32 + 1;
        ws.write_string(r, 0, &g.id).map_err(xerr)?;
        ws.write_number(r, 1, g.files.len() as f64).map_err(xerr)?;
        ws.write_number_with_format(r, 2, g.size as f64, &s.bytes)
            .map_err(xerr)?;
        ws.write_string(r, 3, report.view_label(f)).map_err(xerr)?;
        ws.write_string(r, 4, escape_path_string(report.files.path(f)))
            .map_err(xerr)?;
    }
    if fit < rows {
        truncated(ws, fit as u32 + 1, rows - fit)?;
    }
    Ok(())
}

/// Sheet B: clusters, files folded under each cluster (figure 5).
fn clusters_sheet(wb: &mut Workbook, s: &Styles, report: &Report, layout: &Layout) -> Result<()> {
    let ws = grouped_worksheet(wb, layout.outline_b);
    ws.set_name("B Clusters").map_err(xerr)?;
    grouped_sheet(
        ws,
        s,
        &[
            ("Cluster #", 10.0),
            ("Cluster id", 13.0),
            ("Type", 10.0),
            ("Total size (bytes)", 18.0),
            ("Files", 8.0),
            ("Links", 8.0),
            ("Avg % similar", 14.0),
            ("File size (bytes)", 17.0),
            ("% similar", 11.0),
            ("Filename", 80.0),
            ("Identical copies", 16.0),
            ("Reclaimable (bytes)", 19.0),
            ("Sub-cluster at 50/70/90%", 22.0),
        ],
        &layout.cluster_sizes,
        layout.outline_b,
        |ws, k, r| cluster_row(ws, s, report, k, r),
        |ws, k, i, r| cluster_file_row(ws, s, report, k, i, r),
    )
}

/// Sheet B's group row of cluster `k` (rank k + 1) at row `r`.
fn cluster_row(ws: &mut Worksheet, s: &Styles, report: &Report, k: usize, r: u32) -> Result<()> {
    let c = &report.clusters[k];
    let rank = (k + 1) as f64;
    ws.write_number_with_format(r, 0, rank, &s.group_num)
        .map_err(xerr)?;
    ws.write_string_with_format(r, 1, c.id.as_str(), &s.group)
        .map_err(xerr)?;
    ws.write_string_with_format(r, 2, c.kind, &s.group)
        .map_err(xerr)?;
    ws.write_number_with_format(r, 3, c.total_size as f64, &s.group_num)
        .map_err(xerr)?;
    ws.write_number_with_format(r, 4, c.files.len() as f64, &s.group_num)
        .map_err(xerr)?;
    ws.write_number_with_format(r, 5, c.link_count as f64, &s.group_num)
        .map_err(xerr)?;
    ws.write_number_with_format(r, 6, r1(c.avg_similarity), &s.group_pct)
        .map_err(xerr)?;
    for col in 7..=10 {
        ws.write_blank(r, col, &s.group).map_err(xerr)?;
    }
    ws.write_number_with_format(r, 11, c.reclaimable as f64, &s.group_num)
        .map_err(xerr)?;
    match &c.review {
        Some(rv) => {
            let levels: Vec<String> = rv.levels.iter().map(|(n, _)| n.to_string()).collect();
            ws.write_string_with_format(
                r,
                12,
                match &rv.hubs {
                    Some(h) => format!(
                        "{} sub-clusters; chained through {} files",
                        levels.join("/"),
                        h.files.len()
                    ),
                    None => format!("{} sub-clusters", levels.join("/")),
                },
                &s.group,
            )
            .map_err(xerr)?;
        }
        None => {
            ws.write_blank(r, 12, &s.group).map_err(xerr)?;
        }
    }
    Ok(())
}

/// Sheet B's row of file `i` of cluster `k` at row `r`.
fn cluster_file_row(
    ws: &mut Worksheet,
    s: &Styles,
    report: &Report,
    k: usize,
    i: usize,
    r: u32,
) -> Result<()> {
    let c = &report.clusters[k];
    let f = c.files[i];
    // % similar: the largest share of this file found in one link.
    let best = report.best[f as usize];
    let copies = report.copies_apart(f).0.len();
    ws.write_number(r, 0, (k + 1) as f64).map_err(xerr)?;
    ws.write_string(r, 1, c.id.as_str()).map_err(xerr)?;
    ws.write_number_with_format(r, 7, report.size(f) as f64, &s.bytes)
        .map_err(xerr)?;
    ws.write_number_with_format(r, 8, r1(best), &s.pct)
        .map_err(xerr)?;
    ws.write_string(r, 9, escape_path_string(report.files.path(f)))
        .map_err(xerr)?;
    ws.write_number(r, 10, copies as f64).map_err(xerr)?;
    if let Some(rv) = &c.review {
        let [a, b, d] = rv.sub[i];
        ws.write_string(r, 12, format!("{a}/{b}/{d}"))
            .map_err(xerr)?;
    }
    Ok(())
}

/// Sheet C: the links, in the clusters' order, as many as fit.
fn links_sheet(
    wb: &mut Workbook,
    s: &Styles,
    report: &Report,
    layout: &Layout,
    source: &mut Source,
    rank: &[u32],
) -> Result<()> {
    let ws = wb.add_worksheet_with_constant_memory();
    ws.set_name("C Links").map_err(xerr)?;
    header(
        ws,
        s,
        &[
            ("Cluster #", 10.0),
            ("Cluster id", 13.0),
            ("Type", 10.0),
            ("% similar", 11.0),
            ("Bytes in common", 16.0),
            ("Shared chunks", 14.0),
            ("% of A", 9.0),
            ("% of B", 9.0),
            ("Size A (bytes)", 15.0),
            ("Size B (bytes)", 15.0),
            ("Path A", 60.0),
            ("Path B", 60.0),
            ("View A", 14.0),
            ("View B", 14.0),
        ],
        layout.links_written as u32,
    )?;
    let mut v = Links {
        ws,
        s,
        row: 1,
        written: 0,
    };
    crate::report::stream::walk(report, source, rank, layout.upto, layout.budget, &mut v)?;
    debug_assert_eq!(v.written, layout.links_written);
    if layout.links_left > 0 {
        let r = v.row;
        v.ws.write_string(r, 0, links_note(layout.links_left))
            .map_err(xerr)?;
    }
    Ok(())
}

/// Save the workbook to a temporary file beside the output, then copy it
/// to the output.
fn save(wb: &mut Workbook, output: &std::path::Path) -> Result<()> {
    let dir = Some(output)
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| std::path::PathBuf::from("."), |d| d.to_path_buf());
    let tmp = crate::report::stream::temp_file(&dir, ".fsim-report-xlsx.", ".xlsx")?;
    wb.save(tmp.path()).map_err(xerr)?;
    let mut out = Output::create(Some(output))?;
    let mut f = std::fs::File::open(tmp.path())
        .map_err(|e| Error::msg(format!("{}: {e}", tmp.path().display())))?;
    std::io::copy(&mut f, &mut out).map_err(|e| Error::msg(format!("{}: {e}", out.name())))?;
    out.finish()
}

/// The note of the links the Links sheet leaves out.
fn links_note(left: usize) -> String {
    format!(
        "truncated: {left} more links do not fit in a sheet (Excel's limit of {ROW_MAX} rows); every link is in report.tsv and report.json (fsim-report --format tsv|json)"
    )
}
