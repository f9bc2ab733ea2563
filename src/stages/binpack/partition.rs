//! The partition file's mode: the plan, then every record routed to its
//! bin in the bins file.

use super::pack::{bin_line, bins_params, bins_trailer, pack, report_plan};
use super::pass1::{
    copy_records, decode, one_bin_input, spool_partition, spool_span, Kept, Pass1, SPOOL_RECORD,
};
use super::{Bin, Config, MAX_OPEN_BINS};
use crate::error::{Context, Error, Result};
use crate::formats::bins::{estimate_memory, FileLine};
use crate::formats::{self, Kind, LineReader};
use crate::io::Output;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The bins and where everything goes.
pub(super) struct Placement {
    pub(super) bins: Vec<Bin>,
    /// Bin of each file id (`u32::MAX`: none).
    pub(super) bin_of: Vec<u32>,
    /// The files of each bin in id order: indices into `Pass1::files`.
    pub(super) file_order: Vec<usize>,
}

/// Estimate each component's memory, pack the bins, and place every file;
/// a file with records but no `F` line is an error (its records would be
/// lost).
pub(super) fn place(p: &mut Pass1, capacity: u64) -> std::result::Result<Placement, String> {
    let mut bin_of = vec![
        u32::MAX;
        p.recs_per_file
            .len()
            .max(p.files.last().map_or(0, |f| f.id as usize + 1))
    ];
    for c in p.comps.iter_mut() {
        c.memory = estimate_memory(c.files, c.records, c.chunks);
    }
    let bins = pack(&p.comps, capacity);
    let mut bin_of_comp = vec![0u32; p.comps.len()];
    for (b, bin) in bins.iter().enumerate() {
        for &ci in &bin.components {
            bin_of_comp[ci] = b as u32;
        }
    }
    for (f, &ci) in p.files.iter().zip(&p.comp_of_file) {
        bin_of[f.id as usize] = bin_of_comp[ci as usize];
    }
    if let Some(id) = p
        .recs_per_file
        .iter()
        .enumerate()
        .find(|(i, &n)| n > 0 && bin_of[*i] == u32::MAX)
        .map(|(i, _)| i)
    {
        return Err(format!(
            "chunk records of file {} but no F line for it: the partition file is inconsistent",
            formats::id_string(id as u32)
        ));
    }
    let mut file_order: Vec<usize> = (0..p.files.len()).collect();
    file_order.sort_by_key(|&i| bin_of_comp[p.comp_of_file[i] as usize]);
    Ok(Placement {
        bins,
        bin_of,
        file_order,
    })
}

/// Route the spool's `records` records of bins `group` to one temp file
/// each in `dir`; returns their paths. On the first group, also checks that
/// no chunk is in two bins (it would lose its links), naming `at` (the
/// input and its last line) in the error.
pub(super) fn route_group(
    spool_path: &Path,
    dir: &Path,
    group: std::ops::Range<usize>,
    records: u64,
    bin_of: &[u32],
    at: (&str, u64),
) -> Result<Vec<PathBuf>> {
    let (lo, hi) = (group.start, group.end);
    let paths: Vec<PathBuf> = (lo..hi)
        .map(|b| dir.join(format!("bin{}", b + 1)))
        .collect();
    let mut writers = Vec::with_capacity(hi - lo);
    for p in &paths {
        writers.push(BufWriter::with_capacity(
            1 << 16,
            File::create(p).ctx(|| format!("cannot create {}", p.display()))?,
        ));
    }
    let mut sr = BufReader::with_capacity(
        1 << 20,
        File::open(spool_path).ctx(|| format!("cannot open {}", spool_path.display()))?,
    );
    let mut rec = [0u8; SPOOL_RECORD];
    // (hash, bin, file) of the previous record: a chunk whose files are
    // in two bins would lose its links, so the first pass checks it.
    let mut prev: Option<([u8; 16], usize, u32)> = None;
    for _ in 0..records {
        sr.read_exact(&mut rec)
            .ctx(|| format!("reading {}", spool_path.display()))?;
        let file = u32::from_le_bytes([rec[16], rec[17], rec[18], rec[19]]);
        let b = bin_of[file as usize] as usize;
        if lo == 0 {
            let hash: [u8; 16] = rec[..16].try_into().unwrap_or_default();
            if let Some((h, pb, pf)) = prev {
                if h == hash && pb != b {
                    return Err(crate::Error::input(
                        at.0,
                        at.1,
                        format!(
                            "chunk {} is in files {} and {} of different components: the partition file is inconsistent",
                            formats::hex128(u128::from_le_bytes(hash)),
                            formats::id_string(pf),
                            formats::id_string(file)
                        ),
                    ));
                }
            }
            prev = Some((hash, b, file));
        }
        if (lo..hi).contains(&b) {
            writers[b - lo]
                .write_all(&rec)
                .ctx(|| format!("writing {}", paths[b - lo].display()))?;
        }
    }
    for (w, p) in writers.into_iter().zip(&paths) {
        w.into_inner().map_err(|e| Error::Io {
            context: format!("writing {}", p.display()),
            source: e.into_error(),
        })?;
    }
    Ok(paths)
}

/// Write the bins `lo..` whose records `route_group` put in `paths`: each
/// bin's `#bin` line, its `F` lines, its records; `next_file` is the
/// position in `pl.file_order` of the next bin's first file.
pub(super) fn write_group(
    out: &mut Output,
    buf: &mut Vec<u8>,
    lo: usize,
    paths: &[PathBuf],
    pl: &Placement,
    files: &[FileLine],
    next_file: &mut usize,
) -> Result<()> {
    let mut rec = [0u8; SPOOL_RECORD];
    for (b, p) in (lo..).zip(paths) {
        let bin = &pl.bins[b];
        bin_head(buf, b, pl, files, next_file);
        let mut br = BufReader::with_capacity(
            1 << 20,
            File::open(p).ctx(|| format!("cannot open {}", p.display()))?,
        );
        for _ in 0..bin.records {
            br.read_exact(&mut rec)
                .ctx(|| format!("reading {}", p.display()))?;
            decode(&rec).write(buf);
            if buf.len() >= 1 << 16 {
                out.write_all(buf)?;
                buf.clear();
            }
        }
        drop(br);
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// Bin `b`'s `#bin` line and its `F` lines, to `buf`.
pub(super) fn bin_head(
    buf: &mut Vec<u8>,
    b: usize,
    pl: &Placement,
    files: &[FileLine],
    next_file: &mut usize,
) {
    let bin = &pl.bins[b];
    buf.extend_from_slice(bin_line(b + 1, bin).as_bytes());
    for _ in 0..bin.files {
        files[pl.file_order[*next_file]].write(buf);
        *next_file += 1;
    }
}

/// The partition file's mode: pass 1, the plan, pass 2.
pub(super) fn run(cfg: &Config) -> Result<()> {
    let t0 = std::time::Instant::now();
    let kept = one_bin_input(&cfg.input, cfg.capacity);
    let progress = crate::io::progress::Progress::for_inputs(
        "fsim-binpack",
        &[cfg.input.as_path()],
        cfg.quiet,
    );
    let (input, name) = match &kept {
        Some(k) => {
            let name = cfg.input.display().to_string();
            let f = k.file.try_clone().ctx(|| format!("cannot open {name}"))?;
            let f = progress.reader(BufReader::with_capacity(formats::BUF_SIZE, f));
            let text = k.codec.decode(f).ctx(|| format!("reading {name}"))?;
            (text, name)
        }
        None => progress.open(&cfg.input)?,
    };
    let mut r = LineReader::new(input, name);
    let tmp = tempfile::Builder::new()
        .prefix("fsim-binpack.")
        .tempdir_in(cfg.tmpdir.clone().unwrap_or_else(std::env::temp_dir))
        .ctx(|| "cannot create a temporary directory (see --tmpdir)")?;
    let spool_path = tmp.path().join("spool");
    let mut spool = match kept {
        Some(_) => None,
        None => Some(BufWriter::with_capacity(
            1 << 20,
            File::create(&spool_path).ctx(|| format!("cannot create {}", spool_path.display()))?,
        )),
    };
    let mut p = spool_partition(&mut r, spool.as_mut(), &spool_path)?;
    drop(spool);
    let pl = place(&mut p, cfg.capacity).map_err(|m| r.error(m))?;

    // The plan, before the long part; printed above the progress bar, which
    // would otherwise be redrawn over its last line.
    progress.suspend(|| report_plan(cfg, &p.comps, &pl.bins))?;

    let mut out = Output::create_records(cfg.output.as_deref(), cfg.compress)?;
    let input = Pass2Input {
        kept: kept.as_ref(),
        spool: &spool_path,
        tmp: tmp.path(),
        at: (r.name(), r.line_number()),
    };
    write_bins(&mut out, cfg.capacity, &p, &pl, &input)?;
    out.finish()?;
    progress.finish();
    if !cfg.quiet {
        crate::cli::stderr_line(format_args!(
            "fsim-binpack: {} bins, {} files, {} records, {:.2} s",
            pl.bins.len(),
            p.files.len(),
            p.seen.count,
            t0.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// Where pass 2 finds the records: the input itself when pass 1 left them
/// there, else the spool; per-bin files go to `tmp`; `at` is the input's
/// name and last line (for the errors of routing).
pub(super) struct Pass2Input<'a> {
    pub(super) kept: Option<&'a Kept>,
    pub(super) spool: &'a Path,
    pub(super) tmp: &'a Path,
    pub(super) at: (&'a str, u64),
}

/// Pass 2: the bins file. One bin whose records pass 1 left in a regular
/// input is its records copied as they are; otherwise the spool (written
/// now from the input if pass 1 left them there) is routed to per-bin
/// files, a group of bins at a time, and each group's bins written.
pub(super) fn write_bins(
    out: &mut Output,
    capacity: u64,
    p: &Pass1,
    pl: &Placement,
    input: &Pass2Input,
) -> Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    let params = bins_params(
        p.check.params.as_ref(),
        p.pruned.as_ref(),
        p.changed_only,
        pl.bins.len(),
        capacity,
    );
    formats::write_header(Kind::Bins, &params, &mut buf);
    let mut next_file = 0;
    // One bin (a repository whose graph fits in memory, the usual case):
    // its records are the partition's, in order.
    let one_bin = pl.bins.len() == 1 && pl.bins[0].records == p.seen.count;
    let copied = match input.kept {
        Some(k) if one_bin && p.span.verbatim => {
            bin_head(&mut buf, 0, pl, &p.files, &mut next_file);
            out.write_all(&buf)?;
            buf.clear();
            copy_records(k, &p.span, out, input.at.0)?;
            true
        }
        Some(k) => {
            spool_span(k, &p.span, input.spool, input.at.0)?;
            false
        }
        None => false,
    };
    // Copied: no bin is left to route.
    let routed = if copied { 0 } else { pl.bins.len() };
    for lo in (0..routed).step_by(MAX_OPEN_BINS) {
        let hi = (lo + MAX_OPEN_BINS).min(pl.bins.len());
        // One bin: the spool is its records, in order; routing it would
        // copy every record once more for nothing to check.
        let paths = if one_bin {
            vec![input.spool.to_path_buf()]
        } else {
            route_group(
                input.spool,
                input.tmp,
                lo..hi,
                p.seen.count,
                &pl.bin_of,
                input.at,
            )?
        };
        write_group(out, &mut buf, lo, &paths, pl, &p.files, &mut next_file)?;
    }
    let t = bins_trailer(&p.seen, pl.bins.len(), p.files.len() as u64);
    formats::write_trailer(Kind::Bins, &t, &mut buf);
    out.write_all(&buf)
}
