//! The CSV files and the summary statistics of the outputs.

use super::*;

/// Write a file atomically.
pub(crate) fn write_file(path: &Path, data: &[u8]) -> Result<()> {
    let mut o = fsim::io::Output::create(Some(path))?;
    o.write_all(data)?;
    o.finish()
}

/// A CSV field: quoted when it holds a comma, quote or line break.
pub(super) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Header of `average.csv`.
pub const AVERAGE_COLUMNS: &str = "variant,method,n,window,i,docs,avg_similarity";

/// Write the CSV files; returns their names.
pub fn write_csvs(cfg: &Config, docs: &[Doc], r: &Results) -> Result<Vec<String>> {
    let out = &cfg.out;
    let mut names = Vec::new();
    let mut put = |name: &str, body: String| -> Result<()> {
        write_file(&out.join(name), body.as_bytes())?;
        names.push(name.to_string());
        Ok(())
    };
    put("documents.csv", documents_csv(cfg, docs))?;
    put("average.csv", average_csv(docs, r))?;
    put("per_document.csv", per_document_csv(docs, r))?;
    let (summary, cdf) = pairs_csvs(r);
    put("pairs_summary.csv", summary)?;
    put("pairs_cdf.csv", cdf)?;
    if let Some(bytes) = r.timing_bytes {
        put("timing.csv", timing_csv(r, bytes))?;
    }
    Ok(names)
}

/// documents.csv: each document's id, size and path under the documents.
fn documents_csv(cfg: &Config, docs: &[Doc]) -> String {
    let mut s = String::from("id,bytes,path\n");
    for d in docs {
        let p = d.path.strip_prefix(&cfg.docs).unwrap_or(&d.path);
        let _ = writeln!(
            s,
            "{},{},{}",
            d.id,
            d.data.len(),
            csv_field(&p.to_string_lossy())
        );
    }
    s
}

/// average.csv: each method's average similarity per variant and number
/// of edits.
fn average_csv(docs: &[Doc], r: &Results) -> String {
    let mut s = format!("{AVERAGE_COLUMNS}\n");
    for (m, mc) in r.methods.iter().enumerate() {
        for v in Variant::ALL {
            for i in 0..=r.max_i {
                if let Some(a) = r.avg(m, v, i) {
                    let _ = writeln!(
                        s,
                        "{},{},{},{},{i},{},{a:.6}",
                        v.as_str(),
                        mc.method(),
                        mc.n(),
                        mc.window(),
                        docs.len()
                    );
                }
            }
        }
    }
    s
}

/// per_document.csv: each document's similarity at the largest number of
/// edits (figures 6 and 8).
fn per_document_csv(docs: &[Doc], r: &Results) -> String {
    let mut s = String::from("variant,method,n,window,i,doc,bytes,similarity\n");
    for (m, mc) in r.methods.iter().enumerate() {
        for v in Variant::ALL {
            let row = &r.sims[m][v as usize][r.max_i];
            if row.iter().any(|x| x.is_nan()) {
                continue;
            }
            for (d, x) in docs.iter().zip(row) {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{x:.6}",
                    v.as_str(),
                    mc.method(),
                    mc.n(),
                    mc.window(),
                    r.max_i,
                    d.id,
                    d.data.len()
                );
            }
        }
    }
    s
}

/// pairs_summary.csv and pairs_cdf.csv: the similarities of pairs of
/// distinct documents, summed up and as a CDF.
fn pairs_csvs(r: &Results) -> (String, String) {
    let mut s = String::from(
        "method,n,window,pairs,nonzero,mean,median_nonzero,p95_nonzero,max,nonzero_below_4pct,nonzero_above_20pct\n",
    );
    let mut c = String::from("method,n,window,similarity,cdf_nonzero,cdf_all\n");
    for (m, mc) in r.methods.iter().enumerate() {
        let p = pair_stats(&r.pairs[m]);
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
            mc.method(),
            mc.n(),
            mc.window(),
            p.pairs,
            p.nonzero,
            p.mean,
            p.median_nonzero,
            p.p95_nonzero,
            p.max,
            p.below_4pct,
            p.above_20pct
        );
        for (x, nz, all) in cdf_points(&r.pairs[m]) {
            let _ = writeln!(
                c,
                "{},{},{},{x:.6},{nz:.6},{all:.6}",
                mc.method(),
                mc.n(),
                mc.window()
            );
        }
    }
    (s, c)
}

/// timing.csv: each method's time over `bytes` of documents and its
/// signature length.
fn timing_csv(r: &Results, bytes: usize) -> String {
    let mut s = String::from("method,n,window,bytes,milliseconds,signature_len\n");
    for (m, mc) in r.methods.iter().enumerate() {
        let _ = writeln!(
            s,
            "{},{},{},{bytes},{:.3},{:.1}",
            mc.method(),
            mc.n(),
            mc.window(),
            r.times[m] * 1e3,
            r.sig_len[m]
        );
    }
    s
}

/// Summary of the similarities of the distinct pairs.
#[derive(Debug, Clone, Copy, Default)]
pub struct PairStats {
    pub pairs: usize,
    pub nonzero: usize,
    pub mean: f64,
    pub median_nonzero: f64,
    pub p95_nonzero: f64,
    pub max: f64,
    /// Share of the non-zero pairs below 4% (the paper's figure 4 numbers).
    pub below_4pct: f64,
    /// Share of the non-zero pairs above 20% (figure 3).
    pub above_20pct: f64,
}

pub fn pair_stats(v: &[f64]) -> PairStats {
    let mut nz: Vec<f64> = v.iter().copied().filter(|&x| x > 0.0).collect();
    nz.sort_by(f64::total_cmp);
    let q = |p: f64| {
        if nz.is_empty() {
            0.0
        } else {
            nz[((nz.len() - 1) as f64 * p).round() as usize]
        }
    };
    let share = |f: &dyn Fn(f64) -> bool| {
        if nz.is_empty() {
            0.0
        } else {
            nz.iter().filter(|&&x| f(x)).count() as f64 / nz.len() as f64
        }
    };
    PairStats {
        pairs: v.len(),
        nonzero: nz.len(),
        mean: if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        },
        median_nonzero: q(0.5),
        p95_nonzero: q(0.95),
        max: nz.last().copied().unwrap_or(0.0),
        below_4pct: share(&|x| x < 0.04),
        above_20pct: share(&|x| x > 0.20),
    }
}

/// The CDF at similarity 0, 0.01, ..., 1: (x, share of the non-zero
/// pairs at or below x, share of all pairs at or below x).
pub fn cdf_points(v: &[f64]) -> Vec<(f64, f64, f64)> {
    let nz = v.iter().filter(|&&x| x > 0.0).count().max(1) as f64;
    let all = v.len().max(1) as f64;
    (0..=100)
        .map(|k| {
            let x = k as f64 / 100.0;
            let a = v.iter().filter(|&&s| s <= x + 1e-12).count() as f64;
            let z = v.iter().filter(|&&s| s > 0.0 && s <= x + 1e-12).count() as f64;
            (x, z / nz, a / all)
        })
        .collect()
}
