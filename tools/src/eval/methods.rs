//! The methods compared: the paper's four feature methods at each window
//! and fsim's TTTD chunk graph, their signatures and similarities.

use super::*;

/// How a method turns a document into a signature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algo {
    /// A feature method of [`fsim::chunking::features`].
    Feature(MethodSpec),
    /// Exact resemblance of the sets of all w-byte windows (what the
    /// sampling methods estimate).
    Exact(usize),
    /// fsim's chunk graph: TTTD chunks of this average size, MD5 each;
    /// similarity = bytes of shared chunks / size of the smaller file.
    Tttd(usize),
}

/// Which near-duplicates a method is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grid {
    /// Insertions and deletions, every i (the main window).
    Full,
    /// Insertions only, i = 1, 2, 3 and multiples of 5 (the window sweep).
    Sweep,
}

impl Grid {
    pub fn has(self, variant: Variant, i: usize) -> bool {
        match self {
            Grid::Full => true,
            Grid::Sweep => variant == Variant::Insert && (i <= 3 || i.is_multiple_of(5)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Insert,
    Delete,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Insert, Variant::Delete];
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Insert => "insert",
            Variant::Delete => "delete",
        }
    }
}

/// A method as the CSV names it: `method`, `n`, `window`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodConf {
    pub algo: Algo,
    pub grid: Grid,
}

impl MethodConf {
    pub fn method(&self) -> &'static str {
        match self.algo {
            Algo::Feature(s) => s.method.as_str(),
            Algo::Exact(_) => "exact",
            Algo::Tttd(_) => "tttd",
        }
    }

    /// Mod_n / Min_n / Sketch_n / BSW_n: n; sif: 2^bits (one window in n);
    /// TTTD: the average chunk size; exact: 1.
    pub fn n(&self) -> u64 {
        match self.algo {
            Algo::Feature(s) if s.method == FeatureMethod::Sif => 1 << s.bits,
            Algo::Feature(s) => s.n as u64,
            Algo::Exact(_) => 1,
            Algo::Tttd(avg) => avg as u64,
        }
    }

    /// Window in bytes (TTTD: the gear hash's 64-byte window).
    pub fn window(&self) -> usize {
        match self.algo {
            Algo::Feature(s) => s.window,
            Algo::Exact(w) => w,
            Algo::Tttd(_) => fsim::chunking::chunker::WINDOW,
        }
    }

    /// The paper's name: `Mod_100`, `BSW_400`, `sif_256`, `TTTD_100`.
    pub fn name(&self) -> String {
        let base = match self.method() {
            "mod" => "Mod",
            "min" => "Min",
            "sketch" => "Sketch",
            "bsw-min" => "BSW",
            "sif" => "sif",
            "exact" => return "exact".into(),
            "tttd" => "TTTD",
            other => other,
        };
        format!("{base}_{}", self.n())
    }

    /// `Mod_100 w=20` (TTTD has no w: it is the same in every window plot).
    pub fn label(&self) -> String {
        match self.algo {
            Algo::Tttd(_) => self.name(),
            _ => format!("{} w={}", self.name(), self.window()),
        }
    }

    /// The signature of `data`.
    pub fn signature(&self, data: &[u8]) -> Sig {
        match self.algo {
            Algo::Feature(spec) => {
                let mut v = Vec::new();
                features::extract(&spec, data, &mut v);
                Sig::Features(v)
            }
            Algo::Exact(w) => {
                let mut v = Vec::with_capacity(data.len());
                for_each_window(data, w, |_, fp| v.push(fp));
                v.sort_unstable();
                v.dedup();
                Sig::Windows(v)
            }
            Algo::Tttd(avg) => {
                let c = Chunker::new(Method::Tttd, avg).expect("valid average chunk size");
                Sig::Chunks(tttd_chunks(&c, data), data.len() as u64)
            }
        }
    }

    /// The method's similarity of two signatures (within 0..=1).
    pub fn similarity(&self, a: &Sig, b: &Sig) -> f64 {
        match (self.algo, a, b) {
            (Algo::Feature(spec), Sig::Features(x), Sig::Features(y)) => {
                let m = count_common(x, y, |f: &Feature| f.hash);
                features::estimate(&spec, m, x.len() as u64, y.len() as u64)
            }
            (Algo::Exact(_), Sig::Windows(x), Sig::Windows(y)) => {
                let m = count_common(x, y, |&v| v);
                let union = (x.len() + y.len()) as u64 - m;
                if union == 0 {
                    0.0
                } else {
                    m as f64 / union as f64
                }
            }
            (Algo::Tttd(_), Sig::Chunks(x, sx), Sig::Chunks(y, sy)) => {
                let small = (*sx).min(*sy);
                if small == 0 {
                    0.0
                } else {
                    (shared_chunk_bytes(x, y) as f64 / small as f64).min(1.0)
                }
            }
            _ => panic!("signature of another method"),
        }
    }
}

/// A document's signature under one method.
#[derive(Debug, Clone)]
pub enum Sig {
    /// Sorted, distinct features ([`features::extract`]).
    Features(Vec<Feature>),
    /// Sorted, distinct window fingerprints.
    Windows(Vec<u64>),
    /// Sorted (MD5, length) of every chunk (repeats kept), and the size.
    Chunks(Vec<(u128, u32)>, u64),
}

/// TTTD chunks of `data` as sorted (MD5, length), repeats kept.
pub fn tttd_chunks(c: &Chunker, data: &[u8]) -> Vec<(u128, u32)> {
    let mut v: Vec<(u128, u32)> = c
        .chunks(data)
        .map(|ch| {
            let d = Md5::digest(&data[ch.offset..ch.offset + ch.len]);
            (fsim::formats::digest_to_u128(&d), ch.len as u32)
        })
        .collect();
    v.sort_unstable();
    v
}

/// Bytes of the chunks two sorted chunk lists share, each chunk counted
/// min(occurrences in a, occurrences in b) times.
pub fn shared_chunk_bytes(a: &[(u128, u32)], b: &[(u128, u32)]) -> u64 {
    let (mut i, mut j, mut s) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += a[i].1 as u64;
                i += 1;
                j += 1;
            }
        }
    }
    s
}

/// Common elements of two sorted, distinct lists.
pub(super) fn count_common<T, K: Ord>(a: &[T], b: &[T], key: impl Fn(&T) -> K) -> u64 {
    let (mut i, mut j, mut m) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match key(&a[i]).cmp(&key(&b[j])) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                m += 1;
                i += 1;
                j += 1;
            }
        }
    }
    m
}

pub(super) fn spec(method: FeatureMethod, window: usize, n: u32) -> MethodSpec {
    let mut s = MethodSpec::new(method);
    s.window = window;
    s.n = n;
    s
}

/// The methods of the run: the sweep methods (Mod_100, Min_100,
/// Sketch_100, BSW_400, sif 1/256) at every window; at the main window
/// also Mod_500, BSW_100/500/1000, Sketch_10, the exact resemblance, and
/// TTTD with average chunks of 100 (fsim's default) and 1000 bytes.
pub fn methods(windows: &[usize]) -> Vec<MethodConf> {
    let mut v = Vec::new();
    let mut add = |algo: Algo, w: usize| {
        let grid = if w == MAIN_WINDOW {
            Grid::Full
        } else {
            Grid::Sweep
        };
        let m = MethodConf { algo, grid };
        if !v.contains(&m) {
            v.push(m);
        }
    };
    let mut ws: Vec<usize> = windows.to_vec();
    if !ws.contains(&MAIN_WINDOW) {
        ws.push(MAIN_WINDOW);
    }
    ws.sort_unstable();
    ws.dedup();
    for &w in &ws {
        add(Algo::Feature(spec(FeatureMethod::Mod, w, 100)), w);
        add(Algo::Feature(spec(FeatureMethod::Min, w, 100)), w);
        add(Algo::Feature(spec(FeatureMethod::Sketch, w, 100)), w);
        add(Algo::Feature(spec(FeatureMethod::BswMin, w, 400)), w);
        add(Algo::Feature(spec(FeatureMethod::Sif, w, 100)), w);
        add(Algo::Exact(w), w);
    }
    let w = MAIN_WINDOW;
    add(Algo::Feature(spec(FeatureMethod::Mod, w, 500)), w);
    add(Algo::Feature(spec(FeatureMethod::BswMin, w, 100)), w);
    add(Algo::Feature(spec(FeatureMethod::BswMin, w, 500)), w);
    add(Algo::Feature(spec(FeatureMethod::BswMin, w, 1000)), w);
    add(Algo::Feature(spec(FeatureMethod::Sketch, w, 10)), w);
    add(Algo::Tttd(100), w);
    add(Algo::Tttd(1000), w);
    v
}
