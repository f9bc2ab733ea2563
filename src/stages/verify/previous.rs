//! Reusing the figures of an earlier run (`--previous`): incremental
//! re-runs verify only the pairs that have a file changed since.
//!
//! A pair's exact figure and its regions depend only on the contents of
//! its two files (and on the pieces, the file types and the templates,
//! which the headers must agree on). An earlier run's pair whose two files
//! are unchanged, by path, size and content hash in both file tables, is
//! written with the earlier figure and regions instead of reading the
//! files: the output is byte-identical to a run from scratch. Only `exact`
//! pairs are reused; `lower-bound` ones are verified again.
//!
//! File ids may differ between the runs (files added or deleted shift
//! them): the earlier ids are mapped to the new ones by path. Both runs
//! write pairs sorted by (a, b), and ids follow the walk order, so the
//! mapped earlier pairs come in the order of the new ones: the earlier
//! pairs and regions are read as streams beside the new pairs, in memory
//! one pair and its regions at a time. A pair out of that order (ids not
//! in the same order in both tables) is just not reused.

use super::worker::Outcome;
use super::{PairIn, Region, PIECE_AVG};
use crate::error::{Error, Result};
use crate::formats::files::{changed_since, read_file_table};
use crate::formats::headers::{PairsHeader, VerifyParams};
use crate::formats::pairs;
use crate::formats::PercentOf;
use crate::formats::{
    open_input, parse_id, parse_u64, split_fields, Kind, Line, LineReader, Params,
};
use std::io::BufRead;
use std::path::Path;

/// No new id (file changed, gone, or not in the new table).
const NONE: u32 = u32::MAX;

type Reader = LineReader<Box<dyn BufRead + Send>>;

/// An earlier pair, with its ids mapped to the new ones.
#[derive(Debug, Clone, Copy)]
struct Old {
    a: u32,
    b: u32,
    /// Its ids in the earlier run (to find its regions).
    old_a: u32,
    old_b: u32,
    size_a: u64,
    size_b: u64,
    /// The chunk figures (fields 5 and 6).
    common: u64,
    shared: u64,
    verified: u64,
    exact: bool,
}

/// The earlier run's verified pairs and regions, read beside the new pairs.
pub struct Previous {
    new_of_old: Vec<u32>,
    pairs: Reader,
    regions: Option<Reader>,
    /// How the earlier pairs were verified (their header's settings).
    verify: Option<VerifyParams>,
    /// The next earlier pair not yet passed.
    cur: Option<Old>,
    done: bool,
    /// A region line read ahead: (old a, old b, region).
    ahead: Option<(u32, u32, Region)>,
    regions_done: bool,
    /// Pairs reused so far.
    pub reused: u64,
    /// Read lower-bound rows too ([`Rows`]).
    all_rows: bool,
}

/// Open the earlier run's outputs and map its file ids to `files`' ids.
pub fn open(
    files: &[crate::formats::FileEntry],
    previous: &Path,
    previous_files: &Path,
    previous_regions: Option<&Path>,
) -> Result<Previous> {
    let (old, _) = read_file_table(previous_files)?;
    let (_, new_of_old) = changed_since(files, &old);
    open_mapped(new_of_old, previous, previous_regions)
}

/// [`open`] with the earlier ids already mapped to the new ones.
fn open_mapped(
    new_of_old: Vec<u32>,
    previous: &Path,
    previous_regions: Option<&Path>,
) -> Result<Previous> {
    let (input, name) = open_input(previous)?;
    let regions = match previous_regions {
        Some(p) => {
            let (r, n) = open_input(p)?;
            Some(LineReader::new(r, n))
        }
        None => None,
    };
    Ok(Previous {
        new_of_old,
        pairs: LineReader::new(input, name),
        regions,
        verify: None,
        cur: None,
        done: false,
        ahead: None,
        regions_done: false,
        reused: 0,
        all_rows: false,
    })
}

impl Outcome {
    /// An earlier run's exact figure and regions.
    pub(super) fn reused(common: u64, regions: Vec<Region>) -> Outcome {
        Outcome {
            common,
            exact: true,
            regions,
            stale: Vec::new(),
            below: false,
            in_diff: false,
        }
    }
}

/// The earlier run's verified pairs whose two files are unchanged, for a
/// delta pairs file (`delta=1`, from a re-run's fsim-analyze, which wrote
/// only the pairs with a changed file): merged with the new pairs in
/// (a, b) order, they make the output of a run from scratch. Exact rows
/// keep their figure and regions; lower-bound rows (a file that changed
/// while that run read it, or a diff too costly) are verified again.
pub struct Rows {
    inner: Previous,
    /// Files changed since the earlier run (as fsim-analyze counts them).
    pub changed: u64,
    /// Rows taken from the earlier run.
    pub reused: u64,
    last: Option<(u32, u32)>,
    regions: Vec<Region>,
    /// Verify every earlier row again (it measured binary pairs otherwise).
    pub reverify: bool,
}

impl Rows {
    pub fn open(
        files: &[crate::formats::FileEntry],
        previous: &Path,
        previous_files: &Path,
        previous_regions: Option<&Path>,
    ) -> Result<Rows> {
        // The earlier table is read and compared once, for the count and
        // the map both.
        let (old, _) = read_file_table(previous_files)?;
        let (changed, new_of_old) = changed_since(files, &old);
        drop(old);
        let mut inner = open_mapped(new_of_old, previous, previous_regions)?;
        inner.all_rows = true;
        Ok(Rows {
            inner,
            changed: changed.iter().filter(|&&c| c).count() as u64,
            reused: 0,
            last: None,
            regions: Vec::new(),
            reverify: false,
        })
    }

    /// Check the earlier header against the new pairs' (see
    /// [`Previous::check`]), and that the earlier run kept every pair this
    /// one keeps: verified at `min_percent` of the same file or lower (the
    /// rows under its threshold are not in it); fsim-analyze checked the
    /// rest before writing the delta.
    pub fn check(&mut self, new: &Params, min_percent: f64, percent_of: PercentOf) -> Result<()> {
        self.inner.check(new)?;
        let v = self.inner.verify.as_ref().expect("read by check");
        let (then, of) = (v.min_percent, v.percent_of());
        if then.is_some_and(|t| t <= min_percent) && of == percent_of {
            return Ok(());
        }
        let (of, percent_of) = (of.as_str(), percent_of.as_str());
        Err(Error::msg(format!(
            "{}: verified from {}% of the {of} file, so it lacks pairs this run keeps (from {min_percent}% of the {percent_of} file): run without --previous, or analyse every pair",
            self.inner.pairs.name(),
            then.map_or("?".into(), |t| t.to_string()),
        )))
    }

    /// The next earlier row before (a, b) in the new ids, as a pair and,
    /// for an exact row, its outcome.
    pub(super) fn next_before(
        &mut self,
        a: u32,
        b: u32,
        want_regions: bool,
    ) -> Result<Option<(PairIn, Option<Outcome>)>> {
        if self.inner.cur.is_none() && !self.inner.done {
            self.inner.cur = self.inner.next_old()?;
            self.inner.done = self.inner.cur.is_none();
        }
        let Some(o) = self.inner.cur else {
            return Ok(None);
        };
        if (o.a, o.b) >= (a, b) {
            if (o.a, o.b) == (a, b) {
                return Err(Error::msg(format!(
                    "pair {a}-{b} is both in the new pairs and in the earlier run's with unchanged files: the pairs were analysed against another earlier run"
                )));
            }
            return Ok(None);
        }
        self.inner.cur = None;
        if self.last.is_some_and(|l| l >= (o.a, o.b)) {
            return Err(Error::msg(format!(
                "{}: the earlier run's files are not in this run's order: run without --previous",
                self.inner.pairs.name()
            )));
        }
        self.last = Some((o.a, o.b));
        let p = PairIn {
            a: o.a,
            b: o.b,
            size_a: o.size_a,
            size_b: o.size_b,
            common: o.common,
            shared: o.shared,
        };
        if !o.exact || self.reverify {
            return Ok(Some((p, None)));
        }
        self.regions.clear();
        if want_regions {
            self.inner.regions_of(o.old_a, o.old_b, &mut self.regions)?;
        }
        self.reused += 1;
        let r = Outcome::reused(o.verified, std::mem::take(&mut self.regions));
        Ok(Some((p, Some(r))))
    }
}

impl Previous {
    /// Read the earlier pairs' header and check that their figures were
    /// computed as this run's would be (same pieces, same chunking and
    /// templates as `new`, the new pairs' header).
    pub fn check(&mut self, new: &Params) -> Result<()> {
        while self.verify.is_none() {
            let name = self.pairs.name().to_string();
            let Some((line, no)) = self.pairs.next_numbered()? else {
                return Err(Error::msg(format!(
                    "{name}: empty: expected verified pairs (written by fsim-verify)"
                )));
            };
            match line {
                Line::Header(Kind::Pairs, p) => {
                    let err = |m: String| Error::input(&name, no, m);
                    let Some(v) = VerifyParams::parse(&p).map_err(err)? else {
                        return Err(err(
                            "--previous takes the verified pairs of an earlier run (verified.tsv)"
                                .into(),
                        ));
                    };
                    if v.pieces != Some(PIECE_AVG as u64) {
                        return Err(err(format!(
                            "verified with pieces of {} bytes, {PIECE_AVG} now",
                            v.pieces.map_or("?".into(), |n| n.to_string())
                        )));
                    }
                    let then = PairsHeader::parse(&p).map_err(err)?;
                    let now = PairsHeader::parse(new).map_err(Error::msg)?;
                    if let Some(d) = then.run_identity().difference(&now.run_identity()) {
                        return Err(err(format!(
                            "the earlier run had other parameters: {d}; run without --previous"
                        )));
                    }
                    self.verify = Some(v);
                }
                Line::Comment(_) => {}
                _ => {
                    return Err(Error::input(
                        &name,
                        no,
                        "expected a '#fsim pairs v1' header (written by fsim-verify)",
                    ))
                }
            }
        }
        Ok(())
    }

    /// The next earlier pair whose files are both unchanged, or None at
    /// the end.
    fn next_old(&mut self) -> Result<Option<Old>> {
        loop {
            let name = self.pairs.name().to_string();
            let Some((line, no)) = self.pairs.next_numbered()? else {
                return Ok(None);
            };
            let d = match line {
                Line::Data(d) => d,
                Line::Trailer(..) => return Ok(None),
                _ => continue,
            };
            let bad = || Error::input(&name, no, "expected a verified pair record (8 fields)");
            let (p, Some(figure)) = pairs::parse_line(d).map_err(|_| bad())? else {
                return Err(bad());
            };
            if !figure.exact && !self.all_rows {
                continue;
            }
            let (p, verified, exact) = (PairIn::from(p), figure.bytes, figure.exact);
            let map = |id: u32| self.new_of_old.get(id as usize).copied().unwrap_or(NONE);
            let (a, b) = (map(p.a), map(p.b));
            if a == NONE || b == NONE {
                continue;
            }
            if a >= b {
                if self.all_rows {
                    return Err(Error::input(&name, no, format!(
                        "files {} and {} of the earlier run are in the other order now: the earlier pairs cannot be merged; run without --previous",
                        p.a, p.b
                    )));
                }
                continue;
            }
            return Ok(Some(Old {
                a,
                b,
                old_a: p.a,
                old_b: p.b,
                size_a: p.size_a,
                size_b: p.size_b,
                common: p.common,
                shared: p.shared,
                verified,
                exact,
            }));
        }
    }

    /// The earlier figure (and regions, when `regions` is given) of pair
    /// `p`, if the earlier run verified it exactly and both files are
    /// unchanged. Pairs must be asked for in input order.
    pub fn lookup(&mut self, p: &PairIn, regions: Option<&mut Vec<Region>>) -> Result<Option<u64>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if self.cur.is_none() {
                self.cur = self.next_old()?;
                if self.cur.is_none() {
                    self.done = true;
                    return Ok(None);
                }
            }
            let o = self.cur.expect("read above");
            match (o.a, o.b).cmp(&(p.a, p.b)) {
                std::cmp::Ordering::Less => self.cur = None,
                std::cmp::Ordering::Greater => return Ok(None),
                std::cmp::Ordering::Equal => {
                    self.cur = None;
                    if (o.size_a, o.size_b) != (p.size_a, p.size_b) {
                        return Ok(None);
                    }
                    if let Some(out) = regions {
                        out.clear();
                        if !self.regions_of(o.old_a, o.old_b, out)? {
                            return Ok(None);
                        }
                    }
                    self.reused += 1;
                    return Ok(Some(o.verified));
                }
            }
        }
    }

    /// The earlier regions of (a, b) (earlier ids), into `out`; false when
    /// they cannot be found (no regions file, or it ended).
    fn regions_of(&mut self, a: u32, b: u32, out: &mut Vec<Region>) -> Result<bool> {
        if self.regions.is_none() {
            return Ok(false);
        }
        loop {
            if self.ahead.is_none() {
                if self.regions_done {
                    return Ok(true);
                }
                self.ahead = self.next_region()?;
                if self.ahead.is_none() {
                    self.regions_done = true;
                    return Ok(true);
                }
            }
            let (ra, rb, r) = self.ahead.expect("read above");
            match (ra, rb).cmp(&(a, b)) {
                std::cmp::Ordering::Less => self.ahead = None,
                std::cmp::Ordering::Greater => return Ok(true),
                std::cmp::Ordering::Equal => {
                    out.push(r);
                    self.ahead = None;
                }
            }
        }
    }

    fn next_region(&mut self) -> Result<Option<(u32, u32, Region)>> {
        let r = self.regions.as_mut().expect("checked by the caller");
        loop {
            let name = r.name().to_string();
            let Some((line, no)) = r.next_numbered()? else {
                return Ok(None);
            };
            let d = match line {
                Line::Data(d) => d,
                Line::Trailer(..) => return Ok(None),
                _ => continue,
            };
            let bad = || Error::input(&name, no, "expected a region record (5 fields)");
            let f = split_fields::<5>(d).ok_or_else(bad)?;
            let id = |x: &[u8]| parse_id(x).ok_or_else(bad);
            let n = |x: &[u8]| parse_u64(x).ok_or_else(bad);
            return Ok(Some((
                id(f[0])?,
                id(f[1])?,
                Region {
                    off_a: n(f[2])?,
                    off_b: n(f[3])?,
                    len: n(f[4])?,
                },
            )));
        }
    }
}
