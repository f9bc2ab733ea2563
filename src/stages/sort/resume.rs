//! Resuming a killed `fsim-sort` (`--resume-dir DIR`): the finished runs
//! are kept in DIR with a journal, so that the same command run again
//! continues after the last finished run instead of sorting everything
//! again.
//!
//! Why: on a repository of tens of millions of files the sort reads and
//! spills gigabytes; losing that to a reboot late in the stage means doing
//! it all again. What it costs: one `fsync` per run (a run is `--memory`
//! bytes of records, 256 MB by default) and a journal of a few hundred
//! bytes rewritten atomically after it; nothing per record but one
//! comparison. A resumed sort seeks each input to where the last finished
//! run ended, so the records before are neither parsed nor sorted again;
//! the output is byte-identical (the merge of sorted runs does not depend
//! on where runs end).
//!
//! # The journal
//!
//! `DIR/journal`, text, written after each run is fsynced (temp file,
//! fsync, rename, fsync of DIR), and once more after the last run, when
//! all inputs are read and checked:
//!
//! ```text
//! #fsim-sort journal v1
//! memory<TAB><bytes>
//! input<TAB><size><TAB><mtime s><TAB><mtime ns><TAB><escaped path>      one per input, in order
//! run<TAB><file name><TAB><records>                                    each finished run
//! at<TAB><input><TAB><byte offset><TAB><line><TAB><records><TAB><sum>  where reading continues
//! meta<TAB><input><TAB><escaped line>                                  each '#' line read so far
//! #end
//! ```
//!
//! `at` gives the input (its index; the number of inputs once all are
//! read), the byte offset and line number after the last record in a run,
//! and the digest of that input's records up to there (count and sum, as
//! [`Digest`]), so the input's trailer is still checked against all its
//! records. The `meta` lines (headers, trailers) are replayed into the
//! same checks and are written out as before.
//!
//! A journal that does not fit is not used: other inputs, an input whose
//! size or modification time changed, another `--memory` (runs would end
//! elsewhere; harmless, but the journal says where reading continues only
//! for its own runs), a run missing or of the wrong length, or a damaged
//! journal. The sort then starts from the beginning, after one warning and
//! after removing the old runs.

use crate::error::{Context, Error, Result};
use crate::formats::{escape_path, hex128, parse_hex128, unescape_path, Digest};
use crate::stages::sort::keys::{ChunkKey, FixedRecord};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const MAGIC: &str = "#fsim-sort journal v1";
const JOURNAL: &str = "journal";

/// An input as the journal identifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InputId {
    size: u64,
    mtime: (i64, i64),
    path: Vec<u8>,
}

/// Where reading continues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Position {
    /// Index of the input (the number of inputs: all read and checked).
    pub input: usize,
    /// Bytes of that input already in runs.
    pub offset: u64,
    /// Lines of that input before `offset`.
    pub line: u64,
    /// Digest of that input's records before `offset`.
    pub seen: Digest,
}

/// What a killed sort had finished.
#[derive(Debug, Clone, Default)]
pub struct Checkpoint {
    /// Finished runs (path in the resume dir, records).
    pub runs: Vec<(PathBuf, u64)>,
    pub at: Position,
    /// The '#' lines read before `at`, with the index of their input.
    pub meta: Vec<(usize, Vec<u8>)>,
}

/// The resume directory of one sort.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    memory: u64,
    inputs: Vec<InputId>,
}

impl Journal {
    /// Open `dir` (created when missing) for a sort of `inputs` with
    /// `memory`: the checkpoint of an earlier, killed sort when its journal
    /// fits, else none (one warning, its runs removed). Standard input is
    /// refused: it cannot be read again.
    pub fn open(
        dir: &Path,
        inputs: &[PathBuf],
        memory: u64,
    ) -> Result<(Journal, Option<Checkpoint>)> {
        let mut ids = Vec::with_capacity(inputs.len());
        for p in inputs {
            if p.as_os_str() == "-" {
                return Err(Error::msg(
                    "--resume-dir needs input files: standard input cannot be read again",
                ));
            }
            let m = std::fs::metadata(p).ctx(|| format!("cannot open {}", p.display()))?;
            ids.push(InputId {
                size: m.len(),
                mtime: (m.mtime(), m.mtime_nsec()),
                path: p.as_os_str().as_bytes().to_vec(),
            });
        }
        std::fs::create_dir_all(dir)
            .ctx(|| format!("cannot create the resume directory {}", dir.display()))?;
        let j = Journal {
            dir: dir.to_path_buf(),
            memory,
            inputs: ids,
        };
        let path = dir.join(JOURNAL);
        let cp = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).ctx(|| format!("cannot read {}", path.display())),
            Ok(text) => match j.parse(&text) {
                Ok(cp) => Some(cp),
                Err(why) => {
                    crate::cli::stderr_line(format_args!(
                        "fsim-sort: warning: {}: {why}: sorting from the start",
                        path.display()
                    ));
                    None
                }
            },
        };
        let keep: Vec<&Path> = cp
            .iter()
            .flat_map(|c| c.runs.iter().map(|r| r.0.as_path()))
            .collect();
        j.remove_files(|p| !keep.contains(&p))?;
        Ok((j, cp))
    }

    /// The resume directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Record that `runs` are finished (and fsynced) and reading continues
    /// at `at` with `meta` read so far: the journal is replaced atomically.
    pub fn write(
        &self,
        runs: &[(PathBuf, u64)],
        at: &Position,
        meta: &[(usize, Vec<u8>)],
    ) -> Result<()> {
        let mut t = Vec::with_capacity(256 + 64 * runs.len());
        t.extend_from_slice(MAGIC.as_bytes());
        t.extend_from_slice(format!("\nmemory\t{}\n", self.memory).as_bytes());
        for i in &self.inputs {
            t.extend_from_slice(
                format!("input\t{}\t{}\t{}\t", i.size, i.mtime.0, i.mtime.1).as_bytes(),
            );
            escape_path(&i.path, &mut t);
            t.push(b'\n');
        }
        for (p, n) in runs {
            let name = p.file_name().unwrap_or_default().as_bytes();
            t.extend_from_slice(b"run\t");
            escape_path(name, &mut t);
            t.extend_from_slice(format!("\t{n}\n").as_bytes());
        }
        t.extend_from_slice(
            format!(
                "at\t{}\t{}\t{}\t{}\t{}\n",
                at.input,
                at.offset,
                at.line,
                at.seen.count,
                hex128(at.seen.sum)
            )
            .as_bytes(),
        );
        for (i, l) in meta {
            t.extend_from_slice(format!("meta\t{i}\t").as_bytes());
            escape_path(l, &mut t);
            t.push(b'\n');
        }
        t.extend_from_slice(b"#end\n");
        let path = self.dir.join(JOURNAL);
        let tmp = self.dir.join("journal.tmp");
        let ctx = || format!("writing {}", path.display());
        let mut f = std::fs::File::create(&tmp).ctx(ctx)?;
        f.write_all(&t).ctx(ctx)?;
        f.sync_all().ctx(ctx)?;
        std::fs::rename(&tmp, &path).ctx(ctx)?;
        std::fs::File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .ctx(ctx)
    }

    /// The sort is complete: remove the runs, the journal and the directory
    /// (left in place if something else is in it). Failures are warnings:
    /// the output is already in place.
    pub fn remove(self) {
        if let Err(e) = self.remove_files(|_| true) {
            crate::cli::stderr_line(format_args!("fsim-sort: warning: {e}"));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// Remove this module's files in the directory (runs, journal, its
    /// temp file) for which `doomed` is true; nothing else is touched.
    fn remove_files(&self, doomed: impl Fn(&Path) -> bool) -> Result<()> {
        let ctx = || format!("cleaning the resume directory {}", self.dir.display());
        for e in std::fs::read_dir(&self.dir).ctx(ctx)? {
            let p = e.ctx(ctx)?.path();
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            let ours =
                name.starts_with(JOURNAL) || (name.starts_with("run") && name.ends_with(".bin"));
            if ours && doomed(&p) {
                std::fs::remove_file(&p).ctx(|| format!("removing {}", p.display()))?;
            }
        }
        Ok(())
    }

    /// Read a journal; why it does not fit this sort, if it does not.
    fn parse(&self, text: &[u8]) -> std::result::Result<Checkpoint, String> {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let mut lines = text.split(|&b| b == b'\n');
        if lines.next() != Some(MAGIC.as_bytes()) {
            return Err("not a journal of this version".into());
        }
        let mut cp = Checkpoint::default();
        let mut inputs = Vec::new();
        let (mut memory, mut at, mut end) = (None, None, false);
        let bad = |l: &[u8]| format!("damaged line {:?}", String::from_utf8_lossy(l));
        for l in lines {
            if end {
                return Err(bad(l));
            }
            let f: Vec<&[u8]> = l.split(|&b| b == b'\t').collect();
            let num = |i: usize| -> std::result::Result<u64, String> {
                f.get(i)
                    .and_then(|x| std::str::from_utf8(x).ok())
                    .and_then(|x| x.parse().ok())
                    .ok_or_else(|| bad(l))
            };
            match (f[0], f.len()) {
                (b"memory", 2) => memory = Some(num(1)?),
                (b"input", 5) => inputs.push(InputId {
                    size: num(1)?,
                    mtime: (num(2)? as i64, num(3)? as i64),
                    path: unescape_path(f[4]).map_err(|_| bad(l))?,
                }),
                (b"run", 3) => {
                    let name = unescape_path(f[1]).map_err(|_| bad(l))?;
                    let path = self.dir.join(std::ffi::OsString::from_vec(name));
                    cp.runs.push((path, num(2)?));
                }
                (b"at", 6) => {
                    at = Some(Position {
                        input: num(1)? as usize,
                        offset: num(2)?,
                        line: num(3)?,
                        seen: Digest {
                            count: num(4)?,
                            sum: parse_hex128(f[5]).ok_or_else(|| bad(l))?,
                        },
                    })
                }
                (b"meta", 3) => cp
                    .meta
                    .push((num(1)? as usize, unescape_path(f[2]).map_err(|_| bad(l))?)),
                (b"#end", 1) => end = true,
                _ => return Err(bad(l)),
            }
        }
        if !end {
            return Err("the journal is incomplete".into());
        }
        cp.at = at.ok_or("the journal has no position")?;
        if memory != Some(self.memory) {
            return Err(format!(
                "written with --memory {}, this sort has {}",
                memory.unwrap_or(0),
                self.memory
            ));
        }
        if inputs != self.inputs {
            return Err(
                "written for other inputs, or an input changed since (size or mtime)".into(),
            );
        }
        for (p, n) in &cp.runs {
            let want = n * ChunkKey::SIZE as u64;
            match std::fs::metadata(p) {
                Ok(m) if m.len() == want => {}
                Ok(m) => {
                    return Err(format!(
                        "run {} has {} bytes, the journal says {want}",
                        p.display(),
                        m.len()
                    ))
                }
                Err(e) => return Err(format!("run {}: {e}", p.display())),
            }
        }
        Ok(cp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trip_and_damage() {
        let t = tempfile::tempdir().unwrap();
        let input = t.path().join("in\tput.tsv");
        std::fs::write(&input, b"whatever").unwrap();
        let dir = t.path().join("runs");
        let (j, cp) = Journal::open(&dir, std::slice::from_ref(&input), 4096).unwrap();
        assert!(cp.is_none());
        let run = dir.join("run000001.bin");
        std::fs::write(&run, vec![0u8; 2 * ChunkKey::SIZE]).unwrap();
        let at = Position {
            input: 0,
            offset: 123,
            line: 4,
            seen: Digest { count: 2, sum: 99 },
        };
        let meta = vec![(0, b"#fsim chunks v1\tavg=100".to_vec())];
        j.write(&[(run.clone(), 2)], &at, &meta).unwrap();
        let text = std::fs::read(dir.join(JOURNAL)).unwrap();
        let cp = j.parse(&text).unwrap();
        assert_eq!(
            (cp.runs, cp.at, cp.meta),
            (vec![(run.clone(), 2)], at, meta)
        );
        // Cut short: incomplete. A run shorter than journaled: named.
        assert_eq!(
            j.parse(&text[..text.len() - 5]).unwrap_err(),
            "the journal is incomplete"
        );
        std::fs::write(&run, vec![0u8; 30]).unwrap();
        assert!(j
            .parse(&text)
            .unwrap_err()
            .ends_with("run000001.bin has 30 bytes, the journal says 48"));
        // Opening again: the journal does not fit, so its run is removed.
        let (_, cp) = Journal::open(&dir, &[input], 4096).unwrap();
        assert!(cp.is_none());
        assert!(!run.exists());
    }
}
