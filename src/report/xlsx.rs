//! `fsim-report --format xlsx`: the report as a workbook, as the paper
//! delivered it (figures 5 and 6): rows grouped in outlines so an analyst
//! can fold, sort and filter clusters.
//!
//! * sheet `A Identical` — one row per identical set (set, files, overhead,
//!   size, first path), its files as outline level-1 rows below it;
//! * sheet `B Clusters` — one row per cluster (cluster #, id, type, total
//!   size, files, links, average similarity), its files as level-1 rows
//!   (file size, % similar, filename, identical copies), like figure 5;
//! * sheet `C Links` — every link, one row each, with an autofilter;
//! * sheet `Summary` — the summary counts and the run's parameters.
//!
//! Paths are written escaped (as in every machine-readable report) and as
//! strings, never as formulas. A sheet that would exceed Excel's 1,048,576
//! rows stops with a note naming the rows left out (report.tsv has them).
//!
//! Memory: the whole workbook is built in memory (about 100 bytes per cell)
//! and written atomically.

use crate::error::{Error, Result};
use crate::formats::escape_path_string;
use crate::formats::{percent, symmetric};
use crate::report::model::Report;
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
fn grouped_sheet(
    ws: &mut Worksheet,
    s: &Styles,
    cols: &[(&str, f64)],
    sizes: &[usize],
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
        let first = r + 1;
        for i in 0..n {
            r += 1;
            detail(ws, k, i, r)?;
        }
        ws.group_rows(first, r).map_err(xerr)?;
        r += 1;
    }
    Ok(())
}

/// The workbook's bytes.
pub fn render(report: &Report) -> Result<Vec<u8>> {
    let s = Styles::new();
    let path = |id: u32| escape_path_string(&report.files[id as usize].path);
    let size = |id: u32| report.size(id) as f64;
    let mut wb = Workbook::new();

    // Sheet A: identical sets, files folded under each set.
    {
        let ws = wb.add_worksheet();
        ws.set_name("A Identical").map_err(xerr)?;
        let sizes: Vec<usize> = report.identical.iter().map(|x| x.files.len()).collect();
        grouped_sheet(
            ws,
            &s,
            &[
                ("Set", 13.0),
                ("Files", 8.0),
                ("Overhead (bytes)", 17.0),
                ("Size (bytes)", 14.0),
                ("Path", 90.0),
            ],
            &sizes,
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
                Ok(())
            },
            |ws, k, i, r| {
                let set = &report.identical[k];
                let f = set.files[i];
                ws.write_string(r, 0, &set.id).map_err(xerr)?;
                ws.write_number_with_format(r, 3, size(f), &s.bytes)
                    .map_err(xerr)?;
                ws.write_string(r, 4, path(f)).map_err(xerr)?;
                Ok(())
            },
        )?;
    }

    // Sheet B: clusters, files folded under each cluster (figure 5).
    {
        let ws = wb.add_worksheet();
        ws.set_name("B Clusters").map_err(xerr)?;
        let sizes: Vec<usize> = report.clusters.iter().map(|c| c.files.len()).collect();
        let mut best = vec![0f64; report.files.len()];
        for c in &report.clusters {
            for l in &c.links {
                for f in [l.a, l.b] {
                    let p = percent(l.common, report.size(f));
                    best[f as usize] = best[f as usize].max(p);
                }
            }
        }
        grouped_sheet(
            ws,
            &s,
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
            ],
            &sizes,
            |ws, k, r| {
                let c = &report.clusters[k];
                let rank = (k + 1) as f64;
                ws.write_number_with_format(r, 0, rank, &s.group_num)
                    .map_err(xerr)?;
                ws.write_string_with_format(r, 1, &c.id, &s.group)
                    .map_err(xerr)?;
                ws.write_string_with_format(r, 2, c.kind, &s.group)
                    .map_err(xerr)?;
                ws.write_number_with_format(r, 3, c.total_size as f64, &s.group_num)
                    .map_err(xerr)?;
                ws.write_number_with_format(r, 4, c.files.len() as f64, &s.group_num)
                    .map_err(xerr)?;
                ws.write_number_with_format(r, 5, c.links.len() as f64, &s.group_num)
                    .map_err(xerr)?;
                ws.write_number_with_format(r, 6, r1(c.avg_similarity), &s.group_pct)
                    .map_err(xerr)?;
                for col in 7..=10 {
                    ws.write_blank(r, col, &s.group).map_err(xerr)?;
                }
                Ok(())
            },
            |ws, k, i, r| {
                let c = &report.clusters[k];
                let f = c.files[i];
                // % similar: the largest share of this file found in one link
                // (one pass over the links, not one per file).
                let best = best[f as usize];
                let copies = report
                    .set_of
                    .get(&f)
                    .map_or(0, |&i| report.identical[i].files.len() - 1);
                ws.write_number(r, 0, (k + 1) as f64).map_err(xerr)?;
                ws.write_string(r, 1, &c.id).map_err(xerr)?;
                ws.write_number_with_format(r, 7, size(f), &s.bytes)
                    .map_err(xerr)?;
                ws.write_number_with_format(r, 8, r1(best), &s.pct)
                    .map_err(xerr)?;
                ws.write_string(r, 9, path(f)).map_err(xerr)?;
                ws.write_number(r, 10, copies as f64).map_err(xerr)?;
                Ok(())
            },
        )?;
    }

    // Sheet C: all links, rows streamed to a temp file as they are written
    // (constant-memory mode: rows go in order, which they do here).
    {
        let ws = wb.add_worksheet_with_constant_memory();
        ws.set_name("C Links").map_err(xerr)?;
        let rows: usize = report.clusters.iter().map(|c| c.links.len()).sum();
        header(
            ws,
            &s,
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
            ],
            rows.min(ROW_MAX as usize - 1) as u32,
        )?;
        let mut r = 1u32;
        'clusters: for (k, c) in report.clusters.iter().enumerate() {
            for (j, l) in c.links.iter().enumerate() {
                if r == ROW_MAX - 1 {
                    let left: usize = c.links.len() - j
                        + report.clusters[k + 1..]
                            .iter()
                            .map(|x| x.links.len())
                            .sum::<usize>();
                    truncated(ws, r, left)?;
                    break 'clusters;
                }
                let (sa, sb) = (size(l.a), size(l.b));
                let (ua, ub) = (sa as u64, sb as u64);
                ws.write_number(r, 0, (k + 1) as f64).map_err(xerr)?;
                ws.write_string(r, 1, &c.id).map_err(xerr)?;
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
                r += 1;
            }
        }
    }

    // Summary: counts and parameters.
    {
        let ws = wb.add_worksheet();
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
        if let Some(note) = report.pruned_note() {
            ws.write_string(r, 0, "pruned").map_err(xerr)?;
            ws.write_string(r, 1, note).map_err(xerr)?;
            r += 1;
        }
        r += 1;
        for (k, v) in &report.params.0 {
            ws.write_string(r, 0, k).map_err(xerr)?;
            ws.write_string(r, 1, v).map_err(xerr)?;
            r += 1;
        }
    }
    wb.save_to_buffer().map_err(xerr)
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
