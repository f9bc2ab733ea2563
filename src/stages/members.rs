//! `fsim-chunk --members-of LIST`: the members of the archives a shard run
//! left unlisted (docs/distributed.md, "Archives"). A shard's ids are walk
//! positions, so it lists no members and marks an archive `~unlisted`;
//! make's merging run reads the archives again, but a distributed run
//! (fsim-spark) joins the shard tables without walking. This lists, for
//! each archive of LIST (the entries `fsim-join --shard-tables --unlisted`
//! writes), what the unsharded run lists after it: the same
//! [`members::expand`], so the bytes are the same.
//!
//! The outputs, for `fsim-join` to put in place:
//!
//! * a members table (`--files-out`): a file table with the run's header
//!   (no `shard=`), each archive's entry with its walk position as id and
//!   why members were left out, if any (the `~unlisted` mark replaced),
//!   then its members' entries numbered 1, 2, ... after it; its trailer
//!   has the records' count and digest as written (member ids 1, 2, ...);
//! * the members' chunk records (`-o`), each a chunk record whose id is
//!   the member's number followed by a tab and the archive's walk position
//!   (`HASH<TAB>K<TAB>LEN<TAB>POSITION`): `fsim-join --renumber` gives it
//!   its id in the run, the archive's plus K.
//!
//! The archive's own records are the shard's (it chunked it); only its
//! members are read here, one archive at a time (memory: one archive read
//! whole, within the same limits as fsim-chunk's).

use crate::chunking::chunker::Chunker;
use crate::chunking::members;
use crate::chunking::reader::{read_buffer, FileResult};
use crate::chunking::stream::StreamInfo;
use crate::content::{Limits, Mode};
use crate::error::{Error, Result};
use crate::formats::files::TableDigest;
use crate::formats::headers::{ChunkParams, FilesHeader, FilesTrailer};
use crate::formats::{
    self, open_input, write_id, ChunkRecord, Digest, FileEntry, Kind, LeftOut, LineReader,
};
use crate::io::walk::warning_line;
use crate::io::Output;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// What `fsim-chunk --members-of` reads and writes.
pub struct Config {
    /// The archives' entries (`-`: standard input).
    pub list: PathBuf,
    /// The members' records (standard output when absent or `-`).
    pub output: Option<PathBuf>,
    /// The members table.
    pub files_out: PathBuf,
    pub chunker: Chunker,
    /// Must be `auto` (only content views list members).
    pub content: Mode,
    pub quiet: bool,
}

/// What was written.
#[derive(Default)]
struct Written {
    archives: u64,
    members: u64,
    entries: u64,
    table: TableDigest,
    digest: Digest,
}

/// List the members of every archive of `cfg.list`; both outputs are
/// written atomically (nothing is left at their paths on an error).
pub fn run(cfg: &Config) -> Result<()> {
    if cfg.content != Mode::Auto {
        return Err(Error::msg(
            "--members-of lists archive members, which only --content auto does",
        ));
    }
    let params = FilesHeader {
        chunk: ChunkParams {
            content: Some(cfg.content.name().into()),
            ..cfg.chunker.chunk_params()
        },
        ..FilesHeader::default()
    }
    .to_params();
    let (input, name) = open_input(&cfg.list)?;
    let mut list = LineReader::new(input, name);
    let mut records = Output::create(cfg.output.as_deref())?;
    let mut table = Output::create(Some(&cfg.files_out))?;
    let mut tbuf = Vec::new();
    formats::write_header(Kind::Files, &params, &mut tbuf);
    let (mut w, mut rbuf) = (Written::default(), Vec::new());
    let mut read_buf = read_buffer(&cfg.chunker);
    let limits = Limits::default();
    while let Some(line) = list.next_raw()? {
        if line.first() == Some(&b'#') {
            continue;
        }
        let e = archive_entry(line).map_err(|m| list.error(m))?;
        let found = members::expand(&as_result(&e), &cfg.chunker, &mut read_buf, &limits);
        write_group(&mut w, e, found, &mut tbuf, &mut rbuf);
        if rbuf.len() >= 1 << 16 {
            records.write_all(&rbuf)?;
            rbuf.clear();
        }
        if tbuf.len() >= 1 << 16 {
            table.write_all(&tbuf)?;
            tbuf.clear();
        }
    }
    let trailer = FilesTrailer {
        files: Some(w.entries),
        records: Some(w.digest.count),
        digest: Some(w.digest.sum),
        skipped: Some(0),
        table_digest: Some(w.table.0),
        ..Default::default()
    };
    formats::write_trailer(Kind::Files, &trailer.to_params(), &mut tbuf);
    records.write_all(&rbuf)?;
    table.write_all(&tbuf)?;
    table.finish()?;
    records.finish()?;
    if !cfg.quiet {
        crate::cli::stderr_line(format!(
            "{}: {} archives, {} members, {} records",
            crate::stages::chunk::PROG,
            w.archives,
            w.members,
            w.digest.count
        ));
    }
    Ok(())
}

/// An entry of LIST: an archive a shard run marked `~unlisted`.
fn archive_entry(line: &[u8]) -> std::result::Result<FileEntry, String> {
    let e = FileEntry::parse(line)?;
    if e.view.left_out != Some(LeftOut::Unlisted) || e.view.is_member() {
        return Err(
            "expected the entry of an archive a shard run marked ~unlisted (fsim-join --shard-tables --unlisted)"
                .into(),
        );
    }
    Ok(e)
}

/// The archive as fsim-chunk had chunked it (what [`members::expand`]
/// reads again): its path, type, view and mtime; its records stay the
/// shard's.
fn as_result(e: &FileEntry) -> FileResult {
    let mut view = e.view;
    view.left_out = None;
    FileResult {
        path: PathBuf::from(std::ffi::OsString::from_vec(e.path.clone())),
        info: StreamInfo {
            size: e.size,
            content: e.content,
            ftype: e.ftype,
        },
        mtime_s: e.mtime_s,
        mtime_ns: e.mtime_ns,
        pieces: Vec::new(),
        spilled: None,
        pos: e.id as u64,
        reused: None,
        content_pending: false,
        view,
        note: None,
        members: None,
    }
}

/// The archive's entry (why members were left out, if any, in place of
/// `~unlisted`) and its members' entries and records; the notes warned
/// as fsim-chunk warns them.
fn write_group(
    w: &mut Written,
    mut archive: FileEntry,
    found: crate::chunking::reader::Members,
    tbuf: &mut Vec<u8>,
    rbuf: &mut Vec<u8>,
) {
    let prog = crate::stages::chunk::PROG;
    archive.view.left_out = found.left_out;
    if let Some(note) = &found.note {
        let path = Path::new(std::ffi::OsStr::from_bytes(&archive.path));
        crate::cli::stderr_line(warning_line(prog, path, note));
    }
    w.table.write(&archive, tbuf);
    w.archives += 1;
    w.entries += 1;
    let mut pos = Vec::with_capacity(11);
    pos.push(b'\t');
    write_id(archive.id, &mut pos);
    for (k, m) in found.files.into_iter().enumerate() {
        let id = u32::try_from(k + 1).expect("fewer than 2^32 members");
        if let Some(note) = &m.note {
            crate::cli::stderr_line(warning_line(prog, &m.path, note));
        }
        for &(hash, len) in &m.pieces {
            let rec = ChunkRecord {
                hash,
                file: id,
                len,
            };
            w.digest.add(&rec);
            rec.write(rbuf);
            rbuf.pop();
            rbuf.extend_from_slice(&pos);
            rbuf.push(b'\n');
        }
        let entry = FileEntry {
            id,
            size: m.info.size,
            mtime_s: m.mtime_s,
            mtime_ns: m.mtime_ns,
            content: m.info.content,
            ftype: m.info.ftype,
            view: m.view,
            path: m.path.into_os_string().into_vec(),
        };
        w.table.write(&entry, tbuf);
        w.members += 1;
        w.entries += 1;
    }
}
