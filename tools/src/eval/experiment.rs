//! The experiment: every method's similarity of each document to its
//! near-duplicates and of the distinct pairs, and the methods' timing.

use super::*;
use fsim::io::ordered::ordered_map;

/// Everything measured.
#[derive(Debug, Clone)]
pub struct Results {
    pub methods: Vec<MethodConf>,
    pub max_i: usize,
    /// `sims[method][variant][i][doc]` (NaN where not measured).
    pub sims: Vec<[Vec<Vec<f64>>; 2]>,
    /// Similarities of the pairs of distinct originals, per method.
    pub pairs: Vec<Vec<f64>>,
    /// Processing time (seconds, fastest of 5) per method of the timing
    /// document, and that document's size in bytes.
    pub times: Vec<f64>,
    pub timing_bytes: Option<usize>,
    /// Average signature length per method over the originals.
    pub sig_len: Vec<f64>,
}

impl Results {
    /// Average over the documents at (method, variant, i), if measured.
    pub fn avg(&self, m: usize, v: Variant, i: usize) -> Option<f64> {
        let row = &self.sims[m][v as usize][i];
        if row.iter().any(|x| x.is_nan()) || row.is_empty() {
            None
        } else {
            Some(row.iter().sum::<f64>() / row.len() as f64)
        }
    }

    /// Index of the method with this name and window (`Mod_100`, 20).
    pub fn find(&self, name: &str, window: usize) -> Option<usize> {
        self.methods
            .iter()
            .position(|m| m.name() == name && (m.window() == window || m.method() == "tttd"))
    }
}

pub(super) fn sig_len(s: &Sig) -> usize {
    match s {
        Sig::Features(v) => v.len(),
        Sig::Windows(v) => v.len(),
        Sig::Chunks(v, _) => v.len(),
    }
}

/// Run `f(k)` for k in 0..n on `jobs` threads, taking work in order
/// ([`ordered_map`]; every result is kept, so all may be in flight).
pub(super) fn parallel<T: Send>(n: usize, jobs: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut threads = vec![(); jobs.max(1).min(n.max(1))];
    let mut out = Vec::with_capacity(n);
    let mut k = 0;
    ordered_map::<_, _, _, fsim::error::Error>(
        &mut threads,
        n,
        |_, k| f(k),
        || {
            k += 1;
            Ok((k <= n).then_some(k - 1))
        },
        |r| {
            out.push(r);
            Ok(())
        },
    )
    .expect("neither the jobs nor the results fail");
    out
}

/// One document's signature per method and, per method, variant and
/// number of edits, the similarity of the edited copy to the original.
type PerDoc = (Vec<Sig>, Vec<[Vec<f64>; 2]>);

/// [`PerDoc`] of document `d`: its edits planned, then each method's
/// similarity for the edit counts its grid asks for.
fn measure_doc(cfg: &Config, d: &Doc, methods: &[MethodConf]) -> PerDoc {
    let max_i = cfg.max_i;
    let edits = Edits::plan(&d.data, max_i, cfg.seed ^ mix64(d.id as u64));
    let orig: Vec<Sig> = methods.iter().map(|m| m.signature(&d.data)).collect();
    let mut sims: Vec<[Vec<f64>; 2]> = methods
        .iter()
        .map(|_| [vec![f64::NAN; max_i + 1], vec![f64::NAN; max_i + 1]])
        .collect();
    // i = 0 is the original itself.
    for (s, m) in sims.iter_mut().zip(methods) {
        for v in Variant::ALL {
            if m.grid.has(v, 0) {
                s[v as usize][0] = 1.0;
            }
        }
    }
    for v in Variant::ALL {
        let avail = match v {
            Variant::Insert => edits.inserts.len(),
            Variant::Delete => edits.deletes.len(),
        };
        // `i` is the number of edits, not only an index.
        #[allow(clippy::needless_range_loop)]
        for i in 1..=max_i.min(avail) {
            let want: Vec<usize> = (0..methods.len())
                .filter(|&m| methods[m].grid.has(v, i))
                .collect();
            if want.is_empty() {
                continue;
            }
            let dup = match v {
                Variant::Insert => insert_words(&d.data, &cfg.word, &edits.inserts[..i]),
                Variant::Delete => delete_words(&d.data, &edits.deletes[..i]),
            };
            for m in want {
                let sig = methods[m].signature(&dup);
                let x = methods[m].similarity(&orig[m], &sig);
                sims[m][v as usize][i] = x;
            }
        }
    }
    (orig, sims)
}

/// Measure every method on the documents.
pub fn measure(cfg: &Config, docs: &[Doc], methods: &[MethodConf]) -> Results {
    let nd = docs.len();
    let max_i = cfg.max_i;
    // Largest documents first, for an even load.
    let mut order: Vec<usize> = (0..nd).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(docs[d].data.len()));
    let done = AtomicUsize::new(0);
    let per_doc: Vec<PerDoc> = parallel(nd, cfg.jobs, |k| {
        let per = measure_doc(cfg, &docs[order[k]], methods);
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if !cfg.quiet {
            eprint!("\rfsim-eval: {n}/{nd} documents");
        }
        per
    });
    if !cfg.quiet {
        eprintln!();
    }
    // Back to document order.
    let mut by_doc: Vec<Option<PerDoc>> = (0..nd).map(|_| None).collect();
    for (k, r) in per_doc.into_iter().enumerate() {
        by_doc[order[k]] = Some(r);
    }
    let by_doc: Vec<PerDoc> = by_doc.into_iter().map(|x| x.unwrap()).collect();
    let sims = (0..methods.len())
        .map(|m| {
            let mk = |v: usize| {
                (0..=max_i)
                    .map(|i| by_doc.iter().map(|d| d.1[m][v][i]).collect())
                    .collect()
            };
            [mk(0), mk(1)]
        })
        .collect();
    let sig_len = (0..methods.len())
        .map(|m| by_doc.iter().map(|d| sig_len(&d.0[m]) as f64).sum::<f64>() / nd.max(1) as f64)
        .collect();
    // Pairs of distinct originals, one method per job.
    let pairs = parallel(methods.len(), cfg.jobs, |m| {
        let mut v = Vec::with_capacity(nd * nd.saturating_sub(1) / 2);
        for a in 0..nd {
            for b in a + 1..nd {
                v.push(methods[m].similarity(&by_doc[a].0[m], &by_doc[b].0[m]));
            }
        }
        v
    });
    drop(by_doc);
    let (times, timing_bytes) = if cfg.timing {
        time_methods(docs, methods)
    } else {
        (vec![f64::NAN; methods.len()], None)
    };
    Results {
        methods: methods.to_vec(),
        max_i,
        sims,
        pairs,
        times,
        timing_bytes,
        sig_len,
    }
}

/// Size of the timing document (figure 11).
pub const TIMING_BYTES: usize = 500_000;

/// Processing time of a 500 KB document under each method: the first
/// 500,000 bytes of the documents concatenated, largest first (one
/// document when the folder has one that large). Signature only, fastest
/// of five runs, one thread. Returns the times and the document's size.
pub(super) fn time_methods(docs: &[Doc], methods: &[MethodConf]) -> (Vec<f64>, Option<usize>) {
    let mut by_size: Vec<&Doc> = docs.iter().collect();
    by_size.sort_by_key(|d| std::cmp::Reverse(d.data.len()));
    let mut doc = Vec::with_capacity(TIMING_BYTES);
    for d in by_size {
        if doc.len() >= TIMING_BYTES {
            break;
        }
        doc.extend_from_slice(&d.data);
    }
    doc.truncate(TIMING_BYTES);
    if doc.is_empty() {
        return (vec![f64::NAN; methods.len()], None);
    }
    let times = methods
        .iter()
        .map(|m| {
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    let s = m.signature(&doc);
                    let e = t.elapsed().as_secs_f64();
                    std::hint::black_box(s);
                    e
                })
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    (times, Some(doc.len()))
}
