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

use super::{parse_pair, PairIn, Region, PIECE_AVG};
use crate::error::{Error, Result};
use crate::formats::files::read_file_table;
use crate::formats::{
    open_input, parse_id, parse_u64, split_fields, Kind, Line, LineReader, Params, CHUNK_PARAM_KEYS,
};
use std::collections::HashMap;
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
    verified: u64,
}

/// The earlier run's verified pairs and regions, read beside the new pairs.
pub struct Previous {
    new_of_old: Vec<u32>,
    pairs: Reader,
    regions: Option<Reader>,
    /// Parameters of the earlier pairs' header.
    params: Option<Params>,
    /// The next earlier pair not yet passed.
    cur: Option<Old>,
    done: bool,
    /// A region line read ahead: (old a, old b, region).
    ahead: Option<(u32, u32, Region)>,
    regions_done: bool,
    /// Pairs reused so far.
    pub reused: u64,
}

/// Open the earlier run's outputs and map its file ids to `files`' ids.
pub fn open(
    files: &[crate::formats::FileEntry],
    previous: &Path,
    previous_files: &Path,
    previous_regions: Option<&Path>,
) -> Result<Previous> {
    let (old, _) = read_file_table(previous_files)?;
    let mut by_path: HashMap<&[u8], u32> = HashMap::with_capacity(files.len());
    for f in files {
        by_path.insert(&f.path, f.id);
    }
    let max_old = old.iter().map(|f| f.id as usize + 1).max().unwrap_or(0);
    let mut new_of_old = vec![NONE; max_old];
    for o in &old {
        if let Some(&n) = by_path.get(&o.path[..]) {
            let f = &files[n as usize];
            if f.size == o.size && f.content == o.content && f.ftype == o.ftype {
                new_of_old[o.id as usize] = n;
            }
        }
    }
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
        params: None,
        cur: None,
        done: false,
        ahead: None,
        regions_done: false,
        reused: 0,
    })
}

impl Previous {
    /// Read the earlier pairs' header and check that their figures were
    /// computed as this run's would be (same pieces, same chunking and
    /// templates as `new`, the new pairs' header).
    pub fn check(&mut self, new: &Params) -> Result<()> {
        while self.params.is_none() {
            let name = self.pairs.name().to_string();
            let Some((line, no)) = self.pairs.next_numbered()? else {
                return Err(Error::msg(format!(
                    "{name}: empty: expected verified pairs (written by fsim-verify)"
                )));
            };
            match line {
                Line::Header(Kind::Pairs, p) => {
                    let err = |m: String| Error::input(&name, no, m);
                    if p.get("verified").is_none() {
                        return Err(err(
                            "--previous takes the verified pairs of an earlier run (verified.tsv)"
                                .into(),
                        ));
                    }
                    if p.get_u64("verify-pieces") != Some(PIECE_AVG as u64) {
                        return Err(err(format!(
                            "verified with pieces of {} bytes, {PIECE_AVG} now",
                            p.get("verify-pieces").unwrap_or("?")
                        )));
                    }
                    let keys: Vec<&str> = CHUNK_PARAM_KEYS
                        .iter()
                        .chain(crate::formats::TEMPLATE_PARAM_KEYS)
                        .copied()
                        .collect();
                    if let Some(d) = p.only(&keys).difference(&new.only(&keys)) {
                        return Err(err(format!(
                            "the earlier run had other parameters: {d}; run without --previous"
                        )));
                    }
                    self.params = Some(p);
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
            let f = split_fields::<8>(d).ok_or_else(bad)?;
            if f[7] != b"exact" {
                continue;
            }
            let p = parse_pair(&d[..d.len() - f[6].len() - f[7].len() - 2]).ok_or_else(bad)?;
            let verified = parse_u64(f[6]).ok_or_else(bad)?;
            let map = |id: u32| self.new_of_old.get(id as usize).copied().unwrap_or(NONE);
            let (a, b) = (map(p.a), map(p.b));
            if a == NONE || b == NONE || a >= b {
                continue;
            }
            return Ok(Some(Old {
                a,
                b,
                old_a: p.a,
                old_b: p.b,
                size_a: p.size_a,
                size_b: p.size_b,
                verified,
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
