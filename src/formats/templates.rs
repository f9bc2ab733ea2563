//! The templates file (`fsim-template`'s output, paper section 4): the
//! chunks (hash, length) that every analysis given `--templates` ignores,
//! read into a [`TemplateSet`] whose identity goes into the headers of the
//! stages that applied it.

use crate::error::{Error, Result};
use crate::formats::chunks::{mix128, Digest};
use crate::formats::headers::Templates;
use crate::formats::lines::{
    open_input, InputCheck, Kind, Line, LineReader, Params, CHUNK_PARAM_KEYS,
};
use crate::formats::numbers::{hex128, parse_hex128, parse_u64, split_fields};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The union of one or more templates files.
#[derive(Debug, Clone, Default)]
pub struct TemplateSet {
    /// Template chunk hash -> length.
    pub(crate) chunks: HashMap<u128, u32>,
    /// Order-independent digest of the distinct hashes.
    sum: u128,
    /// Chunking parameters of the files (None when no file was given).
    params: Option<Params>,
}

/// Digest contribution of one template line.
pub fn line_mix(hash: u128, len: u32) -> u128 {
    mix128(hash ^ ((len as u128) << 64) ^ 0x7e37)
}

impl TemplateSet {
    /// Read and merge templates files (each may hold several appended
    /// sections: header, lines, trailer). Each section's chunking
    /// parameters must be those of `chunk_params` (the run's).
    pub fn load(paths: &[PathBuf], chunk_params: &Params) -> Result<TemplateSet> {
        let mut set = TemplateSet::default();
        for path in paths {
            set.read_one(path, chunk_params)?;
        }
        Ok(set)
    }

    fn read_one(&mut self, path: &Path, chunk_params: &Params) -> Result<()> {
        let (input, name) = open_input(path)?;
        let mut r = LineReader::new(input, name.clone());
        let mut check = InputCheck::new(Kind::Templates, "templates");
        let mut seen = Digest::default();
        let want = chunk_params.only(CHUNK_PARAM_KEYS);
        while let Some((line, line_no)) = r.next_numbered()? {
            let err = |m: String| Error::input(&name, line_no, m);
            match line {
                Line::Header(k, p) => {
                    if let Some(d) = p.only(CHUNK_PARAM_KEYS).difference(&want) {
                        return Err(err(format!(
                            "templates made from chunks with other parameters than this run's: {d}"
                        )));
                    }
                    check.header(k, p).map_err(err)?;
                }
                Line::Trailer(k, p) => check.trailer(k, &p).map_err(err)?,
                Line::Comment(_) => {}
                Line::Data(d) => {
                    if check.params.is_none() {
                        return Err(err(
                            "expected a '#fsim templates v1' header (written by fsim-template)"
                                .into(),
                        ));
                    }
                    let (hash, len) = parse_line(d).ok_or_else(|| {
                        err("expected a template line: 32 hex digits, a tab, a length".into())
                    })?;
                    seen.add_mix(line_mix(hash, len));
                    if self.chunks.insert(hash, len).is_none() {
                        self.sum = self.sum.wrapping_add(mix128(hash));
                    }
                }
            }
        }
        check.finish(&seen, &name, r.line_number())?;
        self.params = Some(want);
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    #[inline]
    pub fn contains(&self, hash: u128) -> bool {
        self.chunks.contains_key(&hash)
    }

    /// The set's identity for headers: `templates=<digest>` and
    /// `template-chunks=<N>`; `None` when the set is empty.
    pub fn identity(&self) -> Option<Templates> {
        (!self.is_empty()).then(|| Templates {
            sum: self.sum,
            chunks: self.len() as u64,
        })
    }

    /// [`TemplateSet::identity`] as header parameters (none when empty).
    pub fn header_params(&self) -> Params {
        self.identity().map_or_else(Params::new, |t| t.to_params())
    }

    /// Check that an input (e.g. pairs) was made with exactly this set.
    /// `what` names the input in the message.
    pub fn check_against(&self, p: &Params, what: &str) -> std::result::Result<(), String> {
        let theirs = Templates::parse(p)?;
        Err(match (theirs, self.identity()) {
            (theirs, mine) if theirs == mine => return Ok(()),
            (Some(t), None) => format!(
                "{what} ignored {} template chunks (templates={}): give the same --templates files",
                t.chunks,
                hex128(t.sum)
            ),
            (None, _) => format!(
                "{what} were made without templates but --templates was given: drop it, or re-run from fsim-partition with it"
            ),
            (Some(t), Some(mine)) => format!(
                "{what} were made with other templates ({} chunks, templates={}) than the --templates given ({} chunks, templates={})",
                t.chunks,
                hex128(t.sum),
                mine.chunks,
                hex128(mine.sum)
            ),
        })
    }
}

/// Parse `<hash>\t<length>`.
fn parse_line(d: &[u8]) -> Option<(u128, u32)> {
    let [h, l] = split_fields::<2>(d)?;
    Some((parse_hex128(h)?, u32::try_from(parse_u64(l)?).ok()?))
}
