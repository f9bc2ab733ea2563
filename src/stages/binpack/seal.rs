//! `--seal PLAN`: a slice of a bins file made a bins file of its own.

use super::pack::bins_trailer;
use super::Config;
use crate::error::{Context, Error, Result};
use crate::formats::bins::{parse_record, FileLine};
use crate::formats::headers::BinsHeader;
use crate::formats::open_input;
use crate::formats::{self, classify_line, Digest, Kind, Line, LineReader};
use crate::io::Output;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

/// `--seal PLAN`: a slice of a bins file (consecutive bins: each `#bin`
/// line, its `F` lines and its records, as fsim-binpack writes them), made
/// a bins file of its own: PLAN's header (a bins file or the plan of
/// `--components`) with `bins=` the slice's, the slice as it is, and a
/// trailer with its records' count and digest, its bins and its files. A
/// distributed run's analysis tasks (scripts/spark) each analyse one slice;
/// the checks fsim-analyze makes of a bins file then hold for it.
pub fn run_seal(plan: &Path, cfg: &Config) -> Result<()> {
    let mut head = LineReader::new(
        BufReader::new(File::open(plan).ctx(|| format!("cannot open {}", plan.display()))?),
        plan.display().to_string(),
    );
    let first = head.next_raw()?.map(<[u8]>::to_vec);
    let params = match first.as_deref().map(classify_line) {
        Some(Ok(Line::Header(Kind::Bins, p))) => p,
        _ => return Err(head.error("expected a '#fsim bins v1' header on line 1")),
    };
    let mut header = BinsHeader::parse(&params).map_err(|m| head.error(m))?;
    let (input, name) = open_input(&cfg.input)?;
    let mut r = LineReader::new(input, name.clone());
    let mut body = Vec::new();
    let (mut bins, mut files, mut records) = (0u64, 0u64, Digest::default());
    loop {
        let ln = r.line_number() + 1;
        let Some(raw) = r.next_raw()? else { break };
        let err = |m: String| Error::input(&name, ln, m);
        if raw.starts_with(b"#bin\t") {
            bins += 1;
        } else if bins == 0 {
            return Err(err(
                "expected a #bin line before the bin's F lines and records".into(),
            ));
        } else if raw.starts_with(b"F\t") {
            FileLine::parse(raw).map_err(err)?;
            files += 1;
        } else {
            records.add(&parse_record(raw).map_err(|m| err(format!("{m} or a #bin line")))?);
        }
        body.extend_from_slice(raw);
        body.push(b'\n');
    }
    header.bins = Some(bins);
    let mut buf = Vec::with_capacity(body.len() + 512);
    formats::write_header(
        Kind::Bins,
        &params.merged(&header.packing_params()),
        &mut buf,
    );
    buf.extend_from_slice(&body);
    formats::write_trailer(
        Kind::Bins,
        &bins_trailer(&records, bins as usize, files),
        &mut buf,
    );
    let mut out = Output::create(cfg.output.as_deref())?;
    out.write_all(&buf)?;
    out.finish()
}
