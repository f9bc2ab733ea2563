//! The figures of the evaluation as SVG, drawn with `plotters` (SVG
//! backend only: four small crates, no font or image libraries; text is
//! left to the browser's sans-serif font).

use super::{write_file, Config, Doc, Results, Variant, MAIN_WINDOW};
use fsim::error::{Error, Result};
use plotters::prelude::*;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Line,
    /// A reference (TTTD, exact resemblance): dashed.
    Dashed,
    /// Points only (one per document).
    Points,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
}

/// One chart: title, axis labels and ranges, series, legend corner.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x: (f64, f64),
    pub y: (f64, f64),
    pub series: Vec<Series>,
    pub legend_upper: bool,
}

const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn err(e: impl std::fmt::Display) -> Error {
    Error::msg(format!("drawing a plot: {e}"))
}

/// The chart as an SVG document.
pub fn render(c: &Chart) -> Result<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (760, 460)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&c.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(56)
            .build_cartesian_2d(c.x.0..c.x.1, c.y.0..c.y.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(c.x_label.as_str())
            .y_desc(c.y_label.as_str())
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        for (k, s) in c.series.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            let style = color.stroke_width(2);
            let pts = s.points.clone();
            let anno = match s.style {
                Style::Line => chart
                    .draw_series(LineSeries::new(pts, style))
                    .map_err(err)?,
                Style::Dashed => chart
                    .draw_series(DashedLineSeries::new(pts, 6, 4, style))
                    .map_err(err)?,
                Style::Points => chart
                    .draw_series(
                        pts.into_iter()
                            .map(move |p| Circle::new(p, 3, color.filled())),
                    )
                    .map_err(err)?,
            };
            anno.label(s.name.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
            });
        }
        chart
            .configure_series_labels()
            .position(if c.legend_upper {
                SeriesLabelPosition::UpperRight
            } else {
                SeriesLabelPosition::LowerLeft
            })
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// A file name part for a method: `mod_100`, `bsw_400`.
fn slug(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// Lower bound of a similarity axis: the smallest value, rounded down to
/// a tenth (at most 0.9, at least 0).
fn floor_tenth(series: &[Series]) -> f64 {
    let min = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::min);
    ((min * 10.0).floor() / 10.0).clamp(0.0, 0.9)
}

/// Average similarity vs i for method index `m` (the measured i only).
fn avg_series(r: &Results, m: usize, v: Variant, name: String, style: Style) -> Series {
    let points = (0..=r.max_i)
        .filter_map(|i| r.avg(m, v, i).map(|a| (i as f64, a)))
        .collect();
    Series {
        name,
        points,
        style,
    }
}

/// CDF of the non-zero pair similarities of method `m`.
fn cdf_series(r: &Results, m: usize, name: String, style: Style) -> Series {
    let mut v: Vec<f64> = r.pairs[m].iter().copied().filter(|&x| x > 0.0).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len().max(1) as f64;
    let mut points = vec![(0.0, 0.0)];
    for (k, &x) in v.iter().enumerate() {
        // A step per distinct value keeps the SVG small.
        if k + 1 == v.len() || v[k + 1] != x {
            points.push((x, (k + 1) as f64 / n));
        }
    }
    Series {
        name,
        points,
        style,
    }
}

/// A chart of average similarity against i (figures 2, 5 and 7): y from the
/// series' lowest tenth to 1.
fn avg_chart(title: String, x_label: String, max_i: f64, series: Vec<Series>) -> Chart {
    Chart {
        title,
        x_label,
        y_label: "average similarity".into(),
        x: (0.0, max_i),
        y: (floor_tenth(&series), 1.0),
        series,
        legend_upper: false,
    }
}

/// A CDF over the pairs of distinct documents (figures 3 and 4): x up to
/// just past the largest similarity seen.
fn cdf_chart(title: String, series: Vec<Series>) -> Chart {
    let xmax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.05f64, f64::max);
    Chart {
        title,
        x_label: "similarity".into(),
        y_label: "share of non-zero pairs".into(),
        x: (0.0, (xmax * 1.05).min(1.0)),
        y: (0.0, 1.0),
        series,
        legend_upper: false,
    }
}

/// Every figure; returns (file name, caption) in the order of the report.
pub fn write_all(cfg: &Config, docs: &[Doc], r: &Results) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut put = |file: String, caption: String, c: Chart| -> Result<()> {
        write_file(&cfg.out.join(&file), render(&c)?.as_bytes())?;
        out.push((file, caption));
        Ok(())
    };
    let tttd = r.find("TTTD_100", 0);
    let mut windows: Vec<usize> = cfg.windows.clone();
    windows.sort_unstable();
    windows.dedup();
    fig1(docs, &mut put)?;
    figs2_3(r, &windows, tttd, &mut put)?;
    figs4_5(r, &mut put)?;
    fig6(docs, r, &mut put)?;
    fig7(r, &mut put)?;
    if let Some(bytes) = r.timing_bytes {
        fig11(r, &windows, tttd, bytes, &mut put)?;
    }
    Ok(out)
}

/// Writes a chart to its file and keeps its caption.
type Put<'a> = dyn FnMut(String, String, Chart) -> Result<()> + 'a;

/// Figure 1: document sizes.
fn fig1(docs: &[Doc], put: &mut Put) -> Result<()> {
    let sizes: Vec<(f64, f64)> = docs
        .iter()
        .map(|d| (d.id as f64, d.data.len() as f64 / 1024.0))
        .collect();
    let max_kb = sizes.iter().map(|p| p.1).fold(1.0, f64::max);
    put(
        "fig1-sizes.svg".into(),
        "Figure 1: document sizes (ID = rank by size)".into(),
        Chart {
            title: "Document sizes".into(),
            x_label: "document ID".into(),
            y_label: "KB".into(),
            x: (0.0, docs.len() as f64 + 1.0),
            y: (0.0, max_kb * 1.05),
            series: vec![Series {
                name: "size".into(),
                points: sizes,
                style: Style::Points,
            }],
            legend_upper: false,
        },
    )?;

    Ok(())
}

/// Figures 2 and 3: every sweep method, one line per window.
fn figs2_3(r: &Results, windows: &[usize], tttd: Option<usize>, put: &mut Put) -> Result<()> {
    let max_i = r.max_i as f64;
    for base in [
        "Mod_100",
        "BSW_400",
        "Min_100",
        "Sketch_100",
        "sif_256",
        "exact",
    ] {
        let mut s2 = Vec::new();
        let mut s3 = Vec::new();
        for &w in windows {
            if let Some(m) = r.find(base, w) {
                s2.push(avg_series(
                    r,
                    m,
                    Variant::Insert,
                    format!("w={w}"),
                    Style::Line,
                ));
                s3.push(cdf_series(r, m, format!("w={w}"), Style::Line));
            }
        }
        if s2.is_empty() {
            continue;
        }
        if let Some(t) = tttd {
            s2.push(avg_series(
                r,
                t,
                Variant::Insert,
                "TTTD_100".into(),
                Style::Dashed,
            ));
            s3.push(cdf_series(r, t, "TTTD_100".into(), Style::Dashed));
        }
        put(
            format!("fig2-{}.svg", slug(base)),
            format!("Figure 2: {base}, average similarity of original and near-duplicate vs insertions i, per window"),
            avg_chart(
                format!("{base}: average similarity vs insertions"),
                "i (words inserted)".into(),
                max_i,
                s2,
            ),
        )?;
        put(
            format!("fig3-{}.svg", slug(base)),
            format!("Figure 3: {base}, CDF of the similarity of the pairs of distinct documents (non-zero pairs), per window"),
            cdf_chart(format!("{base}: CDF over pairs of distinct documents"), s3),
        )?;
    }

    Ok(())
}

/// Figure 4: every method at the main window; figure 5: sampling
/// frequency, averages.
fn figs4_5(r: &Results, put: &mut Put) -> Result<()> {
    let max_i = r.max_i as f64;
    let w = MAIN_WINDOW;
    let four = [
        "Mod_100",
        "Min_100",
        "Sketch_100",
        "BSW_100",
        "sif_256",
        "TTTD_100",
        "exact",
    ];
    let s4: Vec<Series> = four
        .iter()
        .filter_map(|b| r.find(b, w).map(|m| (b, m)))
        .map(|(b, m)| {
            let style = if matches!(*b, "TTTD_100" | "exact") {
                Style::Dashed
            } else {
                Style::Line
            };
            cdf_series(r, m, b.to_string(), style)
        })
        .collect();
    put(
        "fig4-methods-cdf.svg".into(),
        format!("Figure 4: CDF of the similarity of the pairs of distinct documents (non-zero pairs), w = {w}"),
        cdf_chart(format!("CDF over pairs of distinct documents, w={w}"), s4),
    )?;

    // Figure 5: sampling frequency, averages.
    let five = [
        "Sketch_10",
        "Sketch_100",
        "BSW_1000",
        "BSW_100",
        "TTTD_1000",
        "TTTD_100",
    ];
    let s5: Vec<Series> = five
        .iter()
        .filter_map(|b| r.find(b, w).map(|m| (b, m)))
        .map(|(b, m)| avg_series(r, m, Variant::Insert, b.to_string(), Style::Line))
        .collect();
    put(
        "fig5-sampling.svg".into(),
        format!("Figure 5: sampling frequency, average similarity vs insertions, w = {w}"),
        avg_chart(
            format!("Sampling frequency: average similarity, w={w}"),
            "i (words inserted)".into(),
            max_i,
            s5,
        ),
    )?;

    Ok(())
}

/// Figure 6: per document at i = max_i.
fn fig6(docs: &[Doc], r: &Results, put: &mut Put) -> Result<()> {
    let w = MAIN_WINDOW;
    for (file, a, b) in [
        ("fig6a-sketch.svg", "Sketch_10", "Sketch_100"),
        ("fig6b-bsw.svg", "BSW_1000", "BSW_100"),
        ("fig6c-tttd.svg", "TTTD_1000", "TTTD_100"),
    ] {
        let s: Vec<Series> = [a, b]
            .iter()
            .filter_map(|n| r.find(n, w).map(|m| (n, m)))
            .map(|(n, m)| Series {
                name: n.to_string(),
                points: r.sims[m][Variant::Insert as usize][r.max_i]
                    .iter()
                    .enumerate()
                    .map(|(d, &x)| ((d + 1) as f64, x))
                    .collect(),
                style: Style::Points,
            })
            .collect();
        let lo = floor_tenth(&s);
        put(
            file.into(),
            format!("Figure 6: {a} vs {b}, similarity of each original and its near-duplicate with i = {} insertions (ID = rank by size)", r.max_i),
            Chart {
                title: format!("{a} vs {b} per document, i={}", r.max_i),
                x_label: "document ID (by size)".into(),
                y_label: "similarity".into(),
                x: (0.0, docs.len() as f64 + 1.0),
                y: (lo, 1.02),
                series: s,
                legend_upper: false,
            },
        )?;
    }

    Ok(())
}

/// Figure 7: the four methods (plus sif, TTTD, exact), insert / delete.
fn fig7(r: &Results, put: &mut Put) -> Result<()> {
    let w = MAIN_WINDOW;
    let max_i = r.max_i as f64;
    let seven = [
        "Mod_500",
        "Min_100",
        "Sketch_100",
        "BSW_500",
        "sif_256",
        "TTTD_100",
        "exact",
    ];
    for (file, v, what) in [
        ("fig7a-insert.svg", Variant::Insert, "words inserted"),
        ("fig7b-delete.svg", Variant::Delete, "words deleted"),
    ] {
        let s: Vec<Series> = seven
            .iter()
            .filter_map(|b| r.find(b, w).map(|m| (b, m)))
            .map(|(b, m)| {
                let style = if matches!(*b, "TTTD_100" | "exact") {
                    Style::Dashed
                } else {
                    Style::Line
                };
                avg_series(r, m, v, b.to_string(), style)
            })
            .collect();
        put(
            file.into(),
            format!("Figure 7: average similarity vs {what}, w = {w}"),
            avg_chart(
                format!("Average similarity vs {what}, w={w}"),
                format!("i ({what})"),
                max_i,
                s,
            ),
        )?;
    }

    Ok(())
}

/// Figure 11: processing time vs window, over `bytes` of documents.
fn fig11(
    r: &Results,
    windows: &[usize],
    tttd: Option<usize>,
    bytes: usize,
    put: &mut Put,
) -> Result<()> {
    let mut s = Vec::new();
    for base in [
        "Mod_100",
        "Min_100",
        "Sketch_100",
        "BSW_400",
        "sif_256",
        "exact",
    ] {
        let points: Vec<(f64, f64)> = windows
            .iter()
            .filter_map(|&w| r.find(base, w).map(|m| (w as f64, r.times[m] * 1e3)))
            .collect();
        if !points.is_empty() {
            s.push(Series {
                name: base.into(),
                points,
                style: Style::Line,
            });
        }
    }
    if let Some(t) = tttd {
        let ms = r.times[t] * 1e3;
        let (a, b) = (
            *windows.first().unwrap_or(&5) as f64,
            *windows.last().unwrap_or(&100) as f64,
        );
        s.push(Series {
            name: "TTTD_100".into(),
            points: vec![(a, ms), (b, ms)],
            style: Style::Dashed,
        });
    }
    let ymax = s
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max);
    let kb = bytes as f64 / 1000.0;
    put(
        "fig11-time.svg".into(),
        format!("Figure 11: processing time of a {kb:.0} KB document (the largest documents concatenated) vs window size"),
        Chart {
            title: format!("Processing time, {kb:.0} KB document"),
            x_label: "window (bytes)".into(),
            y_label: "milliseconds".into(),
            x: (0.0, windows.last().copied().unwrap_or(100) as f64 + 5.0),
            y: (0.0, ymax * 1.1),
            series: s,
            legend_upper: true,
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_svg() {
        let c = Chart {
            title: "t <&>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x: (0.0, 10.0),
            y: (0.0, 1.0),
            series: vec![
                Series {
                    name: "a".into(),
                    points: vec![(0.0, 1.0), (10.0, 0.5)],
                    style: Style::Line,
                },
                Series {
                    name: "b".into(),
                    points: vec![(0.0, 0.9), (10.0, 0.4)],
                    style: Style::Dashed,
                },
                Series {
                    name: "c".into(),
                    points: vec![(5.0, 0.7)],
                    style: Style::Points,
                },
            ],
            legend_upper: false,
        };
        let svg = render(&c).unwrap();
        assert!(svg.starts_with("<svg") || svg.contains("<svg"));
        assert!(svg.contains("</svg>"));
        assert!(!svg.contains("t <&>"), "text must be escaped");
    }
}
