//! The link source: the kept links of the first read in a temporary file
//! that every later read takes them from ([`Source`]), and the piped
//! pairs spooled to one, so that the pairs' text is read once.

use crate::error::{Error, Result};
use crate::io::sorter::{le_u32, le_u64};
use crate::report::model::{Config, Pair};

/// What reading the links again needs: the kept links (thresholds and
/// filters passed), in the pairs' order, as the first read found them,
/// in a temporary file of [`KEPT_RECORD`] bytes a link (`--tmpdir`).
///
/// The later reads (the figures, the templates, the folder pairs' three
/// passes, the walk of each report) take them from it: each read of the
/// pairs' text parsed and checked every line again (on Django + moment
/// ~40 ms a read, seven reads), and a kept link's record is half a
/// verified pair's line.
pub(crate) struct Source {
    kept: tempfile::NamedTempFile,
}

/// Bytes of a kept link in [`Source`]'s file: a, b (u32), common,
/// shared_chunks (u64), exact (u8), little-endian.
const KEPT_RECORD: usize = 25;

impl Source {
    /// Every kept link (thresholds and filters passed), in file order.
    pub(super) fn kept(&mut self, each: &mut dyn FnMut(Pair)) -> Result<()> {
        use std::io::Read;
        let path = self.kept.path();
        let fail = |e: std::io::Error| Error::msg(format!("reading {}: {e}", path.display()));
        let file = std::fs::File::open(path).map_err(fail)?;
        let mut r = std::io::BufReader::with_capacity(1 << 20, file);
        let mut rec = [0u8; KEPT_RECORD];
        loop {
            match r.read_exact(&mut rec) {
                Ok(()) => each(Pair {
                    a: le_u32(&rec, 0),
                    b: le_u32(&rec, 4),
                    common: le_u64(&rec, 8),
                    shared_chunks: le_u64(&rec, 16),
                    exact: rec[24] != 0,
                }),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(fail(e)),
            }
        }
    }
}

/// Writes the kept links of the first read ([`Source`]).
pub(super) struct KeptWriter {
    out: std::io::BufWriter<std::fs::File>,
    file: tempfile::NamedTempFile,
    failed: Option<std::io::Error>,
}

impl KeptWriter {
    pub(super) fn create(config: &Config) -> Result<KeptWriter> {
        let dir = config.tmpdir.clone().unwrap_or_else(std::env::temp_dir);
        let file = temp_file(&dir, "fsim-report-links.", "")?;
        let handle = file
            .as_file()
            .try_clone()
            .map_err(|e| Error::msg(format!("{}: {e}", file.path().display())))?;
        Ok(KeptWriter {
            out: std::io::BufWriter::with_capacity(1 << 20, handle),
            file,
            failed: None,
        })
    }

    pub(super) fn push(&mut self, p: &Pair) {
        use std::io::Write;
        let mut rec = [0u8; KEPT_RECORD];
        rec[0..4].copy_from_slice(&p.a.to_le_bytes());
        rec[4..8].copy_from_slice(&p.b.to_le_bytes());
        rec[8..16].copy_from_slice(&p.common.to_le_bytes());
        rec[16..24].copy_from_slice(&p.shared_chunks.to_le_bytes());
        rec[24] = u8::from(p.exact);
        if self.failed.is_none() {
            self.failed = self.out.write_all(&rec).err();
        }
    }

    pub(super) fn finish(self) -> Result<Source> {
        use std::io::Write;
        let path = self.file.path().display().to_string();
        let mut out = self.out;
        let done = match self.failed {
            Some(e) => Err(e),
            None => out.flush(),
        };
        done.map_err(|e| Error::msg(format!("writing {path}: {e}")))?;
        Ok(Source { kept: self.file })
    }
}

/// Spool a piped or standard input to a temporary file.
pub(super) fn spool(config: &Config) -> Result<Option<tempfile::NamedTempFile>> {
    let path = &config.pairs;
    let regular =
        path.as_os_str() != "-" && std::fs::metadata(path).map(|m| m.is_file()).unwrap_or(true);
    if regular {
        return Ok(None);
    }
    let dir = config.tmpdir.clone().unwrap_or_else(std::env::temp_dir);
    let mut tmp = temp_file(&dir, "fsim-report-pairs.", "")?;
    let (mut input, name) = crate::formats::open_input(path)?;
    std::io::copy(&mut input, tmp.as_file_mut())
        .map_err(|e| Error::msg(format!("spooling {name} to {}: {e}", tmp.path().display())))?;
    Ok(Some(tmp))
}

/// A temporary file in `dir`, removed on drop.
pub(crate) fn temp_file(
    dir: &std::path::Path,
    prefix: &str,
    suffix: &str,
) -> Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .tempfile_in(dir)
        .map_err(|e| {
            Error::msg(format!(
                "cannot create a temporary file in {}: {e}",
                dir.display()
            ))
        })
}
