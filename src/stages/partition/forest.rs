//! The forest mode (`--emit-forest`): the map side of a distributed
//! partition (scripts/spark, docs/distributed.md), the union-find forest of
//! one slice of the chunks instead of the partition.

use super::*;

/// Options of the forest mode (`fsim-partition --emit-forest`), the map side
/// of a distributed partition (scripts/spark, docs/distributed.md).
#[derive(Debug, Clone)]
pub struct ForestConfig {
    /// Files in the whole run's file table (ids are below it; the degree
    /// limit is resolved against it).
    pub files: u64,
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub limit: Limit,
    /// Also write `N\t<file>\t<distinct features>` per file seen (feature
    /// methods: partition's sixth `F` field, summed over the hash ranges).
    pub feature_counts: bool,
    /// Also write `K\t<file>\t<records>\t<chunks>` per file with kept
    /// records: its kept records and the kept chunks it is the first file
    /// of (what fsim-binpack counts per file; summed per component, the
    /// input of `fsim-binpack --components`).
    pub kept_counts: bool,
    /// The site-template rule's page names (read from the run's file table
    /// when `--site-names` is not 0).
    pub site: PageNames,
}

/// Forest mode: one hash range of the sorted chunk records (no file table,
/// `#` lines ignored) reduced to what the final union-find needs. Writes
///
/// * the kept records, unchanged (the range's share of the partition file);
/// * `E\t<a>\t<b>` for the edges of a spanning forest of the file graph of
///   the range's kept chunk groups (at most files − 1 edges): the union of
///   the forests of all ranges has the components of the whole graph;
/// * `N\t<file>\t<count>` distinct features per file (with `feature_counts`);
/// * `K\t<file>\t<records>\t<chunks>` per file with kept records (with
///   `kept_counts`): its kept records, and the kept chunks whose first
///   record is its own (fsim-binpack's per-file counts);
/// * `P\t<file>` for each file holding a chunk this range dropped (the
///   driver counts the union: `pruned_files`);
/// * the range's highest dropped chunks as `#dropped` lines (the global top
///   is the top of the union of the ranges' tops);
/// * `#forest\tfiles=N\tlimit=L\trecords=R\tdigest=D\tkept=K\tkept_digest=KD\tdropped_chunks=X\tdropped_records=Y\tdropped_digest=DD\tsingleton_chunks=S\tsite_chunks=SC\tsite_names=SN\tedges=E`
///   (SC of the X dropped chunks were a site's template, by the rule of
///   `--site-names SN`)
///   (R, D over the records read; K, KD over the kept ones: digests add up
///   over the ranges).
///
/// Memory: 5 bytes per file for the range's forest (plus the grouping's 5;
/// 8 more with `kept_counts`).
pub fn run_forest(cfg: ForestConfig) -> Result<()> {
    let n = cfg.files;
    if n > u32::MAX as u64 + 1 {
        return Err(Error::msg("more than 2^32 files"));
    }
    let limit = cfg.limit.resolve(n);
    let mut g = Grouper::new(limit, n).with_site(cfg.site);
    let mut keep = ForestKeep {
        out: BgWriter::new(Output::create(cfg.output.as_deref())?),
        forest: UnionFind::new(n as usize),
        edges: 0,
        kept: cfg.kept_counts.then(|| vec![(0u32, 0u32); n as usize]),
    };
    let mut seen = Digest::default();
    let mut counts: Option<Vec<u32>> = cfg.feature_counts.then(|| vec![0u32; n as usize]);
    let default_input = [PathBuf::from("-")];
    let inputs: &[PathBuf] = if cfg.inputs.is_empty() {
        &default_input
    } else {
        &cfg.inputs
    };
    let mut prev: Option<(u64, u64, u32)> = None;
    for path in inputs {
        let (r, name) = open_input(path)?;
        let mut lines = FastLines::new(r, name);
        while let Some((line, at)) = lines.next_line_at()? {
            if line.first() == Some(&b'#') {
                continue;
            }
            let k = parse_chunk_line(line).ok_or_else(|| {
                at.error(format!(
                    "expected {}",
                    crate::formats::ChunkRecord::EXPECTED
                ))
            })?;
            let key = (k.hi, k.lo, k.file);
            if prev.is_some_and(|p| key < p) {
                return Err(at.error("input is not sorted by hash"));
            }
            if k.file as u64 >= n {
                return Err(at.error(format!("file id {} is not below --files-count {n}", k.file)));
            }
            if let Some(c) = counts.as_mut() {
                if prev != Some(key) {
                    let slot = &mut c[k.file as usize];
                    *slot = slot.saturating_add(1);
                }
            }
            prev = Some(key);
            let mix = k.record().mix();
            seen.add_mix(mix);
            g.add(&k, mix, line, &mut keep)?;
        }
    }
    g.finish(&mut keep)?;
    let (mut w, edges) = (keep.out, keep.edges);
    let mut tail = Vec::new();
    per_file_lines(
        keep.kept.as_deref(),
        counts.as_deref(),
        g.pruned.words(),
        &mut tail,
    );
    dropped_lines(&g.top_dropped(), &mut tail);
    tail.extend_from_slice(
        format!(
            "#forest\tfiles={n}\tlimit={limit}\trecords={}\tdigest={}\tkept={}\tkept_digest={}\tdropped_chunks={}\tdropped_records={}\tdropped_digest={}\tsingleton_chunks={}\tsite_chunks={}\tsite_names={}\tedges={edges}\n",
            seen.count,
            hex128(seen.sum),
            g.kept.count,
            hex128(g.kept.sum),
            g.dropped_chunks,
            g.dropped_records,
            hex128(g.dropped_digest),
            g.singleton_chunks,
            g.site_chunks,
            g.site.min_names()
        )
        .as_bytes(),
    );
    w.raw(&tail)?;
    w.finish()?.finish()?;
    Ok(())
}

/// The range's per-file lines: `K` (kept records and chunks, with
/// `kept_counts`), `N` (distinct features, with `feature_counts`) and
/// `P` (a dropped chunk held, from the words of the pruned-files bit set).
fn per_file_lines(
    kept: Option<&[(u32, u32)]>,
    counts: Option<&[u32]>,
    pruned: &[u64],
    tail: &mut Vec<u8>,
) {
    if let Some(k) = kept {
        for (id, &(recs, chunks)) in k.iter().enumerate() {
            if recs > 0 {
                tail.extend_from_slice(b"K\t");
                crate::formats::write_id(id as u32, tail);
                tail.extend_from_slice(format!("\t{recs}\t{chunks}\n").as_bytes());
            }
        }
    }
    if let Some(c) = counts {
        for (id, &v) in c.iter().enumerate() {
            if v > 0 {
                tail.extend_from_slice(b"N\t");
                crate::formats::write_id(id as u32, tail);
                tail.extend_from_slice(format!("\t{v}\n").as_bytes());
            }
        }
    }
    // Files holding a dropped chunk in this range (the driver counts the
    // union over the ranges).
    for (w, &bits) in pruned.iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            let id = w as u32 * 64 + b.trailing_zeros();
            tail.extend_from_slice(b"P\t");
            crate::formats::write_id(id, tail);
            tail.push(b'\n');
            b &= b - 1;
        }
    }
}

/// [`Keep`] of [`run_forest`]: each kept group's records, then the edges it
/// adds to the spanning forest (first file to each other file, when they
/// merge).
pub(super) struct ForestKeep {
    pub(super) out: BgWriter,
    pub(super) forest: UnionFind,
    pub(super) edges: u64,
    /// (kept records, kept chunks first seen in it) per file, with
    /// `kept_counts`.
    pub(super) kept: Option<Vec<(u32, u32)>>,
}

impl Keep for ForestKeep {
    fn text(&mut self) -> &mut Vec<u8> {
        self.out.buf()
    }

    fn spill(&mut self) -> Result<()> {
        self.out.maybe_flush()
    }

    fn link(&mut self, a: u32, b: u32) -> Result<()> {
        if self.forest.union(a, b) {
            self.edges += 1;
            let t = self.out.buf();
            t.extend_from_slice(b"E\t");
            crate::formats::write_id(a, t);
            t.push(b'\t');
            crate::formats::write_id(b, t);
            t.push(b'\n');
        }
        Ok(())
    }

    fn kept_group(&mut self, recs: &[(u32, u32)]) {
        if let Some(k) = self.kept.as_mut() {
            for &(file, _) in recs {
                k[file as usize].0 = k[file as usize].0.saturating_add(1);
            }
            if let Some(&(first, _)) = recs.first() {
                k[first as usize].1 = k[first as usize].1.saturating_add(1);
            }
        }
    }
}
