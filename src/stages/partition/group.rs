//! Chunk groups of the sorted stream: the records of one hash, their
//! distinct files and degree, kept or dropped against the degree limit
//! ([`Keep`]: what a run or a forest does with a kept group).

use super::*;

/// Where [`Grouper`] puts what it keeps.
pub trait Keep {
    /// The output block: kept records are appended to it as text lines.
    fn text(&mut self) -> &mut Vec<u8>;
    /// The text before the current group may be written out now (called
    /// between groups, and while a long kept group is formatted).
    fn spill(&mut self) -> Result<()>;
    /// Files `a` and `b` share a kept chunk (`a` is the group's first file).
    fn link(&mut self, a: u32, b: u32) -> Result<()>;
    /// A kept group's (file, length) records, in order (its first file
    /// first), after its links.
    fn kept_group(&mut self, _recs: &[(u32, u32)]) {}
}

/// (degree, reversed hash, length, example): larger is reported first.
pub(super) type TopKey = (u64, std::cmp::Reverse<u128>, u32, u32);

/// Kept groups of up to this many records are copied to the output as the
/// input text while they are read; longer ones are formatted again from
/// their (file, length) pairs at the end, so that the text held for one
/// group stays small whatever its degree.
pub const TEXT_GROUP_MAX: u64 = 4096;

/// The grouping state machine, separate from I/O so it can be unit tested:
/// feed the records in sorted order with [`Grouper::add`] (a new hash closes
/// the group before it), then [`Grouper::finish`].
///
/// A kept group's records go out unchanged: their input lines are copied
/// into [`Keep::text`] as they come (parse, then format again, would cost
/// twice as much), and taken back out if the group turns out to be a
/// singleton or above the limit.
pub struct Grouper {
    pub limit: u64,
    pub(super) hash: u128,
    /// (file, len) of the current group's records while it may be kept.
    pub(super) recs: Vec<(u32, u32)>,
    pub(super) nrecs: u64,
    pub(super) degree: u64,
    pub(super) last_file: u32,
    pub(super) first_len: u32,
    pub(super) example: u32,
    /// Sum of the current group's record mixes (its share of the digest).
    pub(super) mix: u128,
    /// Where the current group's text begins in [`Keep::text`].
    pub(super) text_at: usize,
    pub(super) text_max: u64,
    pub kept: Digest,
    pub singleton_chunks: u64,
    pub dropped_chunks: u64,
    pub dropped_records: u64,
    /// Sum of the dropped chunks' hash mixes: which chunks were dropped, in
    /// 16 bytes (a re-run compares it to know the analysis kept the same
    /// chunks; summed over Spark's hash ranges).
    pub dropped_digest: u128,
    /// Files holding a dropped chunk.
    pub pruned: FileBits,
    /// Min-heap by degree of the highest dropped chunks.
    pub(super) top: std::collections::BinaryHeap<std::cmp::Reverse<TopKey>>,
    /// The site-template rule (`--site-names`; [`super::site`]).
    pub site: PageNames,
    /// Chunks under the limit dropped as a site's template (also counted
    /// in `dropped_chunks`, `dropped_records` and `dropped_digest`).
    pub site_chunks: u64,
    /// Every dropped chunk, in hash order (`--dropped-out`, and a re-run's
    /// check that it dropped the same chunks).
    pub dropped: Vec<DroppedChunk>,
    /// Chunks held by at least this many files have their degree listed
    /// in `near` (a re-run's other limit: [`super::rerun`]).
    pub near_from: u64,
    /// (hash, degree) of those chunks, in hash order.
    pub near: Vec<(u128, u64)>,
}

impl Grouper {
    /// A grouper for file ids below `files`.
    pub fn new(limit: u64, files: u64) -> Self {
        Grouper {
            limit,
            hash: 0,
            recs: Vec::new(),
            nrecs: 0,
            degree: 0,
            last_file: 0,
            first_len: 0,
            example: 0,
            mix: 0,
            text_at: 0,
            text_max: TEXT_GROUP_MAX,
            kept: Digest::default(),
            singleton_chunks: 0,
            dropped_chunks: 0,
            dropped_records: 0,
            dropped_digest: 0,
            pruned: FileBits::new(files),
            top: Default::default(),
            site: PageNames::off(),
            site_chunks: 0,
            dropped: Vec::new(),
            near_from: u64::MAX,
            near: Vec::new(),
        }
    }

    /// List the degree of every chunk held by at least `from` files.
    pub fn with_near(mut self, from: u64) -> Self {
        self.near_from = from;
        self
    }

    /// Drop the chunks that `site` finds to be a generated site's template.
    pub fn with_site(mut self, site: PageNames) -> Self {
        self.site = site;
        self
    }

    /// Kept groups longer than `n` records are formatted from their keys
    /// (tests use a small `n` to cover that path).
    pub fn with_text_max(mut self, n: u64) -> Self {
        self.text_max = n;
        self
    }

    /// Add a record (sorted order: file ids ascending within a hash);
    /// `mix` is its digest contribution, `line` its canonical text without
    /// newline. A new hash first closes the previous group.
    #[inline]
    pub fn add(
        &mut self,
        k: &ChunkKey,
        mix: u128,
        line: &[u8],
        keep: &mut impl Keep,
    ) -> Result<()> {
        let hash = k.hash();
        if self.nrecs > 0 && hash != self.hash {
            self.end_group(keep)?;
            keep.spill()?;
        }
        if self.nrecs == 0 {
            self.hash = hash;
            self.first_len = k.len;
            self.example = k.file;
            self.degree = 1;
            self.mix = 0;
            self.text_at = keep.text().len();
        } else if k.file != self.last_file {
            self.degree += 1;
            if self.degree == self.limit.saturating_add(1) {
                // Dropped whatever follows: let go of what was held, and
                // remember its files.
                for &(file, _) in &self.recs {
                    self.pruned.set(file);
                }
                self.recs.clear();
                keep.text().truncate(self.text_at);
            }
        }
        self.last_file = k.file;
        self.nrecs += 1;
        self.mix = self.mix.wrapping_add(mix);
        if self.degree <= self.limit {
            self.recs.push((k.file, k.len));
            if self.nrecs <= self.text_max {
                let t = keep.text();
                t.extend_from_slice(line);
                t.push(b'\n');
            }
        } else {
            self.pruned.set(k.file);
        }
        Ok(())
    }

    /// Close the last group.
    pub fn finish(&mut self, keep: &mut impl Keep) -> Result<()> {
        self.end_group(keep)?;
        keep.spill()
    }

    /// Close the current group: keep (text, digest, links) or count it.
    pub(super) fn end_group(&mut self, keep: &mut impl Keep) -> Result<()> {
        if self.nrecs == 0 {
            return Ok(());
        }
        if self.degree >= self.near_from {
            self.near.push((self.hash, self.degree));
        }
        if self.degree == 1 {
            self.singleton_chunks += 1;
            keep.text().truncate(self.text_at);
        } else if self.degree <= self.limit && self.site.is_template(&self.recs) {
            keep.text().truncate(self.text_at);
            for &(file, _) in &self.recs {
                self.pruned.set(file);
            }
            self.site_chunks += 1;
            self.count_dropped(true);
        } else if self.degree <= self.limit {
            self.kept.count += self.nrecs;
            self.kept.sum = self.kept.sum.wrapping_add(self.mix);
            if self.nrecs > self.text_max {
                keep.text().truncate(self.text_at);
                let (hi, lo) = ((self.hash >> 64) as u64, self.hash as u64);
                for (i, &(file, len)) in self.recs.iter().enumerate() {
                    let mut line = [0u8; 64];
                    let n = format_chunk_line(&ChunkKey { hi, lo, file, len }, &mut line);
                    keep.text().extend_from_slice(&line[..n]);
                    if i % 4096 == 4095 {
                        keep.spill()?;
                    }
                }
            }
            let first = self.recs[0].0;
            let mut prev = first;
            for &(file, _) in &self.recs {
                if file != prev {
                    keep.link(first, file)?;
                    prev = file;
                }
            }
            keep.kept_group(&self.recs);
        } else {
            self.count_dropped(false);
            let item = std::cmp::Reverse((
                self.degree,
                std::cmp::Reverse(self.hash),
                self.first_len,
                self.example,
            ));
            if self.top.len() < TOP_DROPPED {
                self.top.push(item);
            } else if self.top.peek().is_some_and(|m| item < *m) {
                self.top.pop();
                self.top.push(item);
            }
        }
        self.recs.clear();
        self.nrecs = 0;
        Ok(())
    }

    /// Count the current group as dropped (by the site rule: `site`).
    fn count_dropped(&mut self, site: bool) {
        self.dropped.push(DroppedChunk {
            hash: self.hash,
            records: self.nrecs,
            site,
        });
        self.dropped_chunks += 1;
        self.dropped_records += self.nrecs;
        self.dropped_digest = self
            .dropped_digest
            .wrapping_add(crate::formats::mix128(self.hash));
    }

    /// Dropped chunks of highest degree, highest first (ties: smaller hash).
    pub fn top_dropped(&self) -> Vec<Dropped> {
        let mut v: Vec<Dropped> = self
            .top
            .iter()
            .map(
                |std::cmp::Reverse((degree, std::cmp::Reverse(hash), len, example))| Dropped {
                    hash: *hash,
                    degree: *degree,
                    len: *len,
                    example: *example,
                },
            )
            .collect();
        v.sort_by(|a, b| b.degree.cmp(&a.degree).then(a.hash.cmp(&b.hash)));
        v
    }
}

/// File pairs per batch handed from the grouping thread to the union-find.
pub(super) const LINKS: usize = 1 << 15;

/// What the grouping thread found besides the kept records.
pub(super) struct Grouped {
    pub(super) grouper: Grouper,
    /// The output, the kept records written (or queued) into it.
    pub(super) out: BgWriter,
    pub(super) seen: Digest,
    pub(super) check: InputCheck,
    pub(super) last_name: String,
    pub(super) last_line: u64,
    /// Feature methods: distinct features per file (see `group_chunks`).
    pub(super) feature_counts: Option<Vec<u32>>,
    /// Template bytes per file (`--templates`).
    pub(super) tmpl: crate::stages::templates::PayloadCounter,
    /// The input's trailer (a re-run's says how many records were read).
    pub(super) trailer: Option<Params>,
}

/// [`Keep`] of [`run`]: kept text into the output's current block, file
/// pairs in batches to the union-find thread (returned empty for reuse).
pub(super) struct RunKeep {
    pub(super) out: BgWriter,
    pub(super) links: Vec<(u32, u32)>,
    pub(super) tx: SyncSender<Vec<(u32, u32)>>,
    pub(super) back: Receiver<Vec<(u32, u32)>>,
    /// The union-find thread is gone (it only stops early on a panic).
    pub(super) closed: bool,
}

impl RunKeep {
    pub(super) fn send_links(&mut self) {
        let next = self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(LINKS));
        let full = std::mem::replace(&mut self.links, next);
        self.closed |= self.tx.send(full).is_err();
    }
}

impl Keep for RunKeep {
    #[inline]
    fn text(&mut self) -> &mut Vec<u8> {
        self.out.buf()
    }

    #[inline]
    fn spill(&mut self) -> Result<()> {
        self.out.maybe_flush()
    }

    #[inline]
    fn link(&mut self, a: u32, b: u32) -> Result<()> {
        self.links.push((a, b));
        if self.links.len() == LINKS {
            self.send_links();
        }
        Ok(())
    }
}

/// The grouping thread of [`run`]: read and check the sorted chunk stream,
/// group it, write the kept records to `out` and send the file pairs to
/// link to the union-find thread.
#[allow(clippy::too_many_arguments)]
pub(super) fn group_chunks(
    inputs: &[PathBuf],
    table: &FileTable,
    chunk_params: &ChunkParams,
    mut tmpl: crate::stages::templates::PayloadCounter,
    mut grouper: Grouper,
    quiet: bool,
    out: BgWriter,
    tx: SyncSender<Vec<(u32, u32)>>,
    back: Receiver<Vec<(u32, u32)>>,
) -> Result<Grouped> {
    let n = table.files;
    let mut check = InputCheck::new(Kind::Chunks, "records");
    let mut seen = Digest::default();
    let mut prev: Option<(u64, u64, u32)> = None;
    // Feature methods: distinct features per file (all of them, before
    // degree-1 and ubiquitous ones are dropped), for the F lines: the
    // analysis needs each file's set size for resemblance. 4 bytes per file.
    let mut feature_counts: Option<Vec<u32>> = chunk_params
        .method
        .as_deref()
        .is_some_and(crate::chunking::features::is_feature_method)
        .then(|| vec![0u32; n as usize]);
    let (mut last_name, mut last_line) = (String::from("-"), 0);
    let mut trailer = None;
    let mut keep = RunKeep {
        out,
        links: Vec::with_capacity(LINKS),
        tx,
        back,
        closed: false,
    };
    let paths: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let progress = crate::io::progress::Progress::for_inputs("fsim-partition", &paths, quiet);
    for path in inputs {
        let (r, name) = progress.open(path)?;
        let mut lines = FastLines::new(r, name);
        while let Some((line, at)) = lines.next_line_at()? {
            if let Some(k) = parse_chunk_line(line) {
                let key = (k.hi, k.lo, k.file);
                if prev.is_some_and(|p| key < p) {
                    return Err(at.error(
                        "input is not sorted by hash: run fsim-sort or LC_ALL=C sort first",
                    ));
                }
                if k.file as u64 >= n {
                    return Err(at.error(format!(
                        "file id {} is not in the file table {} ({n} files): wrong or stale file table",
                        k.file, table.name
                    )));
                }
                if let Some(c) = feature_counts.as_mut() {
                    if prev != Some(key) {
                        let slot = &mut c[k.file as usize];
                        *slot = slot.saturating_add(1);
                    }
                }
                prev = Some(key);
                let mix = k.record().mix();
                seen.add_mix(mix);
                if tmpl.take(k.hash(), k.file, k.len) {
                    continue;
                }
                grouper.add(&k, mix, line, &mut keep)?;
                continue;
            }
            if let Some(t) = other_line(line, &at, &mut check, chunk_params, table)? {
                trailer = Some(t);
            }
        }
        last_name = lines.name().to_string();
        last_line = lines.line_number();
    }
    grouper.finish(&mut keep)?;
    if !keep.links.is_empty() {
        keep.send_links();
    }
    if keep.closed {
        return Err(Error::msg("internal error: the union-find thread stopped"));
    }
    progress.finish();
    Ok(Grouped {
        grouper,
        out: keep.out,
        seen,
        check,
        last_name,
        last_line,
        feature_counts,
        tmpl,
        trailer,
    })
}

/// A line of the chunk stream that is not a chunk record: the header
/// (checked against the file table's chunking), the trailer, a comment;
/// anything else is an error at `at`. The trailer's parameters.
fn other_line(
    line: &[u8],
    at: &crate::stages::sort::At,
    check: &mut InputCheck,
    chunk_params: &ChunkParams,
    table: &FileTable,
) -> Result<Option<Params>> {
    match classify_line(line).map_err(|m| at.error(m))? {
        Line::Header(kind, params) => {
            let chunk = ChunkParams::parse(&params).map_err(|m| at.error(m))?;
            if let Some(d) = chunk.difference(chunk_params) {
                return Err(at.error(format!(
                    "chunking parameters differ from the file table {}: {d} (in the file table)",
                    table.name
                )));
            }
            check.header(kind, params).map_err(|m| at.error(m))?;
        }
        Line::Trailer(kind, params) => {
            check.trailer(kind, &params).map_err(|m| at.error(m))?;
            return Ok(Some(params));
        }
        Line::Comment(_) => {}
        Line::Data(_) => {
            return Err(at.error(format!(
                "expected {}",
                crate::formats::ChunkRecord::EXPECTED
            )));
        }
    }
    Ok(None)
}
