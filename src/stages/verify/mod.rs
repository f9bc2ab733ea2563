//! fsim-verify: the post-processing step of the paper's section 2.3. Shared
//! chunks give only a lower bound of what two files have in common; this
//! stage reads the two files of each candidate pair and computes the exact
//! figure, and the shared regions (offsets) for a side-by-side view.
//!
//! * **Text pairs** (both files typed `text` or `empty` in the file table):
//!   bytes of a longest common subsequence of **lines** (a line is the bytes
//!   up to and including `\n`; the last line may lack it). Lines longer than
//!   [`MAX_LINE`] are cut into content-defined pieces (TTTD, average
//!   [`PIECE_AVG`]) so that a 100 MB file without newlines is not one
//!   all-or-nothing token.
//! * **Other pairs**: LCS over content-defined pieces of the whole file
//!   (TTTD, average [`PIECE_AVG`] bytes), counting the bytes of the common
//!   pieces.
//!
//! The diff is the `similar` crate's Myers algorithm over interned token
//! ids. Why `similar` and not `imara-diff` (faster, used by gitoxide):
//! imara-diff's Myers, even in `MyersMinimal` mode, prunes frequent lines
//! (blank lines, `}`) that sit among unmatched ones before diffing, so its
//! edit script is not guaranteed minimal: fine for display, not for a figure
//! labelled exact. `similar`'s Myers is the plain `O((N+M)D)` algorithm with
//! no heuristic, and takes any `Eq` tokens plus a hook that receives the
//! equal runs, which is exactly what we need. We remove, before diffing,
//! the tokens that do not occur in the other file at all (they can never be
//! matched, so the LCS is unchanged) which makes dissimilar pairs cheap.
//! Myers maximises the *number* of common lines; among subsequences of equal
//! length the byte count may differ slightly, as with `diff`.
//!
//! Tokens are identified by their xxh3-128 hash (a false match has
//! probability ~n²/2¹²⁹, negligible), so a tokenized file costs 24 bytes per
//! token in the cache and the file's bytes are not kept.
//!
//! **Stale files**: before reading, the file's size and mtime are compared
//! with the file table; if they differ, or the file is gone or unreadable,
//! or the bytes read differ in number from the size, the pair keeps its
//! chunk lower bound and is written `lower-bound`, with one warning per
//! file. A file whose size and mtime match is trusted without rehashing: the
//! content hash would cost an MD5 pass over every file (the paper's chunk
//! stage bound) for a case that needs an edit that preserves both size and
//! mtime.
//!
//! **Cost guard**: Myers costs `O((N+M)D)`. When the pruned token sequences
//! are long (over [`EXACT_TOKENS`]) an upper bound of D is taken from a
//! cheap common subsequence (LIS of the tokens unique in both files); if
//! `(N+M)·D` could exceed [`MYERS_BUDGET`], that cheap subsequence is the
//! answer and the pair is `lower-bound`. The decision depends only on the
//! data, so the output does not depend on timing or `-j`.
//!
//! **Memory and I/O**: pairs are streamed in batches; within a batch, pairs
//! are grouped by file a (the analysis writes them sorted by (a, b)), each
//! worker reads and tokenizes a once per group, and keeps the tokenized
//! files that a later group of the batch needs, until their last use, in an
//! LRU cache bounded by `--memory` / jobs. A pair needs both files' bytes in
//! memory transiently (one reused buffer per worker); token buffers are
//! recycled, so a worker allocates nothing per file or pair once warm.
//!
//! **Determinism**: groups are handed to `-j` workers dynamically, results
//! are written in input order, so output and warnings are byte-identical
//! for any `-j`.

mod previous;

use crate::chunking::chunker::{Chunker, Cut, Method};
use crate::error::{Error, Result};
use crate::formats::files::read_file_table;
use crate::formats::open_input;
use crate::formats::{
    digest_params, escape_path_string, mix128, parse_id, parse_u64, split_fields, write_header,
    write_id, write_trailer, write_u64, Digest, FileEntry, FileType, InputCheck, Kind, Line,
    LineReader, CHUNK_PARAM_KEYS,
};
use crate::formats::{percent, PercentOf};
use crate::io::Output;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Name used in messages.
pub const PROG: &str = "fsim-verify";

/// Average piece size for binary files and over-long lines: small enough
/// that an edit costs few bytes of the figure, large enough that a 100 MB
/// file is ~1.6 M tokens.
pub const PIECE_AVG: usize = 64;

/// Lines longer than this are cut into pieces.
pub const MAX_LINE: usize = 64 << 10;

/// Up to this many tokens (both files, after pruning) Myers runs without
/// the cost guard: worst case ~N²/2 steps, well under a second.
pub const EXACT_TOKENS: usize = 1 << 15;

/// Largest `(N+M)·D` bound for which Myers runs on long inputs.
pub const MYERS_BUDGET: u64 = 1 << 31;

/// Pairs read before a batch is handed to the workers (memory: ~100 bytes
/// per pair plus the regions of the batch).
const BATCH_PAIRS: usize = 1 << 16;

/// Pairs per unit of work handed to a worker (cut at group boundaries).
const UNIT_PAIRS: usize = 64;

/// Validated options of a run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: PathBuf,
    pub pairs: PathBuf,
    pub output: Option<PathBuf>,
    pub regions: Option<PathBuf>,
    pub min_percent: f64,
    pub percent_of: PercentOf,
    /// Cache budget in bytes (all workers together).
    pub memory: u64,
    pub jobs: usize,
    pub quiet: bool,
    /// Templates files the analysis used (`--templates`): their chunks are
    /// cut out of each file before comparing (the payload).
    pub templates: Vec<PathBuf>,
    /// An earlier run's verified pairs, file table and regions
    /// (`--previous`, `--previous-files`, `--previous-regions`): figures of
    /// pairs whose files are unchanged are reused ([`previous`]).
    pub previous: Option<(PathBuf, PathBuf, Option<PathBuf>)>,
}

/// How a pair's files are cut into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Lines (over-long lines cut into pieces).
    Lines,
    /// Content-defined pieces of the whole file.
    Pieces,
}

impl Mode {
    /// Lines when both files are text (or empty), pieces otherwise: both
    /// files of a pair must be cut the same way.
    pub fn of(a: FileType, b: FileType) -> Mode {
        let text = |t| matches!(t, FileType::Text | FileType::Empty);
        if text(a) && text(b) {
            Mode::Lines
        } else {
            Mode::Pieces
        }
    }
}

/// A file cut into tokens: the hash of each token and where it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokens {
    pub hashes: Vec<u128>,
    /// Start offset of each token, plus the file size at the end.
    pub starts: Vec<u64>,
}

impl Tokens {
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Bytes of tokens `i..i + n`.
    #[inline]
    pub fn bytes(&self, i: usize, n: usize) -> u64 {
        self.starts[i + n] - self.starts[i]
    }

    /// Approximate heap bytes, for the cache budget.
    pub fn mem(&self) -> u64 {
        (self.hashes.capacity() * 16 + self.starts.capacity() * 8 + 64) as u64
    }

    fn push(&mut self, data: &[u8], start: usize, end: usize) {
        self.hashes
            .push(xxhash_rust::xxh3::xxh3_128(&data[start..end]));
        self.starts.push(end as u64);
    }
}

/// The piece chunker (TTTD, average [`PIECE_AVG`]).
pub fn piece_chunker() -> Chunker {
    Chunker::new(Method::Tttd, PIECE_AVG).expect("PIECE_AVG is a valid average")
}

/// Cut `data` into tokens for `mode`.
pub fn tokenize(data: &[u8], mode: Mode, pieces: &Chunker) -> Tokens {
    let mut t = Tokens::default();
    tokenize_into(data, mode, pieces, &mut t);
    t
}

/// [`tokenize`] into `t`, reusing its buffers: the workers tokenize every
/// file into recycled [`Tokens`], so the hot loop allocates nothing once
/// the buffers have grown to the largest file seen.
pub fn tokenize_into(data: &[u8], mode: Mode, pieces: &Chunker, t: &mut Tokens) {
    t.hashes.clear();
    t.starts.clear();
    t.starts.push(0);
    match mode {
        Mode::Pieces => {
            t.hashes.reserve(data.len() / PIECE_AVG + 1);
            t.starts.reserve(data.len() / PIECE_AVG + 1);
            for c in pieces.chunks(data) {
                t.push(data, c.offset, c.offset + c.len);
            }
        }
        Mode::Lines => {
            t.hashes.reserve(data.len() / 32 + 1);
            t.starts.reserve(data.len() / 32 + 1);
            let mut start = 0;
            let line = |t: &mut Tokens, s: usize, e: usize| {
                if e - s > MAX_LINE {
                    for c in pieces.chunks(&data[s..e]) {
                        t.push(data, s + c.offset, s + c.offset + c.len);
                    }
                } else {
                    t.push(data, s, e);
                }
            };
            for nl in memchr::memchr_iter(b'\n', data) {
                line(t, start, nl + 1);
                start = nl + 1;
            }
            if start < data.len() {
                line(t, start, data.len());
            }
        }
    }
}

/// A region shared by two files: `len` bytes at `off_a` in a and `off_b` in b.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub off_a: u64,
    pub off_b: u64,
    pub len: u64,
}

/// The result of comparing two tokenized files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Bytes of the common subsequence found.
    pub common: u64,
    /// Maximal runs of consecutive matched tokens (when asked for).
    pub regions: Vec<Region>,
    /// True when `common` is the LCS (false: the cost guard gave up and
    /// `common` is a lower bound).
    pub exact: bool,
    /// True when the pair cannot reach [`Differ::floor`]: `common` is then
    /// an upper bound (below the floor) and no diff was made.
    pub below: bool,
}

/// A hasher for keys that are already uniform hashes (xxh3-128).
#[derive(Default)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64 ^ (v >> 64) as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type TokenMap = HashMap<u128, u32, BuildHasherDefault<PreHashed>>;

/// Reusable state to compare one file a with many files b: a's tokens are
/// interned once ([`Differ::set_a`]), each b is looked up in that table
/// (tokens of b absent from a cannot match and are dropped on the spot).
#[derive(Default)]
pub struct Differ {
    /// Bytes in common a pair must be able to reach to be diffed (0: any):
    /// when the tokens of a found in b, or those of b found in a, weigh
    /// less, the LCS cannot reach it and the pair stops there.
    pub floor: u64,
    map: TokenMap,
    a_ids: Vec<u32>,
    stamp: Vec<u32>,
    pair_no: u32,
    pa: Vec<u32>,
    pa_idx: Vec<u32>,
    pb: Vec<u32>,
    pb_idx: Vec<u32>,
}

impl Differ {
    pub fn new() -> Differ {
        Differ::default()
    }

    /// Intern the tokens of file a.
    pub fn set_a(&mut self, a: &Tokens) {
        self.trim(a.len());
        self.map.clear();
        self.a_ids.clear();
        for &h in &a.hashes {
            let next = self.map.len() as u32;
            let id = *self.map.entry(h).or_insert(next);
            self.a_ids.push(id);
        }
        self.stamp.clear();
        self.stamp.resize(self.map.len(), 0);
        self.pair_no = 0;
    }

    /// Give back the memory of a large file once the files are smaller
    /// (the buffers keep the capacity of the largest file seen otherwise).
    fn trim(&mut self, tokens: usize) {
        const KEEP: usize = 1 << 16;
        let keep = (2 * tokens).max(KEEP);
        if self.map.capacity() > keep {
            self.map = TokenMap::default();
        }
        for v in [
            &mut self.a_ids,
            &mut self.stamp,
            &mut self.pa,
            &mut self.pa_idx,
            &mut self.pb,
            &mut self.pb_idx,
        ] {
            if v.capacity() > keep {
                *v = Vec::new();
            }
        }
    }

    /// Compare b with the a given to [`Differ::set_a`].
    pub fn compare(&mut self, a: &Tokens, b: &Tokens, want_regions: bool) -> Comparison {
        debug_assert_eq!(a.len(), self.a_ids.len());
        self.pair_no = self.pair_no.wrapping_add(1);
        if self.pair_no == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.pair_no = 1;
        }
        let no = self.pair_no;
        self.pb.clear();
        self.pb_idx.clear();
        for (j, h) in b.hashes.iter().enumerate() {
            if let Some(&id) = self.map.get(h) {
                self.stamp[id as usize] = no;
                self.pb.push(id);
                self.pb_idx.push(j as u32);
            }
        }
        self.pa.clear();
        self.pa_idx.clear();
        for (i, &id) in self.a_ids.iter().enumerate() {
            if self.stamp[id as usize] == no {
                self.pa.push(id);
                self.pa_idx.push(i as u32);
            }
        }
        if self.floor > 0 {
            let bytes = |idx: &[u32], t: &Tokens| -> u64 {
                idx.iter().map(|&i| t.bytes(i as usize, 1)).sum()
            };
            let bound = bytes(&self.pa_idx, a).min(bytes(&self.pb_idx, b));
            if bound < self.floor {
                return Comparison {
                    common: bound,
                    below: true,
                    ..Comparison::default()
                };
            }
        }
        let mut hook = Runs {
            pa_idx: &self.pa_idx,
            pb_idx: &self.pb_idx,
            a,
            b,
            want_regions,
            out: Comparison {
                exact: true,
                ..Comparison::default()
            },
            cur: None,
        };
        let n = self.pa.len() + self.pb.len();
        let affordable = n <= EXACT_TOKENS || {
            let anchors = unique_lis(&self.pa, &self.pb, self.stamp.len());
            let d_bound = (n - 2 * anchors.len()) as u64;
            if (n as u64).saturating_mul(d_bound) <= MYERS_BUDGET {
                true
            } else {
                for (i, j) in anchors {
                    let _ = similar::algorithms::DiffHook::equal(&mut hook, i, j, 1);
                }
                hook.out.exact = false;
                false
            }
        };
        if affordable {
            let _ = similar::algorithms::myers::diff(
                &mut hook,
                &self.pa[..],
                0..self.pa.len(),
                &self.pb[..],
                0..self.pb.len(),
            );
        }
        hook.flush();
        hook.out
    }
}

/// Compare two tokenized files (a fresh [`Differ`]: for tests and one-offs).
pub fn compare(a: &Tokens, b: &Tokens, want_regions: bool) -> Comparison {
    let mut d = Differ::new();
    d.set_a(a);
    d.compare(a, b, want_regions)
}

/// A cheap common subsequence of `pa` and `pb`: the longest increasing run
/// of positions of the tokens that occur exactly once in each (patience
/// anchors). Returns matched (index in pa, index in pb), increasing.
fn unique_lis(pa: &[u32], pb: &[u32], ids: usize) -> Vec<(usize, usize)> {
    const NONE: u32 = u32::MAX;
    let mut count_a = vec![0u8; ids];
    let mut count_b = vec![0u8; ids];
    let mut pos_a = vec![NONE; ids];
    for (i, &t) in pa.iter().enumerate() {
        count_a[t as usize] = count_a[t as usize].saturating_add(1);
        pos_a[t as usize] = i as u32;
    }
    for &t in pb {
        count_b[t as usize] = count_b[t as usize].saturating_add(1);
    }
    // (position in a, position in b) of unique tokens, in b order.
    let seq: Vec<(u32, u32)> = pb
        .iter()
        .enumerate()
        .filter(|(_, &t)| count_a[t as usize] == 1 && count_b[t as usize] == 1)
        .map(|(j, &t)| (pos_a[t as usize], j as u32))
        .collect();
    // Longest increasing subsequence on the a positions (patience sorting).
    let mut tails: Vec<usize> = Vec::new();
    let mut prev = vec![usize::MAX; seq.len()];
    for (k, &(x, _)) in seq.iter().enumerate() {
        let p = tails.partition_point(|&t| seq[t].0 < x);
        if p > 0 {
            prev[k] = tails[p - 1];
        }
        if p == tails.len() {
            tails.push(k);
        } else {
            tails[p] = k;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut k = tails.last().copied().unwrap_or(usize::MAX);
    while k != usize::MAX {
        out.push((seq[k].0 as usize, seq[k].1 as usize));
        k = prev[k];
    }
    out.reverse();
    out
}

/// Diff hook: sums the bytes of matched tokens and merges consecutive
/// matches (in the original, unpruned positions) into regions.
struct Runs<'x> {
    pa_idx: &'x [u32],
    pb_idx: &'x [u32],
    a: &'x Tokens,
    b: &'x Tokens,
    want_regions: bool,
    out: Comparison,
    /// Current run: (token in a, token in b, tokens).
    cur: Option<(usize, usize, usize)>,
}

impl Runs<'_> {
    fn flush(&mut self) {
        if let Some((i, j, n)) = self.cur.take() {
            let len = self.a.bytes(i, n);
            debug_assert_eq!(len, self.b.bytes(j, n));
            self.out.common += len;
            if self.want_regions {
                self.out.regions.push(Region {
                    off_a: self.a.starts[i],
                    off_b: self.b.starts[j],
                    len,
                });
            }
        }
    }
}

impl similar::algorithms::DiffHook for Runs<'_> {
    type Error = std::convert::Infallible;

    fn equal(
        &mut self,
        old: usize,
        new: usize,
        len: usize,
    ) -> std::result::Result<(), Self::Error> {
        for k in 0..len {
            let i = self.pa_idx[old + k] as usize;
            let j = self.pb_idx[new + k] as usize;
            match &mut self.cur {
                Some((ci, cj, n)) if *ci + *n == i && *cj + *n == j => *n += 1,
                _ => {
                    self.flush();
                    self.cur = Some((i, j, 1));
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Reading files
// ---------------------------------------------------------------------------

/// Why a file could not be verified (the text after the escaped path).
pub type Stale = String;

/// Read a file if it still is what the file table says, into `buf`, and
/// return its bytes (a prefix of `buf`).
///
/// Three system calls for a small file: open, fstat on the open file (so
/// that size and mtime are those of the file read, not of a path that may
/// have been replaced in between) and one read. The read asks for one byte
/// more than the size, so a file that grew is noticed. When it returns
/// exactly the size, that short read has met the end of the file (Linux
/// returns short reads of regular files only there), so no second read is
/// made to see `0`; any other short read is followed by more reads. A file
/// changed after that read is a race no check can exclude: the mtime was
/// checked just before.
///
/// `buf` keeps its largest length between calls: only new bytes are zeroed
/// when it grows, instead of the whole file's length on every call.
pub fn read_checked<'b>(
    e: &FileEntry,
    buf: &'b mut Vec<u8>,
) -> std::result::Result<&'b [u8], Stale> {
    let path = Path::new(std::ffi::OsStr::from_bytes(&e.path));
    let mut f = crate::io::longpath::open_file(path)
        .map_err(|err| format!("vanished or unreadable since chunking ({err})"))?;
    let meta = f
        .metadata()
        .map_err(|err| format!("unreadable since chunking ({err})"))?;
    if !meta.is_file() {
        return Err("no longer a regular file".into());
    }
    if meta.len() != e.size {
        return Err(format!(
            "changed since chunking (size {} -> {})",
            e.size,
            meta.len()
        ));
    }
    if meta.mtime() != e.mtime_s || meta.mtime_nsec() as u32 != e.mtime_ns {
        return Err(format!(
            "changed since chunking (mtime {}.{:09} -> {}.{:09})",
            e.mtime_s,
            e.mtime_ns,
            meta.mtime(),
            meta.mtime_nsec()
        ));
    }
    let want = usize::try_from(e.size + 1).map_err(|_| "too large for memory".to_string())?;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut filled = 0;
    while filled < want {
        match f.read(&mut buf[filled..want]) {
            Ok(0) => break,
            Ok(n) => {
                let short = n < want - filled;
                filled += n;
                if short && filled as u64 == e.size {
                    break;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(format!("unreadable since chunking ({err})")),
        }
    }
    if filled as u64 != e.size {
        return Err(format!(
            "changed while being read (size {} -> {}{})",
            e.size,
            filled,
            if filled == want { " or more" } else { "" }
        ));
    }
    Ok(&buf[..filled])
}

/// Largest token buffers kept for reuse: a large file's buffers are freed
/// (8 of them per worker, outside the cache's accounting).
const SPARE_MAX: u64 = 1 << 20;

/// Largest file buffer a worker keeps between files.
const BUF_KEEP: usize = 8 << 20;

/// Working memory of a worker comparing files of `bytes` bytes together,
/// per byte: the files' bytes (1), the tokens of both (24 bytes per token,
/// one token per ~20 bytes of catalogs), the interning table, the pruned
/// sequences and Myers' arrays; measured on translation catalogs (lines of
/// ~25 bytes) at about 3.5 bytes per byte. Reserved in the cache's budget
/// while the worker runs the pair, so that the cache shrinks to make room.
const WORK_PER_BYTE: u64 = 4;

/// Token buffers kept for reuse (per worker).
const SPARE_COUNT: usize = 8;

/// Tokenized files kept for later pairs, shared by the workers (behind a
/// mutex): a file read by one worker is found by the other.
///
/// An LRU bounded in bytes, from which a file is also removed as soon as
/// no later pair needs it ([`Plan::needed_after`]): the cache then holds
/// the files still to be used instead of growing to its budget. Entries
/// removed are handed back to the caller, whose worker recycles their
/// buffers once nobody holds them (fresh memory costs a page fault per
/// 4 KiB on first touch: allocation and page faults were ~20% of the
/// benchmark's CPU time before recycling; docs/performance-verify.md).
struct Cache {
    budget: u64,
    used: u64,
    /// The workers' working memory, reserved in the budget.
    reserved: u64,
    clock: u64,
    map: HashMap<(u32, Mode), (Arc<Tokens>, u64)>,
    order: BTreeMap<u64, (u32, Mode)>,
}

impl Cache {
    fn new(budget: u64) -> Cache {
        Cache {
            budget,
            used: 0,
            reserved: 0,
            clock: 0,
            map: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    fn get(&mut self, key: (u32, Mode)) -> Option<Arc<Tokens>> {
        let (t, stamp) = self.map.get_mut(&key)?;
        self.order.remove(stamp);
        self.clock += 1;
        *stamp = self.clock;
        self.order.insert(self.clock, key);
        Some(t.clone())
    }

    /// Add a file, evicting the least recently used ones into `gone`.
    fn put(&mut self, key: (u32, Mode), t: Arc<Tokens>, gone: &mut Vec<Arc<Tokens>>) {
        if let Some((o, stamp)) = self.map.remove(&key) {
            self.order.remove(&stamp);
            self.used -= o.mem();
            gone.push(o);
        }
        let m = t.mem();
        if m + self.reserved > self.budget {
            return;
        }
        while self.used + m + self.reserved > self.budget {
            let Some((_, old)) = self.order.pop_first() else {
                break;
            };
            if let Some((o, _)) = self.map.remove(&old) {
                self.used -= o.mem();
                gone.push(o);
            }
        }
        self.clock += 1;
        self.order.insert(self.clock, key);
        self.used += m;
        self.map.insert(key, (t, self.clock));
    }

    /// A worker's working memory changes from `old` to `new` bytes: evict
    /// (into `gone`) until the cache and the reservations fit the budget.
    fn reserve(&mut self, old: u64, new: u64, gone: &mut Vec<Arc<Tokens>>) {
        self.reserved = self.reserved - old + new;
        while self.used + self.reserved > self.budget {
            let Some((_, key)) = self.order.pop_first() else {
                break;
            };
            if let Some((o, _)) = self.map.remove(&key) {
                self.used -= o.mem();
                gone.push(o);
            }
        }
    }

    /// Remove a file (in both modes) into `gone`.
    fn remove(&mut self, id: u32, gone: &mut Vec<Arc<Tokens>>) {
        if self.map.is_empty() {
            return;
        }
        for mode in [Mode::Lines, Mode::Pieces] {
            if let Some((t, stamp)) = self.map.remove(&(id, mode)) {
                self.order.remove(&stamp);
                self.used -= t.mem();
                gone.push(t);
            }
        }
    }

    /// Keep only the files for which `keep(id)` holds.
    fn retain(&mut self, keep: impl Fn(u32) -> bool) {
        let mut stamps = Vec::new();
        let mut freed = 0;
        self.map.retain(|&(id, _), (t, stamp)| {
            keep(id) || {
                stamps.push(*stamp);
                freed += t.mem();
                false
            }
        });
        for s in stamps {
            self.order.remove(&s);
        }
        self.used -= freed;
    }
}

/// A shared cache and the means to lock it (a poisoned lock is taken
/// anyway: the cache holds no invariant a panicking worker could break
/// half-way that matters more than the panic itself, which is re-raised).
type SharedCache = std::sync::Mutex<Cache>;

fn lock(c: &SharedCache) -> std::sync::MutexGuard<'_, Cache> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the current batch needs of each file, indexed by file id (kept
/// across batches and reset by visiting the batch's pairs: the cost is per
/// pair, not per file of the table); and, when the pairs could be read
/// twice, what the whole input needs ([`Global`]).
struct Plan {
    /// Index in the batch of the last pair that uses the file ([`NONE`]:
    /// not in the batch).
    last: Vec<u32>,
    /// Index of the first pair that uses it (valid when `last` is).
    first: Vec<u32>,
    /// The group (run of pairs with the same a) that last used the file.
    group: Vec<u32>,
    /// Used by more than one group: worth caching. Caching the others only
    /// costs memory (each b of the benchmark is used once).
    reuse: Vec<bool>,
    /// Index in the whole input of the batch's first pair.
    base: u64,
    global: Option<Global>,
}

/// What the whole input needs of each file, from a first reading of the
/// pairs: a file is kept in the cache from batch to batch until its last
/// pair, so that it is read about once, however far apart its pairs are.
struct Global {
    /// Index (among the pairs kept by the size-ratio filter) of the last
    /// pair that uses the file, [`NONE`] if none.
    last: Vec<u32>,
    /// Used by more than one group of the whole input.
    reuse: Vec<bool>,
}

/// No pair of the batch uses the file.
const NONE: u32 = u32::MAX;

impl Global {
    /// Fold in the pair at `index` (its group number `group`).
    fn add(&mut self, group_of: &mut [u32], index: u32, group: u32, a: u32, b: u32) {
        for f in [a as usize, b as usize] {
            if f >= self.last.len() {
                continue;
            }
            if self.last[f] != NONE && group_of[f] != group {
                self.reuse[f] = true;
            }
            group_of[f] = group;
            self.last[f] = index;
        }
    }
}

impl Plan {
    fn new(files: usize) -> Plan {
        Plan {
            last: vec![NONE; files],
            first: vec![0; files],
            group: vec![0; files],
            reuse: vec![false; files],
            base: 0,
            global: None,
        }
    }

    fn set(&mut self, batch: &[PairIn]) {
        let mut group = 0u32;
        for (i, p) in batch.iter().enumerate() {
            if i > 0 && batch[i - 1].a != p.a {
                group += 1;
            }
            for f in [p.a as usize, p.b as usize] {
                if self.last[f] == NONE {
                    self.first[f] = i as u32;
                } else if self.group[f] != group {
                    self.reuse[f] = true;
                }
                self.group[f] = group;
                self.last[f] = i as u32;
            }
        }
    }

    /// Forget the batch (whose first pair was at `base`): the next one
    /// starts after it.
    fn clear(&mut self, batch: &[PairIn]) {
        for p in batch {
            for f in [p.a as usize, p.b as usize] {
                self.last[f] = NONE;
                self.reuse[f] = false;
            }
        }
        self.base += batch.len() as u64;
    }

    /// Is file `id` used by a pair at index `at` of the batch or later?
    fn needed_from(&self, id: u32, at: u32) -> bool {
        match &self.global {
            Some(g) => {
                let l = g.last[id as usize];
                l != NONE && l as u64 >= self.base + at as u64
            }
            None => {
                let l = self.last[id as usize];
                l != NONE && l >= at
            }
        }
    }

    /// Worth caching: more than one group uses the file (of the whole
    /// input when known, else of the batch).
    fn keep(&self, id: u32) -> bool {
        match &self.global {
            Some(g) => g.reuse[id as usize],
            None => self.reuse[id as usize],
        }
    }
}

/// One candidate pair as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairIn {
    pub a: u32,
    pub b: u32,
    pub size_a: u64,
    pub size_b: u64,
    /// Chunk lower bound (field 5).
    pub common: u64,
    pub shared: u64,
}

/// What verification gave for one pair.
#[derive(Debug, Clone, Default)]
struct Outcome {
    /// Exact figure, or the best lower bound known.
    common: u64,
    exact: bool,
    regions: Vec<Region>,
    /// (file id, reason) of files found stale for this pair.
    stale: Vec<(u32, Stale)>,
    /// Stopped early: `common` is an upper bound below the threshold (the
    /// pair is dropped as an exact one below it would be).
    below: bool,
}

/// Per-thread state kept across batches.
struct Worker {
    /// Token buffers of files no longer needed, reused for the next files.
    spare: Vec<Tokens>,
    /// Entries taken out of the cache, to recycle once the lock is released.
    gone: Vec<Arc<Tokens>>,
    /// Working memory reserved in the cache's budget ([`WORK_PER_BYTE`]).
    reserved: u64,
    differ: Differ,
    /// File bytes: kept at the largest length read (see [`read_checked`]).
    buf: Vec<u8>,
    pieces: Chunker,
    /// Files found stale by this worker (not retried).
    bad: HashMap<u32, Stale>,
    files_read: u64,
    bytes_read: u64,
    /// Templates and the run's chunker, when the analysis ignored templates.
    templates: Option<Arc<(crate::formats::templates::TemplateSet, Chunker)>>,
    payload: Vec<u8>,
    /// `--min-percent` and `--percent-of`: pairs that cannot reach it stop
    /// before the diff.
    threshold: (f64, PercentOf),
}

impl Worker {
    fn new() -> Worker {
        Worker {
            spare: Vec::new(),
            gone: Vec::new(),
            reserved: 0,
            differ: Differ::new(),
            buf: Vec::new(),
            pieces: piece_chunker(),
            bad: HashMap::new(),
            files_read: 0,
            bytes_read: 0,
            templates: None,
            payload: Vec::new(),
            threshold: (0.0, PercentOf::Smaller),
        }
    }

    /// The fewest bytes in common with which pair `p` reaches the
    /// threshold (0: no threshold): an LCS below it is dropped anyway.
    fn floor(&self, p: &PairIn) -> u64 {
        let (min, of) = self.threshold;
        if min <= 0.0 {
            return 0;
        }
        let whole = base(p, of);
        let mut f = ((min / 100.0 * whole as f64) as u64).saturating_sub(1);
        while f <= whole && percent(f, whole) < min {
            f += 1;
        }
        f
    }

    /// Take back a file's tokens once nobody else holds them.
    fn recycle(&mut self, t: Arc<Tokens>) {
        if let Ok(t) = Arc::try_unwrap(t) {
            if self.spare.len() < SPARE_COUNT && t.mem() <= SPARE_MAX {
                self.spare.push(t);
            }
        }
    }

    /// Reserve the working memory of a pair of files of `bytes` bytes (or
    /// release it: 0). Locks only when it grows or halves.
    fn reserve(&mut self, cache: &SharedCache, bytes: u64) {
        let need = bytes.saturating_mul(WORK_PER_BYTE);
        if need > self.reserved || need < self.reserved / 2 {
            lock(cache).reserve(self.reserved, need, &mut self.gone);
            self.reserved = need;
            self.recycle_gone();
        }
    }

    /// Recycle what the cache handed back.
    fn recycle_gone(&mut self) {
        while let Some(t) = self.gone.pop() {
            self.recycle(t);
        }
    }

    /// Tokens of a file: from the cache, or read and tokenized into
    /// recycled buffers (and cached when `keep`: a later group needs it).
    fn load(
        &mut self,
        cache: &SharedCache,
        e: &FileEntry,
        payload: u64,
        mode: Mode,
        keep: bool,
    ) -> std::result::Result<Arc<Tokens>, Stale> {
        if let Some(s) = self.bad.get(&e.id) {
            return Err(s.clone());
        }
        if keep {
            if let Some(t) = lock(cache).get((e.id, mode)) {
                return Ok(t);
            }
        }
        let data = match read_checked(e, &mut self.buf) {
            Ok(d) => d,
            Err(s) => {
                self.bad.insert(e.id, s.clone());
                return Err(s);
            }
        };
        self.files_read += 1;
        self.bytes_read += data.len() as u64;
        let mut t = self.spare.pop().unwrap_or_default();
        match &self.templates {
            None => tokenize_into(data, mode, &self.pieces, &mut t),
            Some(tc) => {
                crate::chunking::reader::payload(&tc.1, &tc.0, data, &mut self.payload);
                if self.payload.len() as u64 != payload {
                    let s = format!(
                        "its payload is {} bytes now, {payload} in the analysis (file or templates changed)",
                        self.payload.len()
                    );
                    self.bad.insert(e.id, s.clone());
                    return Err(s);
                }
                tokenize_into(&self.payload, mode, &self.pieces, &mut t);
            }
        }
        if self.buf.len() > BUF_KEEP {
            // Do not keep a large file's buffer for the rest of the run.
            self.buf = Vec::new();
        }
        if keep {
            // Kept for long: no slack (recycled buffers have the capacity
            // of the largest file seen).
            t.hashes.shrink_to_fit();
            t.starts.shrink_to_fit();
        }
        let t = Arc::new(t);
        if keep {
            lock(cache).put((e.id, mode), t.clone(), &mut self.gone);
            self.recycle_gone();
        }
        Ok(t)
    }

    /// Verify a run of pairs, `first` the index in the batch of the first
    /// (consecutive pairs with the same a share the tokenization and
    /// interning of a).
    fn run(
        &mut self,
        cache: &SharedCache,
        pairs: &[PairIn],
        first: usize,
        files: &[FileEntry],
        plan: &Plan,
        want_regions: bool,
    ) -> Vec<Outcome> {
        let first = first as u32;
        let mut out = Vec::with_capacity(pairs.len());
        let mut cur: Option<(u32, Mode, std::result::Result<Arc<Tokens>, Stale>)> = None;
        for (k, p) in pairs.iter().enumerate() {
            let at = first + k as u32;
            let (fa, fb) = (&files[p.a as usize], &files[p.b as usize]);
            self.reserve(cache, fa.size + fb.size);
            let mode = Mode::of(fa.ftype, fb.ftype);
            if !matches!(&cur, Some((a, m, _)) if *a == p.a && *m == mode) {
                if let Some((_, _, Ok(t))) = cur.take() {
                    self.recycle(t);
                }
                let ta = self.load(cache, fa, p.size_a, mode, plan.keep(p.a));
                if let Ok(t) = &ta {
                    self.differ.set_a(t);
                }
                cur = Some((p.a, mode, ta));
            }
            let lower = |stale: Vec<(u32, Stale)>| Outcome {
                common: p.common,
                exact: false,
                regions: Vec::new(),
                stale,
                below: false,
            };
            let o = match &cur {
                Some((_, _, Ok(ta))) => {
                    match self.load(cache, fb, p.size_b, mode, plan.keep(p.b)) {
                        Ok(tb) => {
                            self.differ.floor = self.floor(p);
                            let c = self.differ.compare(ta, &tb, want_regions);
                            self.recycle(tb);
                            Outcome {
                                common: if c.exact || c.below {
                                    c.common
                                } else {
                                    c.common.max(p.common)
                                },
                                // Below the threshold: dropped like an exact
                                // figure below it (the exact one is smaller).
                                exact: c.exact || c.below,
                                regions: if c.exact { c.regions } else { Vec::new() },
                                stale: Vec::new(),
                                below: c.below,
                            }
                        }
                        Err(s) => lower(vec![(p.b, s)]),
                    }
                }
                Some((_, _, Err(s))) => lower(vec![(p.a, s.clone())]),
                None => unreachable!("set above"),
            };
            out.push(o);
            // No later pair needs these: free their tokens.
            for f in [p.a, p.b] {
                if plan.keep(f) && !plan.needed_from(f, at + 1) {
                    lock(cache).remove(f, &mut self.gone);
                }
            }
            self.recycle_gone();
        }
        if let Some((_, _, Ok(t))) = cur {
            self.recycle(t);
        }
        self.reserve(cache, 0);
        out
    }
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    pub pairs_read: u64,
    pub dropped_ratio: u64,
    pub below_threshold: u64,
    pub verified: u64,
    pub lower_bound: u64,
    pub files_read: u64,
    pub bytes_read: u64,
    pub seconds: f64,
    /// Pairs dropped below the threshold by an upper bound, without a diff.
    pub stopped_early: u64,
    /// Pairs whose figure came from the earlier run (`None`: no --previous).
    pub reused: Option<u64>,
}

impl Summary {
    pub fn line(&self) -> String {
        let rate = if self.seconds > 0.0 {
            self.pairs_read as f64 / self.seconds
        } else {
            0.0
        };
        format!(
            "{PROG}: {} pairs read, {} dropped by size ratio, {} verified ({} below the threshold), {} lower-bound only, {} files read, {} bytes read, {:.2} s ({:.0} pairs/s)",
            self.pairs_read,
            self.dropped_ratio,
            self.verified,
            self.below_threshold,
            self.lower_bound,
            self.files_read,
            self.bytes_read,
            self.seconds,
            rate
        ) + &match self.stopped_early {
            0 => String::new(),
            n => format!(", {n} stopped early (an upper bound below the threshold)"),
        } + &match self.reused {
            Some(n) => format!(", {n} reused from the earlier run"),
            None => String::new(),
        }
    }
}

/// The base of a percentage for `percent_of`.
fn base(p: &PairIn, of: PercentOf) -> u64 {
    of.base(p.size_a, p.size_b)
}

/// Digest contribution of a region.
pub fn region_mix(a: u32, b: u32, r: &Region) -> u128 {
    mix128(
        mix128(((a as u128) << 96) | ((b as u128) << 64) | r.len as u128)
            ^ (((r.off_a as u128) << 64) | r.off_b as u128),
    )
}

/// Digest contribution of a pair (same as fsim-analyze's).
pub fn pair_mix(a: u32, b: u32, common: u64) -> u128 {
    mix128(((a as u128) << 96) | ((b as u128) << 64) | common as u128)
}

/// Outputs and counters of a run.
struct Sink {
    out: Output,
    regions: Option<Output>,
    line: Vec<u8>,
    written: Digest,
    regions_written: Digest,
    warned: HashSet<u32>,
    summary: Summary,
}

impl Sink {
    fn write_batch(
        &mut self,
        batch: &[PairIn],
        outcomes: &[Outcome],
        files: &[FileEntry],
        cfg: &Config,
    ) -> Result<()> {
        self.line.clear();
        let mut rl = Vec::new();
        for (p, o) in batch.iter().zip(outcomes) {
            for (id, why) in &o.stale {
                if self.warned.insert(*id) {
                    // One write per line: whole under `make -j`.
                    crate::cli::stderr_line(format_args!(
                        "{PROG}: warning: {}: {why}; pair kept as a lower bound",
                        escape_path_string(&files[*id as usize].path)
                    ));
                }
            }
            if o.exact {
                if percent(o.common, base(p, cfg.percent_of)) < cfg.min_percent {
                    self.summary.below_threshold += 1;
                    self.summary.stopped_early += o.below as u64;
                    self.summary.verified += 1;
                    continue;
                }
                self.summary.verified += 1;
            } else {
                self.summary.lower_bound += 1;
            }
            let l = &mut self.line;
            write_id(p.a, l);
            l.push(b'\t');
            write_id(p.b, l);
            for v in [p.size_a, p.size_b, p.common, p.shared, o.common] {
                l.push(b'\t');
                write_u64(v, l);
            }
            l.extend_from_slice(if o.exact {
                b"\texact\n"
            } else {
                b"\tlower-bound\n"
            });
            self.written.add_mix(pair_mix(p.a, p.b, p.common));
            if self.regions.is_some() {
                for r in &o.regions {
                    write_id(p.a, &mut rl);
                    rl.push(b'\t');
                    write_id(p.b, &mut rl);
                    for v in [r.off_a, r.off_b, r.len] {
                        rl.push(b'\t');
                        write_u64(v, &mut rl);
                    }
                    rl.push(b'\n');
                    self.regions_written.add_mix(region_mix(p.a, p.b, r));
                }
            }
        }
        self.out.write_all(&self.line)?;
        if let Some(r) = &mut self.regions {
            r.write_all(&rl)?;
        }
        Ok(())
    }
}

/// Cut a batch into units of work at group boundaries, not before a group
/// whose file a the unit already read (as a b: a version compared with its
/// document, then with the other versions): cut there, the next unit could
/// go to the other worker, which would read the file again.
fn units(batch: &[PairIn], plan: &Plan) -> Vec<std::ops::Range<usize>> {
    let mut v = Vec::new();
    let mut start = 0;
    for i in 1..=batch.len() {
        let boundary = i == batch.len()
            || (batch[i].a != batch[i - 1].a
                && i - start >= UNIT_PAIRS
                && !(start as u32..i as u32).contains(&plan.first[batch[i].a as usize]))
            || i - start >= 16 * UNIT_PAIRS;
        if boundary {
            v.push(start..i);
            start = i;
        }
    }
    v
}

/// Verify the pairs of a batch that the earlier run does not give
/// (`reused`, taken), on all workers; outcomes in input order.
fn process_batch(
    batch: &[PairIn],
    reused: &mut Vec<Option<Outcome>>,
    workers: &mut [Worker],
    cache: &SharedCache,
    files: &[FileEntry],
    plan: &mut Plan,
    want_regions: bool,
) -> Vec<Outcome> {
    if reused.iter().all(Option::is_none) {
        reused.clear();
        return process(batch, workers, cache, files, plan, want_regions);
    }
    let todo: Vec<PairIn> = batch
        .iter()
        .zip(reused.iter())
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| *p)
        .collect();
    let mut done = process(&todo, workers, cache, files, plan, want_regions).into_iter();
    let out = reused
        .iter_mut()
        .map(|r| {
            r.take()
                .unwrap_or_else(|| done.next().expect("one outcome per pair verified"))
        })
        .collect();
    reused.clear();
    out
}

/// Verify one batch on all workers; outcomes in input order.
fn process(
    batch: &[PairIn],
    workers: &mut [Worker],
    cache: &SharedCache,
    files: &[FileEntry],
    plan: &mut Plan,
    want_regions: bool,
) -> Vec<Outcome> {
    plan.set(batch);
    let units = units(batch, plan);
    let out = if workers.len() == 1 || units.len() == 1 {
        workers[0].run(cache, batch, 0, files, plan, want_regions)
    } else {
        let plan = &*plan;
        let next = AtomicUsize::new(0);
        let mut done: Vec<(usize, Vec<Outcome>)> = std::thread::scope(|s| {
            let handles: Vec<_> = workers
                .iter_mut()
                .map(|w| {
                    let (next, units) = (&next, &units);
                    s.spawn(move || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(r) = units.get(i) else { break };
                            let o =
                                w.run(cache, &batch[r.clone()], r.start, files, plan, want_regions);
                            mine.push((i, o));
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().flat_map(|(_, o)| o).collect()
    };
    // Files cached for a pair that another worker verified first, or
    // (without the whole input's plan) for this batch only.
    let end = batch.len() as u32;
    lock(cache).retain(|id| plan.keep(id) && plan.needed_from(id, end));
    plan.clear(batch);
    out
}

const EXPECTED_PAIR: &str =
    "a pair record: file id a, file id b, size a, size b, bytes in common, shared chunks";

/// The whole input's plan ([`Global`]), from a first reading of the pairs
/// when they are a regular file (standard input or a pipe cannot be read
/// twice: the plan is then per batch). Any error is left to the real
/// reading, which reports it; the plan only decides what is cached, never a
/// figure, so the output is the same with or without it.
fn global_plan(cfg: &Config, files: usize) -> Option<Global> {
    if cfg.pairs.as_os_str() == "-" || !std::fs::metadata(&cfg.pairs).ok()?.is_file() {
        return None;
    }
    let (input, name) = open_input(&cfg.pairs).ok()?;
    let mut r = LineReader::new(input, name);
    let mut g = Global {
        last: vec![NONE; files],
        reuse: vec![false; files],
    };
    let mut group_of = vec![0u32; files];
    let (mut index, mut group, mut prev_a) = (0u32, 0u32, None);
    while let Some(raw) = r.next_raw().ok()? {
        if raw.first() == Some(&b'#') {
            continue;
        }
        let p = parse_pair(raw)?;
        if percent(p.size_a.min(p.size_b), base(&p, cfg.percent_of)) < cfg.min_percent {
            continue;
        }
        if prev_a.is_some_and(|a| a != p.a) {
            group += 1;
        }
        prev_a = Some(p.a);
        g.add(&mut group_of, index, group, p.a, p.b);
        index = index.checked_add(1).filter(|&i| i != NONE)?;
    }
    Some(g)
}

/// `fsim-verify`: read the pairs, verify them, write verified pairs.
pub fn run(cfg: &Config) -> Result<Summary> {
    let start = Instant::now();
    crate::io::wait_for_input(&cfg.pairs)?;
    let (files, table_params) = read_file_table(&cfg.files)?;
    let files_name = cfg.files.display().to_string();
    let (input, name) = open_input(&cfg.pairs)?;
    let progress =
        crate::io::progress::Progress::for_inputs(PROG, &[cfg.pairs.as_path()], cfg.quiet);
    let mut r = LineReader::new(progress.reader(input), name.clone());
    let mut check = InputCheck::new(Kind::Pairs, "pairs");
    let mut seen = Digest::default();
    let jobs = cfg.jobs.max(1);
    let tset = crate::formats::templates::TemplateSet::load(&cfg.templates, &table_params)?;
    let tshared = if tset.is_empty() {
        None
    } else {
        let c = Chunker::from_params(&table_params)
            .map_err(|m| Error::msg(format!("{files_name}: {m}")))?;
        Some(Arc::new((tset.clone(), c)))
    };
    let with_templates = tshared.is_some();
    let mut workers: Vec<Worker> = (0..jobs)
        .map(|_| {
            let mut w = Worker::new();
            w.templates = tshared.clone();
            w.threshold = (cfg.min_percent, cfg.percent_of);
            w
        })
        .collect();
    let cache = SharedCache::new(Cache::new(cfg.memory));
    let mut sink = Sink {
        out: Output::create(cfg.output.as_deref())?,
        regions: match &cfg.regions {
            Some(p) => Some(Output::create(Some(p))?),
            None => None,
        },
        line: Vec::with_capacity(1 << 20),
        written: Digest::default(),
        regions_written: Digest::default(),
        warned: HashSet::new(),
        summary: Summary::default(),
    };
    let want_regions = sink.regions.is_some();
    let mut header_written = false;
    let mut prev = match &cfg.previous {
        Some((pairs, table, regions)) => {
            let same = std::fs::canonicalize(table)
                .ok()
                .is_some_and(|t| Some(t) == std::fs::canonicalize(&cfg.files).ok());
            if same {
                return Err(Error::msg(format!(
                    "--previous-files {} is this run's file table: give the earlier run's",
                    table.display()
                )));
            }
            Some(previous::open(&files, pairs, table, regions.as_deref())?)
        }
        None => None,
    };
    let mut plan = Plan::new(files.len());
    if prev.is_none() {
        // With --previous few pairs are verified: the batch's plan does.
        plan.global = global_plan(cfg, files.len());
    }
    let mut reused: Vec<Option<Outcome>> = Vec::new();
    let mut prev_regions = Vec::new();
    let mut batch: Vec<PairIn> = Vec::new();
    while let Some((line, line_no)) = r.next_numbered()? {
        let err = |m: String| Error::input(&name, line_no, m);
        match line {
            Line::Header(k, p) => {
                check.header(k, p.clone()).map_err(err)?;
                if let Some(d) = p
                    .only(CHUNK_PARAM_KEYS)
                    .difference(&table_params.only(CHUNK_PARAM_KEYS))
                {
                    return Err(err(format!(
                        "pairs and file table {files_name} come from runs with different parameters: {d}"
                    )));
                }
                tset.check_against(&p, "these pairs").map_err(err)?;
                if p.get("verified").is_some() {
                    return Err(err(
                        "these pairs are already verified (written by fsim-verify)".into(),
                    ));
                }
                if let Some(pv) = &mut prev {
                    pv.check(&p)?;
                }
                if !header_written {
                    let mut hp = p.clone();
                    hp.set("verified", 1);
                    hp.set("verify-min-percent", cfg.min_percent);
                    hp.set("verify-percent-of", cfg.percent_of.as_str());
                    hp.set("verify-pieces", PIECE_AVG);
                    let mut h = Vec::new();
                    write_header(Kind::Pairs, &hp, &mut h);
                    sink.out.write_all(&h)?;
                    if let Some(ro) = &mut sink.regions {
                        let mut h = Vec::new();
                        let rp = p.only(CHUNK_PARAM_KEYS).with("verify-pieces", PIECE_AVG);
                        write_header(Kind::Regions, &rp, &mut h);
                        ro.write_all(&h)?;
                    }
                    header_written = true;
                }
            }
            Line::Trailer(k, p) => check.trailer(k, &p).map_err(err)?,
            Line::Comment(_) => {}
            Line::Data(d) => {
                if !header_written {
                    return Err(err(
                        "expected a '#fsim pairs v1' header (written by fsim-analyze)".into(),
                    ));
                }
                let p = parse_pair(d).ok_or_else(|| err(format!("expected {EXPECTED_PAIR}")))?;
                match (files.get(p.a as usize), files.get(p.b as usize)) {
                    // With templates the pairs carry payload sizes.
                    (Some(fa), Some(fb))
                        if p.a < p.b
                            && (fa.size == p.size_a
                                || (with_templates && fa.size > p.size_a))
                            && (fb.size == p.size_b
                                || (with_templates && fb.size > p.size_b)) => {}
                    _ => {
                        return Err(err(format!(
                            "pair {}-{} does not match the file table {files_name} (unknown id or other size): pairs from another run?",
                            p.a, p.b
                        )))
                    }
                }
                seen.add_mix(pair_mix(p.a, p.b, p.common));
                sink.summary.pairs_read += 1;
                // Size-ratio filter: even if the smaller file were wholly
                // inside the larger, the pair could not reach the threshold.
                if percent(p.size_a.min(p.size_b), base(&p, cfg.percent_of)) < cfg.min_percent {
                    sink.summary.dropped_ratio += 1;
                    continue;
                }
                if batch.len() >= BATCH_PAIRS
                    && (batch.last().map(|l| l.a) != Some(p.a) || batch.len() >= 4 * BATCH_PAIRS)
                {
                    let o = process_batch(
                        &batch,
                        &mut reused,
                        &mut workers,
                        &cache,
                        &files,
                        &mut plan,
                        want_regions,
                    );
                    sink.write_batch(&batch, &o, &files, cfg)?;
                    batch.clear();
                }
                let r = match &mut prev {
                    Some(pv) => pv
                        .lookup(&p, want_regions.then_some(&mut prev_regions))?
                        .map(|common| Outcome {
                            common,
                            exact: true,
                            regions: std::mem::take(&mut prev_regions),
                            stale: Vec::new(),
                            below: false,
                        }),
                    None => None,
                };
                reused.push(r);
                batch.push(p);
            }
        }
    }
    check.finish(&seen, &name, r.line_number())?;
    let o = process_batch(
        &batch,
        &mut reused,
        &mut workers,
        &cache,
        &files,
        &mut plan,
        want_regions,
    );
    progress.finish();
    sink.write_batch(&batch, &o, &files, cfg)?;
    let mut t = Vec::new();
    write_trailer(Kind::Pairs, &digest_params(&sink.written, "pairs"), &mut t);
    sink.out.write_all(&t)?;
    if let Some(ro) = &mut sink.regions {
        let mut t = Vec::new();
        write_trailer(
            Kind::Regions,
            &digest_params(&sink.regions_written, "regions"),
            &mut t,
        );
        ro.write_all(&t)?;
    }
    let Sink {
        out,
        regions,
        mut summary,
        ..
    } = sink;
    if let Some(ro) = regions {
        ro.finish()?;
    }
    out.finish()?;
    for w in &workers {
        summary.files_read += w.files_read;
        summary.bytes_read += w.bytes_read;
    }
    summary.seconds = start.elapsed().as_secs_f64();
    summary.reused = prev.map(|p| p.reused);
    if !cfg.quiet {
        crate::cli::stderr_line(summary.line());
    }
    Ok(summary)
}

/// Parse a 6-field pair line.
pub fn parse_pair(d: &[u8]) -> Option<PairIn> {
    let f = split_fields::<6>(d)?;
    Some(PairIn {
        a: parse_id(f[0])?,
        b: parse_id(f[1])?,
        size_a: parse_u64(f[2])?,
        size_b: parse_u64(f[3])?,
        common: parse_u64(f[4])?,
        shared: parse_u64(f[5])?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &[u8]) -> Tokens {
        tokenize(s, Mode::Lines, &piece_chunker())
    }

    /// Reference: weighted LCS of lines by dynamic programming.
    fn dp_lcs_bytes(a: &[u8], b: &[u8]) -> u64 {
        let split = |s: &[u8]| -> Vec<Vec<u8>> {
            s.split_inclusive(|&c| c == b'\n')
                .map(|l| l.to_vec())
                .collect()
        };
        let (la, lb) = (split(a), split(b));
        let mut dp = vec![vec![0u64; lb.len() + 1]; la.len() + 1];
        for i in 1..=la.len() {
            for j in 1..=lb.len() {
                dp[i][j] = if la[i - 1] == lb[j - 1] {
                    dp[i - 1][j - 1] + la[i - 1].len() as u64
                } else {
                    dp[i - 1][j].max(dp[i][j - 1])
                };
            }
        }
        dp[la.len()][lb.len()]
    }

    #[test]
    fn lcs_of_lines_known_answer() {
        let c = compare(&lines(b"a\nb\nc\n"), &lines(b"a\nx\nc\n"), true);
        assert_eq!(c.common, 4);
        assert!(c.exact);
        assert_eq!(
            c.regions,
            vec![
                Region {
                    off_a: 0,
                    off_b: 0,
                    len: 2
                },
                Region {
                    off_a: 4,
                    off_b: 4,
                    len: 2
                }
            ]
        );
    }

    #[test]
    fn regions_merge_runs_and_shift() {
        let a = b"intro\none\ntwo\nthree\nend\n";
        let b = b"new first line\none\ntwo\nthree\nX\nend\n";
        let c = compare(&lines(a), &lines(b), true);
        assert_eq!(c.common, 4 + 4 + 6 + 4);
        assert_eq!(
            c.regions,
            vec![
                Region {
                    off_a: 6,
                    off_b: 15,
                    len: 14
                },
                Region {
                    off_a: 20,
                    off_b: 31,
                    len: 4
                }
            ]
        );
        for r in &c.regions {
            assert_eq!(
                &a[r.off_a as usize..(r.off_a + r.len) as usize],
                &b[r.off_b as usize..(r.off_b + r.len) as usize]
            );
        }
    }

    #[test]
    fn identical_and_disjoint() {
        let a = b"x\ny\nz";
        assert_eq!(compare(&lines(a), &lines(a), false).common, 5);
        assert_eq!(compare(&lines(a), &lines(b"p\nq\n"), false).common, 0);
        assert_eq!(compare(&lines(b""), &lines(a), false).common, 0);
    }

    #[test]
    fn no_newline_last_line_is_a_token() {
        // "c" without newline differs from "c\n".
        let c = compare(&lines(b"a\nc"), &lines(b"a\nc\n"), false);
        assert_eq!(c.common, 2);
        let t = lines(b"no newline at all");
        assert_eq!(t.len(), 1);
        assert_eq!(t.starts, vec![0, 17]);
    }

    #[test]
    fn nul_bytes_are_ordinary_bytes() {
        let a = b"a\0b\nsame\0\n\0\0\0\n";
        let b = b"a\0c\nsame\0\n\0\0\0\n";
        assert_eq!(compare(&lines(a), &lines(b), false).common, 10);
        let pa = tokenize(a, Mode::Pieces, &piece_chunker());
        assert_eq!(pa.starts.last(), Some(&(a.len() as u64)));
    }

    #[test]
    fn very_long_line_is_cut_into_pieces() {
        let mut x = 12345u64;
        let mut a: Vec<u8> = (0..300_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b'a' + ((x >> 59) as u8 % 26)
            })
            .collect();
        let mut b = a.clone();
        b[150_000] = b'#';
        a.push(b'\n');
        b.push(b'\n');
        let (ta, tb) = (lines(&a), lines(&b));
        assert!(ta.len() > 1000, "the long line is cut: {} tokens", ta.len());
        let c = compare(&ta, &tb, true);
        assert!(c.exact);
        // Only the pieces around the edit differ.
        assert!(c.common > a.len() as u64 - 2000, "{}", c.common);
        assert!(c.common < a.len() as u64);
        for r in &c.regions {
            assert_eq!(
                &a[r.off_a as usize..(r.off_a + r.len) as usize],
                &b[r.off_b as usize..(r.off_b + r.len) as usize]
            );
        }
    }

    #[test]
    fn binary_pair_by_pieces() {
        let mut x = 7u64;
        let a: Vec<u8> = (0..20_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                (x >> 56) as u8
            })
            .collect();
        let mut b = a[..8000].to_vec();
        b.extend_from_slice(b"INSERTED\0\0BYTES");
        b.extend_from_slice(&a[8000..]);
        let p = piece_chunker();
        let (ta, tb) = (
            tokenize(&a, Mode::Pieces, &p),
            tokenize(&b, Mode::Pieces, &p),
        );
        let c = compare(&ta, &tb, true);
        assert!(c.exact);
        assert!(
            c.common >= 20_000 - 1500 && c.common < 20_000,
            "{}",
            c.common
        );
        for r in &c.regions {
            assert_eq!(
                &a[r.off_a as usize..(r.off_a + r.len) as usize],
                &b[r.off_b as usize..(r.off_b + r.len) as usize]
            );
        }
        assert_eq!(Mode::of(FileType::Text, FileType::Binary), Mode::Pieces);
        assert_eq!(Mode::of(FileType::Text, FileType::Empty), Mode::Lines);
    }

    #[test]
    fn differ_reuses_a_across_many_b() {
        let a = b"l1\nl2\nl3\nl4\nl5\n";
        let ta = lines(a);
        let mut d = Differ::new();
        d.set_a(&ta);
        for b in [&b"l1\nl3\nl5\n"[..], b"l5\nl4\n", b"zz\n", a] {
            let c = d.compare(&ta, &lines(b), false);
            assert_eq!(
                c.common,
                dp_lcs_bytes(a, b),
                "{:?}",
                String::from_utf8_lossy(b)
            );
        }
    }

    #[test]
    fn matches_dp_on_random_texts() {
        // Distinct line lengths per content, so every longest subsequence
        // by count is also longest by bytes only when lengths agree: use
        // lines of equal length to make both definitions coincide.
        let mut x = 99u64;
        let mut rnd = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for _ in 0..200 {
            let mk = |rnd: &mut dyn FnMut(u64) -> u64| -> Vec<u8> {
                let n = rnd(30);
                let mut v = Vec::new();
                for _ in 0..n {
                    v.extend_from_slice(format!("line{}\n", rnd(8)).as_bytes());
                }
                v
            };
            let a = mk(&mut rnd);
            let b = mk(&mut rnd);
            let c = compare(&lines(&a), &lines(&b), true);
            assert_eq!(c.common, dp_lcs_bytes(&a, &b));
            let sum: u64 = c.regions.iter().map(|r| r.len).sum();
            assert_eq!(sum, c.common);
        }
    }

    #[test]
    fn cost_guard_gives_a_lower_bound() {
        let n = EXACT_TOKENS as u32;
        // Same multiset of tokens in reverse order: huge D.
        let a = Tokens {
            hashes: (0..n as u128).collect(),
            starts: (0..=n as u64).collect(),
        };
        let b = Tokens {
            hashes: (0..n as u128).rev().collect(),
            starts: (0..=n as u64).collect(),
        };
        let c = compare(&a, &b, false);
        assert!(!c.exact);
        assert_eq!(c.common, 1);
        // Long but nearly equal: guard lets Myers run.
        let mut h: Vec<u128> = (0..n as u128).collect();
        h.swap(10, 20);
        let b = Tokens {
            hashes: h,
            starts: (0..=n as u64).collect(),
        };
        let c = compare(&a, &b, false);
        assert!(c.exact);
        assert_eq!(
            c.common,
            n as u64 - 2,
            "10 and 20 swapped: one of them and 11..19 kept"
        );
    }

    #[test]
    fn lru_cache_stays_in_budget() {
        let t = Arc::new(lines(b"a\nb\n"));
        let m = t.mem();
        let mut c = Cache::new(2 * m);
        let mut gone = Vec::new();
        c.put((1, Mode::Lines), t.clone(), &mut gone);
        c.put((2, Mode::Lines), t.clone(), &mut gone);
        assert!(c.get((1, Mode::Lines)).is_some());
        c.put((3, Mode::Lines), t.clone(), &mut gone);
        assert!(
            c.get((2, Mode::Lines)).is_none(),
            "least recently used evicted"
        );
        assert_eq!(gone.len(), 1, "the evicted entry is handed back");
        assert!(c.get((1, Mode::Lines)).is_some());
        assert!(c.used <= c.budget);
        c.put((1, Mode::Lines), t.clone(), &mut gone);
        assert_eq!(c.used, 2 * m, "replacing an entry is not counted twice");
    }

    #[test]
    fn cache_removes_and_workers_recycle() {
        let mut c = Cache::new(1 << 20);
        let mut w = Worker::new();
        for id in 0..4 {
            c.put((id, Mode::Lines), Arc::new(lines(b"x\ny\n")), &mut w.gone);
        }
        c.put((1, Mode::Pieces), Arc::new(lines(b"x\ny\n")), &mut w.gone);
        c.remove(1, &mut w.gone);
        assert!(c.get((1, Mode::Lines)).is_none() && c.get((1, Mode::Pieces)).is_none());
        assert_eq!(w.gone.len(), 2);
        w.recycle_gone();
        assert_eq!(w.spare.len(), 2, "buffers of removed entries are kept");
        let held = c.get((2, Mode::Lines)).unwrap();
        c.retain(|id| id == 3);
        assert_eq!(c.map.len(), 1);
        assert_eq!(c.order.len(), 1);
        w.recycle(held);
        assert_eq!(w.spare.len(), 3);
        let mut t = w.spare.pop().unwrap();
        tokenize_into(b"p\nq\nr", Mode::Lines, &piece_chunker(), &mut t);
        assert_eq!(t, lines(b"p\nq\nr"), "recycled buffers hold no old tokens");
        assert_eq!(c.used, c.map.values().map(|(t, _)| t.mem()).sum::<u64>());
    }

    #[test]
    fn global_plan_keeps_files_across_batches() {
        let mut g = Global {
            last: vec![NONE; 6],
            reuse: vec![false; 6],
        };
        let mut group_of = vec![0; 6];
        // Groups: a=0 {(0,1),(0,2)}, a=1 {(1,2)}, a=3 {(3,4)}.
        for (i, (group, a, b)) in [(0, 0, 1), (0, 0, 2), (1, 1, 2), (2, 3, 4)]
            .into_iter()
            .enumerate()
        {
            g.add(&mut group_of, i as u32, group, a, b);
        }
        assert_eq!(&g.reuse[..5], &[false, true, true, false, false]);
        assert_eq!(&g.last[..], &[1, 2, 2, 3, 3, NONE]);
        let mut p = Plan::new(6);
        p.global = Some(g);
        // A second batch starting at pair 2: file 2 is still needed there.
        p.base = 2;
        assert!(p.needed_from(2, 0) && !p.needed_from(2, 1) && !p.needed_from(0, 0));
        assert!(p.keep(1) && !p.keep(0));
    }

    #[test]
    fn plan_marks_reuse_and_last_use() {
        let mk = |a, b| PairIn {
            a,
            b,
            size_a: 1,
            size_b: 1,
            common: 1,
            shared: 1,
        };
        let batch = [mk(0, 1), mk(0, 2), mk(1, 2), mk(3, 4)];
        let mut p = Plan::new(6);
        p.set(&batch);
        assert_eq!(&p.reuse[..5], &[false, true, true, false, false]);
        assert_eq!(&p.last[..5], &[1, 2, 2, 3, 3]);
        assert_eq!(p.last[5], NONE);
        assert!(p.needed_from(1, 2) && !p.needed_from(1, 3) && !p.needed_from(5, 0));
        p.clear(&batch);
        assert!(p.last.iter().all(|&l| l == NONE) && p.reuse.iter().all(|&r| !r));
    }

    #[test]
    fn units_cut_at_group_boundaries() {
        let mk = |a, b| PairIn {
            a,
            b,
            size_a: 1,
            size_b: 1,
            common: 1,
            shared: 1,
        };
        let cut = |batch: &[PairIn]| {
            let mut plan = Plan::new(2000);
            plan.set(batch);
            units(batch, &plan)
        };
        let batch: Vec<PairIn> = (0..250).map(|i| mk(i / 50, 1000 + i)).collect();
        assert_eq!(cut(&batch), vec![0..100, 100..200, 200..250]);
        // Group 4's a is a b of the unit that starts at 100: not cut there.
        let mut chained = batch.clone();
        chained[160].b = 4;
        assert_eq!(cut(&chained), vec![0..100, 100..250]);
        // Unless an earlier unit read it first.
        chained[10].b = 4;
        assert_eq!(cut(&chained), vec![0..100, 100..200, 200..250]);
    }
}
