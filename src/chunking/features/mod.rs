//! Feature extractors: the other systems of the papers, as alternatives to
//! whole-chunk MD5 (`fsim-chunk --method ...`).
//!
//! Every method turns a file into a **set of features** (a 128-bit hash and
//! a weight, always 1) written as ordinary chunk records, so that sort,
//! partition, binpack and analyze run unchanged; fsim-analyze then turns the
//! number of features two files share into the similarity estimate that fits
//! the method ([`estimate`], docs/formats.md).
//!
//! | method | paper | features of a file | estimate |
//! |---|---|---|---|
//! | `sif` | Manber 1994 | windows of `w` bytes whose fingerprint has its low `bits` bits zero, never overlapping (or, `anchors=L`, windows starting at hashed anchors of `L` bytes) | resemblance of the sets |
//! | `mod` | HP Mod_n | fingerprints ≡ 0 mod n | resemblance |
//! | `min` | HP Min_n | the n smallest fingerprints | resemblance |
//! | `bsw-min` | HP BSW_n | smallest fingerprint of each chunk (boundary where fp mod n = 0) | resemblance |
//! | `sketch` | HP Sketch_n, Broder | min of each of n hash functions, tagged with its index | matching positions / n |
//! | `oneperm` | one-permutation hashing | min of each of n bins of one hash, empty bins densified by rotation | matching positions / n |
//! | `bbit` | b-bit minwise hashing | low b bits of each Sketch_n minimum, tagged | (m/n − 2^-b) / (1 − 2^-b) |
//! | `supershingle` | Manasse | s hashes of runs of k sketch values | (m/s)^(1/k) when m ≥ 2 (megashingle rule), else 0 |
//!
//! The window fingerprint is a Karp-Rabin hash modulo 2^61-1 ([`rolling`]).
//! Normalisation ([`normalize()`]) is applied first by [`extract`].
//!
//! The API is pure (no I/O) so that the evaluation harness can call it:
//! [`MethodSpec`] (from CLI arguments or header params), [`extract`],
//! [`similarity`], [`containment`], [`estimate`], [`normalize()`].

mod hp;
mod minhash;
pub mod normalize;
pub mod rolling;
mod sif;

pub use normalize::{normalize, Normalize};

use crate::formats::headers::ChunkParams;
use crate::formats::{mix128, Params};
use std::fmt;
use std::str::FromStr;

/// One feature of a file: a 128-bit hash (a well-mixed bijection of the
/// method, position tag and fingerprint) and a weight (1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Feature {
    pub hash: u128,
    pub weight: u32,
}

/// The feature methods (`--method`). `tttd` and `bsw` are chunk methods
/// ([`crate::chunking::chunker::Method`]), not listed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureMethod {
    Sif,
    Mod,
    Min,
    Sketch,
    BswMin,
    Supershingle,
    OnePerm,
    BBit,
}

impl FeatureMethod {
    pub const ALL: [FeatureMethod; 8] = [
        FeatureMethod::Sif,
        FeatureMethod::Mod,
        FeatureMethod::Min,
        FeatureMethod::Sketch,
        FeatureMethod::BswMin,
        FeatureMethod::Supershingle,
        FeatureMethod::OnePerm,
        FeatureMethod::BBit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FeatureMethod::Sif => "sif",
            FeatureMethod::Mod => "mod",
            FeatureMethod::Min => "min",
            FeatureMethod::Sketch => "sketch",
            FeatureMethod::BswMin => "bsw-min",
            FeatureMethod::Supershingle => "supershingle",
            FeatureMethod::OnePerm => "oneperm",
            FeatureMethod::BBit => "bbit",
        }
    }

    /// The estimate fsim-analyze computes for this method.
    pub fn estimator(self) -> Estimator {
        match self {
            FeatureMethod::Sif
            | FeatureMethod::Mod
            | FeatureMethod::Min
            | FeatureMethod::BswMin => Estimator::Resemblance,
            FeatureMethod::Sketch | FeatureMethod::OnePerm => Estimator::Positions,
            FeatureMethod::BBit => Estimator::BBit,
            FeatureMethod::Supershingle => Estimator::Megashingle,
        }
    }

    fn id(self) -> u128 {
        FeatureMethod::ALL.iter().position(|&m| m == self).unwrap() as u128 + 1
    }
}

impl fmt::Display for FeatureMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FeatureMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FeatureMethod::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("unknown method {s:?}: expected tttd, bsw, {}", names()))
    }
}

/// The feature method names, comma separated (for messages).
pub fn names() -> String {
    FeatureMethod::ALL
        .iter()
        .map(|m| m.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// True when `method` (a header's `method=`) names a feature method.
pub fn is_feature_method(method: &str) -> bool {
    method.parse::<FeatureMethod>().is_ok()
}

/// How the number of shared features becomes a similarity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// `m / (fa + fb - m)`: matching features over the union of the sets.
    Resemblance,
    /// `m / n`: matching positions of fixed-length signatures.
    Positions,
    /// `(m/n - 2^-b) / (1 - 2^-b)`, clamped to 0..=1.
    BBit,
    /// `(m/s)^(1/k)` when m ≥ 2 supershingles match, else 0.
    Megashingle,
}

impl Estimator {
    pub fn as_str(self) -> &'static str {
        match self {
            Estimator::Resemblance => "resemblance",
            Estimator::Positions => "positions",
            Estimator::BBit => "bbit",
            Estimator::Megashingle => "megashingle",
        }
    }
}

/// A feature method with all its parameters: what `fsim-chunk --method`
/// builds and what the headers record. Only the fields of its method are
/// used (and written to the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    pub method: FeatureMethod,
    /// Window (shingle) length in bytes.
    pub window: usize,
    /// Mod_n / BSW_n divisor; Min_n, Sketch_n, b-bit count; one-permutation bins.
    pub n: u32,
    /// sif: select fingerprints whose low `bits` bits are zero (1 in 2^bits).
    pub bits: u32,
    /// sif: anchor length (0: no anchors, select by fingerprint value).
    pub anchors: u32,
    /// supershingle: sketch values per supershingle.
    pub k: u32,
    /// supershingle: supershingles per file.
    pub s: u32,
    /// bbit: bits kept per sketch value.
    pub b: u32,
    pub norm: Normalize,
}

/// Largest accepted n (signature length or divisor).
pub const MAX_N: u32 = 1 << 20;
/// Largest accepted window.
pub const MAX_WINDOW: usize = 1 << 16;

impl MethodSpec {
    /// The defaults of `method`: sif w=50 bits=8 (Manber); mod/min/sketch/
    /// bsw-min/bbit/oneperm w=20 n=100 (HP paper); bbit b=8; supershingle
    /// w=20 k=14 s=6 (Manasse: 84 sketch values).
    pub fn new(method: FeatureMethod) -> MethodSpec {
        MethodSpec {
            method,
            window: if method == FeatureMethod::Sif { 50 } else { 20 },
            n: 100,
            bits: 8,
            anchors: 0,
            k: 14,
            s: 6,
            b: 8,
            norm: Normalize::default(),
        }
    }

    /// Check the parameters' ranges.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_WINDOW).contains(&self.window) {
            return Err(format!("window must be within 1..={MAX_WINDOW} bytes"));
        }
        match self.method {
            FeatureMethod::Sif => {
                if self.bits > 30 {
                    return Err("bits must be within 0..=30".into());
                }
                if self.anchors > 16 {
                    return Err("anchor length must be within 0..=16".into());
                }
            }
            FeatureMethod::Supershingle => {
                if self.k == 0 || self.s == 0 || self.k as u64 * self.s as u64 > MAX_N as u64 {
                    return Err(format!("k and s must be at least 1, k × s at most {MAX_N}"));
                }
            }
            FeatureMethod::BBit => {
                if !(1..=32).contains(&self.b) {
                    return Err("b must be within 1..=32".into());
                }
                if !(1..=MAX_N).contains(&self.n) {
                    return Err(format!("n must be within 1..={MAX_N}"));
                }
            }
            _ => {
                if !(1..=MAX_N).contains(&self.n) {
                    return Err(format!("n must be within 1..={MAX_N}"));
                }
            }
        }
        Ok(())
    }

    /// The header parameters that say how the features were made, typed:
    /// the method's own sizes only (a sif run has no `n=`).
    pub fn chunk_params(&self) -> ChunkParams {
        let (mut n, mut bits, mut anchors, mut k, mut s, mut b) =
            (None, None, None, None, None, None);
        match self.method {
            FeatureMethod::Sif => (bits, anchors) = (Some(self.bits), Some(self.anchors)),
            FeatureMethod::Supershingle => (k, s) = (Some(self.k), Some(self.s)),
            FeatureMethod::BBit => (n, b) = (Some(self.n), Some(self.b)),
            _ => n = Some(self.n),
        }
        let wide = |v: Option<u32>| v.map(u64::from);
        ChunkParams {
            method: Some(self.method.to_string()),
            window: Some(self.window as u64),
            hash: Some("kr61".into()),
            n: wide(n),
            bits: wide(bits),
            anchors: wide(anchors),
            k: wide(k),
            s: wide(s),
            b: wide(b),
            fold_case: Some(self.norm.fold_case),
            collapse_whitespace: Some(self.norm.collapse_whitespace),
            strip_html: Some(self.norm.strip_html),
            // As the chunk methods' (`Chunker::chunk_params`).
            pdf: crate::content::pdf_extractor_param().map(Into::into),
            office: crate::content::office_extractor_param(),
            views: crate::content::views_param(),
            ..ChunkParams::default()
        }
    }

    /// [`MethodSpec::chunk_params`] as header parameters, in
    /// [`crate::formats::CHUNK_PARAM_KEYS`] order.
    pub fn params(&self) -> Params {
        self.chunk_params().to_params()
    }

    /// The spec that wrote a header (errors name what is missing or wrong).
    pub fn from_params(p: &Params) -> Result<MethodSpec, String> {
        MethodSpec::from_chunk_params(&ChunkParams::parse(p)?)
    }

    /// The spec that wrote these chunking parameters.
    pub fn from_chunk_params(p: &ChunkParams) -> Result<MethodSpec, String> {
        let method: FeatureMethod = p
            .method
            .as_deref()
            .ok_or("no method= in the header")?
            .parse()?;
        let mut s = MethodSpec::new(method);
        let num = |k: &str, v: Option<u64>| -> Result<u64, String> {
            v.ok_or_else(|| format!("no {k}= (a number) in the header of a {method} run"))
        };
        let flag = |k: &str, v: Option<bool>| -> Result<bool, String> {
            v.ok_or_else(|| format!("no {k}=0|1 in the header of a {method} run"))
        };
        let small = |v: u64| u32::try_from(v).map_err(|_| "parameter out of range".to_string());
        s.window = usize::try_from(num("window", p.window)?).map_err(|_| "window out of range")?;
        match method {
            FeatureMethod::Sif => {
                s.bits = small(num("bits", p.bits)?)?;
                s.anchors = small(num("anchors", p.anchors)?)?;
            }
            FeatureMethod::Supershingle => {
                s.k = small(num("k", p.k)?)?;
                s.s = small(num("s", p.s)?)?;
            }
            FeatureMethod::BBit => {
                s.n = small(num("n", p.n)?)?;
                s.b = small(num("b", p.b)?)?;
            }
            _ => s.n = small(num("n", p.n)?)?,
        }
        s.norm = Normalize {
            fold_case: flag("fold-case", p.fold_case)?,
            collapse_whitespace: flag("collapse-whitespace", p.collapse_whitespace)?,
            strip_html: flag("strip-html", p.strip_html)?,
        };
        if p.hash.as_deref() != Some("kr61") {
            return Err(format!(
                "hash={} in the header: this fsim makes features with hash=kr61",
                p.hash.as_deref().unwrap_or("(none)")
            ));
        }
        s.validate()?;
        Ok(s)
    }

    /// Length of the fixed signature (sketch, oneperm, bbit: n;
    /// supershingle: s), or None for the set methods.
    pub fn signature_len(&self) -> Option<u32> {
        match self.method.estimator() {
            Estimator::Positions | Estimator::BBit => Some(self.n),
            Estimator::Megashingle => Some(self.s),
            Estimator::Resemblance => None,
        }
    }
}

/// The feature hash of fingerprint `v` with position tag `tag` (0 for the
/// set methods): a bijection, so distinct (tag, v) never collide.
#[inline]
pub(crate) fn feature_hash(method: FeatureMethod, tag: u32, v: u64) -> u128 {
    mix128((method.id() << 96) | ((tag as u128) << 64) | v as u128)
}

/// Append the features of `data` (after normalising it with `spec.norm`) to
/// `out`: sorted by hash, without duplicates (a set), weight 1. Pure and
/// deterministic: the same bytes give the same features on every machine.
pub fn extract(spec: &MethodSpec, data: &[u8], out: &mut Vec<Feature>) {
    let data = normalize(&spec.norm, data);
    let start = out.len();
    let mut push = |tag: u32, v: u64| {
        out.push(Feature {
            hash: feature_hash(spec.method, tag, v),
            weight: 1,
        })
    };
    match spec.method {
        FeatureMethod::Sif => sif::extract(&data, spec.window, spec.bits, spec.anchors, &mut push),
        FeatureMethod::Mod => hp::modn(&data, spec.window, spec.n, &mut push),
        FeatureMethod::Min => hp::minn(&data, spec.window, spec.n, &mut push),
        FeatureMethod::BswMin => hp::bsw_min(&data, spec.window, spec.n, &mut push),
        FeatureMethod::Sketch => minhash::sketch(&data, spec.window, spec.n, None, &mut push),
        FeatureMethod::BBit => minhash::sketch(&data, spec.window, spec.n, Some(spec.b), &mut push),
        FeatureMethod::OnePerm => minhash::one_perm(&data, spec.window, spec.n, &mut push),
        FeatureMethod::Supershingle => {
            minhash::supershingles(&data, spec.window, spec.k, spec.s, &mut push)
        }
    }
    let mut v = out.split_off(start);
    v.sort_unstable();
    v.dedup_by_key(|f| f.hash);
    out.extend_from_slice(&v);
}

/// Distinct hashes shared by `a` and `b`, and the distinct counts of each.
pub fn overlap(a: &[Feature], b: &[Feature]) -> (u64, u64, u64) {
    let set = |x: &[Feature]| {
        let mut v: Vec<u128> = x.iter().map(|f| f.hash).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (a, b) = (set(a), set(b));
    let (mut i, mut j, mut m) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                m += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (m, a.len() as u64, b.len() as u64)
}

/// The similarity estimate of the method from `m` shared (distinct)
/// features and the distinct feature counts `fa`, `fb` of the two files
/// (see [`Estimator`]). Within 0..=1; 0 when there is no evidence (no
/// features, or fewer than two supershingles).
pub fn estimate(spec: &MethodSpec, m: u64, fa: u64, fb: u64) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let r = match spec.method.estimator() {
        Estimator::Resemblance => {
            let union = (fa + fb).saturating_sub(m);
            if union == 0 {
                0.0
            } else {
                m as f64 / union as f64
            }
        }
        Estimator::Positions => m as f64 / spec.n as f64,
        Estimator::BBit => {
            let chance = (-(spec.b as f64)).exp2();
            (m as f64 / spec.n as f64 - chance) / (1.0 - chance)
        }
        Estimator::Megashingle => {
            if m < 2 {
                0.0
            } else {
                (m as f64 / spec.s as f64).powf(1.0 / spec.k as f64)
            }
        }
    };
    r.clamp(0.0, 1.0)
}

/// The method's similarity estimate of two feature lists (as written by
/// [`extract`]): [`estimate`] of their overlap.
pub fn similarity(spec: &MethodSpec, a: &[Feature], b: &[Feature]) -> f64 {
    let (m, fa, fb) = overlap(a, b);
    estimate(spec, m, fa, fb)
}

/// Containment of the smaller feature set in the other: `m / min(fa, fb)`
/// (0 when either is empty). Meaningful for the set methods (`sif`, `mod`,
/// `bsw-min`); `min` and the sketches cannot estimate containment (HP
/// paper, table 1).
pub fn containment(_spec: &MethodSpec, a: &[Feature], b: &[Feature]) -> f64 {
    let (m, fa, fb) = overlap(a, b);
    let small = fa.min(fb);
    if small == 0 {
        0.0
    } else {
        m as f64 / small as f64
    }
}

/// Estimated bytes in common of two files of `sa` and `sb` bytes whose
/// resemblance is `r`: `r (sa + sb) / (1 + r)`, at most the smaller size.
/// This is what fsim-analyze writes in the bytes-in-common field for
/// feature methods, so that `c / (sa + sb - c)` gives `r` back and
/// `c / size` is the share of each file (exact when the files' shingle
/// counts are proportional to their sizes).
pub fn common_bytes(r: f64, sa: u64, sb: u64) -> u64 {
    let c = (r * (sa + sb) as f64 / (1.0 + r)).round() as u64;
    c.min(sa.min(sb))
}

/// The chunk stage's reader for feature methods: read the whole stream
/// (features such as Min_n need all of it), classify it from its first
/// 8 KiB, hash the raw content with MD5 (the file table's content hash: equal
/// content, equal hash, whatever the normalisation) and append its features
/// as (hash, weight) pieces. Memory: the largest file being read, per
/// thread. `buf` is the worker's read buffer, used for reading.
pub fn chunk_stream(
    r: &mut impl std::io::Read,
    spec: &MethodSpec,
    buf: &mut [u8],
    pieces: &mut Vec<crate::chunking::stream::Piece>,
) -> std::io::Result<crate::chunking::stream::StreamInfo> {
    use md5::{Digest as _, Md5};
    let mut data = Vec::new();
    let mut md5 = Md5::new();
    loop {
        match r.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                md5.update(&buf[..n]);
                data.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let size = data.len() as u64;
    let ftype = if size == 0 {
        crate::formats::FileType::Empty
    } else {
        crate::formats::FileType::classify(
            &data[..data.len().min(crate::chunking::stream::HEAD)],
            size,
        )
    };
    let mut feats = Vec::new();
    extract(spec, &data, &mut feats);
    pieces.extend(feats.iter().map(|f| (f.hash, f.weight)));
    Ok(crate::chunking::stream::StreamInfo {
        size,
        content: crate::formats::digest_to_u128(&md5.finalize()),
        ftype,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Text-like data from a seed (shared with the submodules' tests).
    pub fn text(len: usize, seed: u64) -> Vec<u8> {
        crate::chunking::chunker::pseudo_text(len, seed)
    }

    /// Exact Jaccard of the w-shingle sets.
    pub fn jaccard(a: &[u8], b: &[u8], w: usize) -> f64 {
        use std::collections::HashSet;
        let sa: HashSet<&[u8]> = a.windows(w).collect();
        let sb: HashSet<&[u8]> = b.windows(w).collect();
        sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64
    }

    /// `base` with `edits` random words replaced, deterministic.
    pub fn edit(base: &[u8], edits: usize, seed: u64) -> Vec<u8> {
        let mut v = base.to_vec();
        let mut x = seed;
        for _ in 0..edits {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let p = (x >> 33) as usize % (v.len() - 8);
            v.splice(p..p + 4, b"QZXW".iter().copied());
        }
        v
    }

    fn all_specs() -> Vec<MethodSpec> {
        FeatureMethod::ALL
            .iter()
            .map(|&m| MethodSpec::new(m))
            .collect()
    }

    #[test]
    fn params_round_trip_and_keys() {
        for mut s in all_specs() {
            s.norm.fold_case = true;
            let p = s.params();
            for (k, _) in &p.0 {
                assert!(
                    crate::formats::CHUNK_PARAM_KEYS.contains(&k.as_str()),
                    "{k}"
                );
            }
            assert_eq!(MethodSpec::from_params(&p), Ok(s));
        }
        let p = MethodSpec::new(FeatureMethod::Mod).params();
        assert_eq!(
            p.0.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            "method=mod window=20 hash=kr61 n=100 fold-case=0 collapse-whitespace=0 strip-html=0"
        );
        assert!(MethodSpec::from_params(&p.clone().with("hash", "md5")).is_err());
        assert!("tttd".parse::<FeatureMethod>().is_err());
        assert!(is_feature_method("bsw-min") && !is_feature_method("bsw"));
    }

    #[test]
    fn identical_and_disjoint() {
        let a = text(40_000, 1);
        let b = text(40_000, 2);
        for s in all_specs() {
            let (mut fa, mut fb) = (Vec::new(), Vec::new());
            extract(&s, &a, &mut fa);
            extract(&s, &b, &mut fb);
            assert!(!fa.is_empty(), "{}", s.method);
            assert!(fa.windows(2).all(|w| w[0].hash < w[1].hash));
            assert_eq!(similarity(&s, &fa, &fa), 1.0, "{}", s.method);
            let d = similarity(&s, &fa, &fb);
            // b-bit keeps a little chance agreement; the rest share nothing.
            assert!(d < 0.05, "{}: disjoint similarity {d}", s.method);
        }
    }

    #[test]
    fn estimates_track_jaccard() {
        // Near-duplicates with edits: every method's estimate within a
        // tolerance of the exact Jaccard of the 20-byte shingles (50 for sif).
        let base = text(60_000, 7);
        for edits in [5, 40, 150] {
            let other = edit(&base, edits, edits as u64);
            for s in all_specs() {
                let exact = jaccard(&base, &other, s.window);
                let (mut fa, mut fb) = (Vec::new(), Vec::new());
                extract(&s, &base, &mut fa);
                extract(&s, &other, &mut fb);
                let est = similarity(&s, &fa, &fb);
                let tol = match s.method {
                    FeatureMethod::Supershingle => 1.0, // checked below
                    FeatureMethod::Sif => 0.12,
                    _ => 0.15,
                };
                assert!(
                    (est - exact).abs() <= tol,
                    "{} edits={edits}: estimate {est:.3} exact {exact:.3}",
                    s.method
                );
                if s.method == FeatureMethod::Supershingle && exact < 0.5 {
                    assert_eq!(est, 0.0, "megashingles must not match at {exact:.3}");
                }
            }
        }
    }

    #[test]
    fn estimate_formulas() {
        let s = MethodSpec::new(FeatureMethod::Mod);
        assert_eq!(estimate(&s, 5, 10, 10), 5.0 / 15.0);
        assert_eq!(estimate(&s, 0, 10, 10), 0.0);
        let s = MethodSpec::new(FeatureMethod::Sketch);
        assert_eq!(estimate(&s, 50, 100, 100), 0.5);
        let mut s = MethodSpec::new(FeatureMethod::BBit);
        s.b = 1;
        assert_eq!(estimate(&s, 75, 100, 100), 0.5);
        assert_eq!(estimate(&s, 40, 100, 100), 0.0);
        let s = MethodSpec::new(FeatureMethod::Supershingle);
        assert_eq!(estimate(&s, 1, 6, 6), 0.0);
        assert_eq!(estimate(&s, 6, 6, 6), 1.0);
        assert!((estimate(&s, 3, 6, 6) - 0.5f64.powf(1.0 / 14.0)).abs() < 1e-12);
        assert_eq!(common_bytes(1.0, 100, 100), 100);
        assert_eq!(common_bytes(1.0 / 3.0, 100, 100), 50);
        assert_eq!(common_bytes(0.9, 100, 10_000), 100);
    }
}

#[cfg(test)]
mod known_answers {
    use super::*;

    /// Count and a digest of each method's features on a fixed input: a
    /// silent change in any extractor (window hash, selection, tagging)
    /// fails here and needs a new `hash=` name in the headers.
    #[test]
    fn pinned_features() {
        let d = crate::chunking::chunker::pseudo_text(50_000, 42);
        let got: Vec<String> = FeatureMethod::ALL
            .iter()
            .map(|&m| {
                let s = MethodSpec::new(m);
                let mut f = Vec::new();
                extract(&s, &d, &mut f);
                let dig = f.iter().fold(0u128, |a, x| a.wrapping_add(mix128(x.hash)));
                format!("{m} {} {:08x}", f.len(), (dig >> 96) as u32)
            })
            .collect();
        assert_eq!(got.join("\n"), PIN);
    }
    const PIN: &str = "sif 160 11ee77a9
mod 472 0af8eff0
min 100 e2da2566
sketch 100 38ec99ec
bsw-min 473 8b4eaa52
supershingle 6 caa630fc
oneperm 100 73f73bcc
bbit 100 2a201df5";
}
