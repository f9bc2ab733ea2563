//! Re-runs that analyse only the changed files (`--previous-files`,
//! `--previous-verified`): the pairs written are those with at least one
//! file changed since the earlier run; fsim-verify takes the others from
//! that run's verified pairs (`previous`), and the verified output is the
//! same bytes as a run from scratch.
//!
//! Why the other pairs need no analysis: a pair's bytes in common (chunks
//! and line source alike) depend only on the two files' contents and on
//! what the analysis ignores. So when both files are unchanged (path, size,
//! content hash, type) and the earlier run ignored the same chunks (same
//! chunking, templates and thresholds, and the same chunks dropped by the
//! degree limit: `pruned-digest`), the earlier run found the same pair with
//! the same figures, and its verified pairs hold it if it reaches the
//! threshold. Identical copies are analysed once, through their smallest
//! id, so a file with the content of a file added, removed or changed
//! counts as changed too ([`crate::formats::files::changed_since`]). And
//! pairs below the earlier verification threshold were not kept, so a
//! lower threshold now makes this run a full one, saying why; so does an
//! earlier run that cut long lines otherwise (its line source found other
//! pairs, and fsim-verify does not reuse its figures).

use super::pairs::pairs_params;
use super::{LineSource, Thresholds};
use crate::error::{Error, Result};
use crate::formats::files::read_file_table;
use crate::formats::headers::{Delta, PairsHeader};
use crate::formats::{read_header, FileEntry, Kind, Params};
use crate::stages::verify::LONG_LINES_RULE;
use std::path::{Path, PathBuf};

/// Keys of the pairs header that may differ between the runs: they count
/// the dropped chunks' files and the limit, not which chunks were dropped;
/// and the line source's cut at fsim-verify's threshold, which the
/// threshold's own check below covers (an earlier run cut at a higher one
/// also verified at it).
const MAY_DIFFER: &[&str] = &["degree-limit", "pruned-files", "line-verify-min-percent"];

/// The earlier run, as given on the command line.
#[derive(Debug, Clone)]
pub struct Since {
    pub files: PathBuf,
    pub verified: PathBuf,
    /// The threshold this run's pairs will be verified at.
    pub verify_min_percent: f64,
}

/// The files changed since the earlier run, by this run's id.
#[derive(Debug, Clone)]
pub struct Changed {
    pub flags: Vec<bool>,
    pub count: u64,
}

impl Changed {
    #[inline]
    pub fn any(&self, a: u32, b: u32) -> bool {
        self.flags.get(a as usize).copied().unwrap_or(true)
            || self.flags.get(b as usize).copied().unwrap_or(true)
    }
}

/// Which files changed, and whether the earlier run's pairs can stand for
/// the others: `Err(reason)` when this run must analyse everything.
pub fn plan(
    files: &[FileEntry],
    since: &Since,
    bins: &Path,
    th: &Thresholds,
    lines: Option<&LineSource>,
) -> Result<std::result::Result<Changed, String>> {
    let (old, _) = read_file_table(&since.files)?;
    let old_verified = read_header(&since.verified, Kind::Pairs)?;
    let verified_name = since.verified.display().to_string();
    let old_header = PairsHeader::from_params(&old_verified, &verified_name)?;
    let Some(old_verify) = old_header.verify else {
        return Err(Error::msg(format!(
            "{}: expected the verified pairs of the earlier run (written by fsim-verify)",
            since.verified.display()
        )));
    };
    if bins.as_os_str() == "-" {
        return Err(Error::msg(
            "with --previous-files the bins must be a file, not standard input (its header is read first)",
        ));
    }
    let bins_params = crate::formats::stage_params(&read_header(bins, Kind::Bins)?);
    let now = pairs_params(&bins_params, th, lines)
        .map_err(|m| Error::msg(format!("{}: {m}", bins.display())))?;
    let now = without(&now, MAY_DIFFER);
    let mut before = without(&old_verified, MAY_DIFFER);
    before.0.retain(|(k, _)| !k.starts_with("verif"));
    if let Some(d) = now.difference(&before) {
        return Ok(Err(format!("the earlier analysis differs: {d}")));
    }
    if old_verify.long_lines.as_deref() != Some(LONG_LINES_RULE) {
        return Ok(Err(format!(
            "the earlier run cut long lines otherwise (verify-long-lines={}, {LONG_LINES_RULE} now)",
            old_verify.long_lines.as_deref().unwrap_or("none")
        )));
    }
    match old_verify.min_percent {
        Some(t) if t <= since.verify_min_percent => {}
        t => {
            return Ok(Err(format!(
                "the earlier run kept verified pairs from {}%, this one needs them from {}%",
                t.map_or("?".into(), |t| t.to_string()),
                since.verify_min_percent
            )))
        }
    }
    let (flags, _) = crate::formats::files::changed_since(files, &old);
    let count = flags.iter().filter(|&&c| c).count() as u64;
    Ok(Ok(Changed { flags, count }))
}

/// `p` without `keys`.
fn without(p: &Params, keys: &[&str]) -> Params {
    Params(
        p.0.iter()
            .filter(|(k, _)| !keys.contains(&k.as_str()))
            .cloned()
            .collect(),
    )
}

/// The header keys a delta pairs file carries.
pub fn mark(p: Params, changed: &Changed) -> Params {
    let delta = Delta {
        changed_files: Some(changed.count),
    };
    p.merged(&delta.to_params())
}
