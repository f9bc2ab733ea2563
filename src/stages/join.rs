//! fsim-join: parts of one fsim file, written by several tasks, joined
//! into one file (or only its header and summed trailer), and the file
//! tables of a run's shards joined into the run's. The format logic is
//! `formats::join` and `formats::shards`; this stage opens the inputs and
//! writes the outputs atomically.

use crate::error::{Context, Result};
use crate::formats::join::Joiner;
use crate::formats::shards::ShardTables;
use crate::formats::{open_input, ChunkRecord, Digest, LineReader};
use crate::io::Output;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// What to join, and where to.
pub struct Config {
    /// The parts, in order (`-`: standard input); each input holds whole parts.
    pub inputs: Vec<PathBuf>,
    /// Output file (standard output when absent), written atomically.
    pub output: Option<PathBuf>,
    /// Only the header and the summed trailer, not the parts' records.
    pub ends_only: bool,
}

/// The shards' file tables joined into the run's (`--shard-tables`).
pub struct ShardConfig {
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    /// The run's chunk records' count and digest, when their ids were
    /// renumbered (a file skipped): the sum of these parts' ([`run_renumber`]'s
    /// trailers); else (empty) the shards' sums.
    pub records: Vec<Digest>,
    /// Where to write `position<TAB>id` for every file whose id is not its
    /// walk position (nothing when no file was skipped).
    pub moved: Option<PathBuf>,
    /// Where to write the run's chunk stream's header and trailer.
    pub chunk_ends: Option<PathBuf>,
    /// The members tables of the archives the shards left `~unlisted`
    /// (`fsim-chunk --members-of`): their members are inserted after them.
    pub members: Vec<PathBuf>,
    /// Where to write the entries of the archives left `~unlisted` (none
    /// when members tables are given: each is then in one).
    pub unlisted: Option<PathBuf>,
}

/// Join the shard tables; nothing is left at the output paths on an error.
pub fn run_shard_tables(cfg: &ShardConfig) -> Result<()> {
    let mut tables = ShardTables::default();
    for path in &cfg.inputs {
        let (input, name) = open_input(path)?;
        tables.read(&mut LineReader::new(input, name))?;
    }
    for path in &cfg.members {
        let (input, name) = open_input(path)?;
        tables.read_members(&mut LineReader::new(input, name))?;
    }
    let mut out = Output::create(cfg.output.as_deref())?;
    let records = (!cfg.records.is_empty()).then(|| {
        cfg.records.iter().fold(Digest::default(), |mut d, p| {
            d.merge(p);
            d
        })
    });
    let crate::formats::shards::Joined {
        moved,
        chunk_ends,
        unlisted,
    } = tables.write(records, &mut out)?;
    for (path, bytes) in [(&cfg.chunk_ends, chunk_ends), (&cfg.unlisted, unlisted)] {
        if let Some(path) = path {
            let mut e = Output::create(Some(path))?;
            e.write_all(&bytes)?;
            e.finish()?;
        }
    }
    if let Some(path) = &cfg.moved {
        let mut m = Output::create(Some(path))?;
        for (pos, id) in moved {
            writeln!(m, "{pos}\t{id}").ctx(|| format!("writing {}", path.display()))?;
        }
        m.finish()?;
    }
    out.finish()
}

/// Chunk records renumbered by a `--moved` map (`--renumber`): a distributed
/// run's shards number their files by walk position, and a file skipped
/// while chunking moves every later id down; the tasks holding the records
/// renumber them where they are (fsim-spark), not the driver.
pub struct RenumberConfig {
    /// `POSITION<TAB>ID` lines, as `--shard-tables --moved` wrote them.
    pub moved: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
}

/// The prefix of [`run_renumber`]'s last line, `#records<TAB>COUNT:DIGEST`:
/// the part's digest, given back to `--shard-tables --records` as it is.
pub const RECORDS_LINE: &str = "#records\t";

/// Write the input's chunk records (bare lines, or whole chunk files whose
/// `#` lines are dropped) with their ids renumbered, then
/// [`RECORDS_LINE`] with their count and digest. A member's record, as
/// `fsim-chunk --members-of` writes it (`HASH<TAB>K<TAB>LEN<TAB>POSITION`:
/// the K-th member of the archive at that walk position), gets the id
/// K after its archive's.
pub fn run_renumber(cfg: &RenumberConfig) -> Result<()> {
    let map = read_moved(&cfg.moved)?;
    let mut out = Output::create(cfg.output.as_deref())?;
    let (mut digest, mut buf) = (Digest::default(), Vec::with_capacity(1 << 16));
    for path in &cfg.inputs {
        let (input, name) = open_input(path)?;
        let mut r = LineReader::new(input, name);
        while let Some(line) = r.next_raw()? {
            if line.first() == Some(&b'#') {
                continue;
            }
            let rec = renumbered(line, &map).map_err(|m| r.error(m))?;
            digest.add(&rec);
            rec.write(&mut buf);
            if buf.len() >= 1 << 16 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
    }
    let last = format!(
        "{RECORDS_LINE}{}:{}\n",
        digest.count,
        crate::formats::hex128(digest.sum)
    );
    buf.extend_from_slice(last.as_bytes());
    out.write_all(&buf)?;
    out.finish()
}

/// One record line renumbered by `map` (position to id): a chunk record,
/// or a member's (a fourth field, its archive's walk position).
fn renumbered(line: &[u8], map: &HashMap<u32, u32>) -> std::result::Result<ChunkRecord, String> {
    let id = |pos: u32| map.get(&pos).copied().unwrap_or(pos);
    let expected = || format!("expected {}", ChunkRecord::EXPECTED);
    let Some(mut rec) = ChunkRecord::parse(line) else {
        let at = line
            .iter()
            .rposition(|&b| b == b'\t')
            .ok_or_else(expected)?;
        let (Some(mut rec), Some(pos)) = (
            ChunkRecord::parse(&line[..at]),
            crate::formats::parse_id(&line[at + 1..]),
        ) else {
            return Err(format!(
                "{} (or a member's, with its archive's 10-digit walk position after a tab)",
                expected()
            ));
        };
        rec.file = id(pos)
            .checked_add(rec.file)
            .ok_or("a member's id over 2^32")?;
        return Ok(rec);
    };
    rec.file = id(rec.file);
    Ok(rec)
}

/// The `--moved` map: position to id.
fn read_moved(path: &std::path::Path) -> Result<HashMap<u32, u32>> {
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name);
    let mut map = HashMap::new();
    while let Some(line) = r.next_raw()? {
        let pair = std::str::from_utf8(line).ok().and_then(|l| {
            let (p, i) = l.split_once('\t')?;
            Some((p.parse().ok()?, i.parse().ok()?))
        });
        let Some((pos, id)) = pair else {
            return Err(r.error("expected POSITION<TAB>ID (two file ids)"));
        };
        map.insert(pos, id);
    }
    Ok(map)
}

/// Join the inputs' parts; nothing is left at the output path on an error.
pub fn run(cfg: &Config) -> Result<()> {
    let mut out = Output::create(cfg.output.as_deref())?;
    let mut joiner = Joiner::new(!cfg.ends_only);
    for path in &cfg.inputs {
        let (input, name) = open_input(path)?;
        joiner.read(&mut LineReader::new(input, name), &mut out)?;
    }
    joiner.finish(&mut out)?;
    out.finish()
}
