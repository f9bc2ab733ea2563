//! The file tables of the shards of one run (`fsim-chunk --shard I/N`)
//! joined into the run's table (`fsim-join --shard-tables`), as a
//! distributed run needs it: the shards' ids are walk positions (sparse,
//! globally unique, docs/formats.md), the run's are dense and in walk
//! order. The joined table is the one the merging `fsim-chunk --previous`
//! run writes: the header without `shard=`, the entries renumbered
//! 0.. in position order, and the trailer with the files, the shards'
//! records, digest and skipped files summed and the new records'
//! `table-digest`. Each shard table is checked as every reader checks a
//! table (header, ids in order, count, table-digest) before it is used.
//!
//! Archives: a shard lists no members (its ids are walk positions) and
//! marks an archive `~unlisted`. The members of those archives, listed
//! apart by `fsim-chunk --members-of` ([`ShardTables::read_members`]),
//! are inserted after their archive, whose entry they replace, as the
//! merging `fsim-chunk` run lists them: every later file moves down by
//! their number, which the `moved` map carries to the chunk records.

use crate::error::{Context, Error, Result};
use crate::formats::chunks::Digest;
use crate::formats::files::{FileEntry, TableDigest};
use crate::formats::headers::{FilesHeader, FilesTrailer};
use crate::formats::lines::{write_header, write_trailer, Kind, Line, LineReader, Params};
use crate::formats::views::LeftOut;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};

/// The shard tables read so far.
#[derive(Default)]
pub struct ShardTables {
    /// The first table's header without `shard=`, and its `N` and name.
    params: Option<(Params, String, String)>,
    entries: Vec<FileEntry>,
    records: Digest,
    skipped: u64,
    /// The first table's walk counts and rules: every shard walks the whole
    /// tree (and reads its positions), so each table has the same.
    walk: Option<FilesTrailer>,
    shards: Vec<String>,
    /// The members tables read (`--members`): each archive's entry and
    /// its members' by the archive's walk position; `None` when none was
    /// given (the archives stay `~unlisted`).
    members: Option<BTreeMap<u32, Group>>,
    /// The members tables' header and name (checked against the shards').
    members_params: Option<(Params, String)>,
    /// The members tables' records, before renumbering.
    member_records: Digest,
}

/// An archive as `fsim-chunk --members-of` lists it: its entry (id: its
/// walk position) and its members' (ids 1.. after it), and where it was
/// read (for messages).
struct Group {
    archive: FileEntry,
    members: Vec<FileEntry>,
    name: String,
    line: u64,
}

/// What [`ShardTables::write`] found besides the table it wrote.
pub struct Joined {
    /// (walk position, id) of each entry whose id is not its position.
    pub moved: Vec<(u32, u32)>,
    /// The run's chunk stream's header and trailer lines.
    pub chunk_ends: Vec<u8>,
    /// The entries (walk positions as ids) of the archives left
    /// `~unlisted`, as the shards wrote them: what `fsim-chunk
    /// --members-of` lists the members of. Empty when members tables were
    /// given (each such archive must then be in one).
    pub unlisted: Vec<u8>,
}

impl ShardTables {
    /// Read and check the shard tables of one input (one or several, one
    /// after the other).
    pub fn read<R: BufRead>(&mut self, r: &mut LineReader<R>) -> Result<()> {
        let name = r.name().to_string();
        // The open table: its digest, records seen and last position.
        let mut open: Option<(TableDigest, u64, Option<u32>)> = None;
        let mut tables = 0;
        while let Some((line, no)) = r.next_numbered()? {
            let bad = |m: String| Error::input(&name, no, m);
            match (line, open.as_mut()) {
                (Line::Header(kind, params), None) => {
                    self.header(kind, params, &name).map_err(bad)?;
                    open = Some((TableDigest::default(), 0, None));
                }
                (Line::Header(..), Some(_)) => {
                    return Err(bad("a header before the trailer of the table above".into()))
                }
                (Line::Comment(_), _) => {}
                (Line::Data(_) | Line::Trailer(..), None) => {
                    return Err(bad(
                        "expected a '#fsim files v4' header with shard=I/N (fsim-chunk --shard)"
                            .into(),
                    ))
                }
                (Line::Data(d), Some((table, seen, last))) => {
                    table.add_line(d);
                    let e = FileEntry::parse(d).map_err(bad)?;
                    if let Some(l) = *last {
                        if e.id <= l {
                            return Err(bad(format!(
                                "expected walk positions in increasing order, found {} after {l}",
                                e.id
                            )));
                        }
                    }
                    *last = Some(e.id);
                    *seen += 1;
                    self.entries.push(e);
                }
                (Line::Trailer(kind, p), Some((table, seen, _))) => {
                    if kind != Kind::Files {
                        return Err(bad("expected '#end files'".into()));
                    }
                    self.trailer(&p, *seen, *table).map_err(bad)?;
                    open = None;
                    tables += 1;
                }
            }
        }
        if open.is_some() {
            return Err(r.error("no '#end files' trailer: the shard table is truncated"));
        }
        if tables == 0 {
            return Err(r.error("no shard table: expected a '#fsim files v4' header"));
        }
        Ok(())
    }

    /// Read and check the members tables of one input (`fsim-chunk
    /// --members-of`'s file tables, one or several): in each, an archive's
    /// entry (its walk position as id) followed by its members' (ids 1, 2,
    /// ... after it).
    pub fn read_members<R: BufRead>(&mut self, r: &mut LineReader<R>) -> Result<()> {
        let name = r.name().to_string();
        let groups = self.members.get_or_insert_with(BTreeMap::new);
        // The open table: its digest and entries seen; the open archive.
        let mut open: Option<(TableDigest, u64)> = None;
        let mut last: Option<u32> = None;
        let mut tables = 0;
        while let Some((line, no)) = r.next_numbered()? {
            let bad = |m: String| Error::input(&name, no, m);
            match (line, open.as_mut()) {
                (Line::Header(kind, params), None) => {
                    members_header(&mut self.members_params, kind, params, &name).map_err(bad)?;
                    (open, last) = (Some((TableDigest::default(), 0)), None);
                }
                (Line::Header(..), Some(_)) => {
                    return Err(bad("a header before the trailer of the table above".into()))
                }
                (Line::Comment(_), _) => {}
                (Line::Data(_) | Line::Trailer(..), None) => {
                    return Err(bad(
                        "expected a '#fsim files v4' header (fsim-chunk --members-of)".into(),
                    ))
                }
                (Line::Data(d), Some((table, seen))) => {
                    table.add_line(d);
                    *seen += 1;
                    let e = FileEntry::parse(d).map_err(bad)?;
                    add_to_group(groups, &mut last, e, &name, no).map_err(bad)?;
                }
                (Line::Trailer(kind, p), Some((table, seen))) => {
                    if kind != Kind::Files {
                        return Err(bad("expected '#end files'".into()));
                    }
                    let t = FilesTrailer::parse(&p).map_err(bad)?;
                    if t.files != Some(*seen) {
                        return Err(bad(format!("{seen} files read but the trailer announced {:?}: the table is truncated or was edited", t.files)));
                    }
                    table.check(&p).map_err(bad)?;
                    self.member_records.merge(&Digest {
                        count: t
                            .records
                            .ok_or_else(|| bad("trailer without records=".into()))?,
                        sum: t
                            .digest
                            .ok_or_else(|| bad("trailer without digest=".into()))?,
                    });
                    open = None;
                    tables += 1;
                }
            }
        }
        if open.is_some() {
            return Err(r.error("no '#end files' trailer: the members table is truncated"));
        }
        if tables == 0 {
            return Err(r.error("no members table: expected a '#fsim files v4' header"));
        }
        Ok(())
    }

    fn header(
        &mut self,
        kind: Kind,
        mut params: Params,
        name: &str,
    ) -> std::result::Result<(), String> {
        if kind != Kind::Files {
            return Err(format!(
                "expected a '#fsim files v4' header, found a {} header",
                kind.as_str()
            ));
        }
        let shard = FilesHeader::parse(&params)?.shard;
        let Some((i, n)) = shard.as_deref().and_then(|s| s.split_once('/')) else {
            return Err("expected shard=I/N in the header: a table of fsim-chunk --shard".into());
        };
        if self.shards.iter().any(|s| s == i) {
            return Err(format!("shard {i}/{n} twice"));
        }
        self.shards.push(i.to_string());
        params.0.retain(|(k, _)| k != "shard");
        match &self.params {
            None => self.params = Some((params, n.to_string(), name.to_string())),
            Some((first, first_n, first_name)) => {
                if n != first_n {
                    return Err(format!(
                        "shard {i}/{n} here but shards of {first_n} in {first_name}"
                    ));
                }
                if let Some(d) = params.difference(first) {
                    return Err(format!("the header differs from {first_name}'s: {d}"));
                }
            }
        }
        Ok(())
    }

    fn trailer(
        &mut self,
        p: &Params,
        seen: u64,
        table: TableDigest,
    ) -> std::result::Result<(), String> {
        let t = FilesTrailer::parse(p)?;
        let count = |k: &str, v: Option<u64>| v.ok_or_else(|| format!("trailer without {k}="));
        let files = count("files", t.files)?;
        if files != seen {
            return Err(format!("{seen} files read but the trailer announced {files}: the table is truncated or was edited"));
        }
        table.check(p)?;
        let sum = t.digest.ok_or("trailer without digest=")?;
        self.records.merge(&Digest {
            count: count("records", t.records)?,
            sum,
        });
        self.skipped += count("skipped", t.skipped)?;
        self.walk.get_or_insert(t);
        Ok(())
    }

    /// Write the run's table: entries renumbered in walk order. `records`:
    /// the run's chunk records when their ids had to be renumbered too (a
    /// file skipped, [`ShardTables::dense`] false), else the shards' sum.
    /// Returns the map from position to id of the entries that moved, and
    /// the header and trailer of the run's chunk stream (its records' ends:
    /// the table's parameters, the records' count and digest), which a
    /// distributed run puts around its sorted records.
    pub fn write<W: Write>(mut self, records: Option<Digest>, out: &mut W) -> Result<Joined> {
        let Some((params, n, _)) = self.params.take() else {
            return Err(Error::msg("no shard table in the input"));
        };
        if self.shards.len().to_string() != n {
            return Err(Error::msg(format!(
                "{} shard tables, expected {n} (shard=I/{n})",
                self.shards.len()
            )));
        }
        self.entries.sort_by_key(|e| e.id);
        if let Some(w) = self.entries.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(Error::msg(format!(
                "walk position {} in two shard tables",
                w[0].id
            )));
        }
        if let Some((mp, name)) = &self.members_params {
            if let Some(d) = mp.difference(&params) {
                return Err(Error::msg(format!(
                    "{name}: the members table's header differs from the shards': {d}"
                )));
            }
        }
        let mut groups = self.members.take();
        let mut buf = Vec::new();
        write_header(Kind::Files, &params, &mut buf);
        let (mut table, mut moved, mut unlisted) = (TableDigest::default(), Vec::new(), Vec::new());
        let mut files = 0u64;
        for e in std::mem::take(&mut self.entries) {
            let pos = e.id;
            let (mut e, members) = match (groups.as_mut(), e.view.left_out) {
                (Some(g), Some(LeftOut::Unlisted)) => take_group(g, e)?,
                (None, Some(LeftOut::Unlisted)) => {
                    e.write(&mut unlisted);
                    (e, Vec::new())
                }
                _ => (e, Vec::new()),
            };
            e.id = next_id(&mut files)?;
            if pos != e.id {
                moved.push((pos, e.id));
            }
            table.write(&e, &mut buf);
            for mut m in members {
                m.id = next_id(&mut files)?;
                table.write(&m, &mut buf);
            }
            if buf.len() >= 1 << 20 {
                out.write_all(&buf).ctx(|| "writing the file table")?;
                buf.clear();
            }
        }
        if let Some(g) = groups.and_then(|g| g.into_values().next()) {
            return Err(Error::input(
                &g.name,
                g.line,
                format!(
                    "members of {} (walk position {}), which no shard table marks ~unlisted",
                    String::from_utf8_lossy(&g.archive.path),
                    g.archive.id
                ),
            ));
        }
        // Without the renumbered records' figures: the inputs' (the
        // shards' and the members tables'), as the records are before.
        let records = records.unwrap_or_else(|| {
            let mut d = self.records;
            d.merge(&self.member_records);
            d
        });
        let trailer = FilesTrailer {
            files: Some(files),
            records: Some(records.count),
            digest: Some(records.sum),
            skipped: Some(self.skipped),
            table_digest: Some(table.0),
            ..walk_counts(self.walk.take())
        };
        write_trailer(Kind::Files, &trailer.to_params(), &mut buf);
        out.write_all(&buf).ctx(|| "writing the file table")?;
        let mut chunk_ends = Vec::new();
        write_header(Kind::Chunks, &params, &mut chunk_ends);
        write_trailer(
            Kind::Chunks,
            &crate::formats::digest_params(&records, "records"),
            &mut chunk_ends,
        );
        Ok(Joined {
            moved,
            chunk_ends,
            unlisted,
        })
    }
}

/// The next file id of the joined table (`files` written so far).
fn next_id(files: &mut u64) -> Result<u32> {
    let id = u32::try_from(*files)
        .map_err(|_| Error::msg("more than 2^32 files: file ids are 32-bit"))?;
    *files += 1;
    Ok(id)
}

/// The members table's entry of the archive `e` (a shard's, `~unlisted`)
/// and its members', checked to be the same file.
fn take_group(
    groups: &mut BTreeMap<u32, Group>,
    e: FileEntry,
) -> Result<(FileEntry, Vec<FileEntry>)> {
    let path = || String::from_utf8_lossy(&e.path).into_owned();
    let Some(g) = groups.remove(&e.id) else {
        return Err(Error::msg(format!(
            "{} (walk position {}) is marked ~unlisted by its shard but is in no members table (fsim-chunk --members-of)",
            path(),
            e.id
        )));
    };
    if g.archive.path != e.path || g.archive.content != e.content {
        return Err(Error::input(
            &g.name,
            g.line,
            format!(
                "the archive at walk position {} is {} with another content in the shard tables",
                e.id,
                path()
            ),
        ));
    }
    Ok((g.archive, g.members))
}

/// A members table's header: a file table's, with no `shard=`, the same
/// in every members table (checked against the shards' when they are
/// joined).
fn members_header(
    first: &mut Option<(Params, String)>,
    kind: Kind,
    params: Params,
    name: &str,
) -> std::result::Result<(), String> {
    if kind != Kind::Files {
        return Err(format!(
            "expected a '#fsim files v4' header, found a {} header",
            kind.as_str()
        ));
    }
    if FilesHeader::parse(&params)?.shard.is_some() {
        return Err("a shard's table, not a members table (fsim-chunk --members-of)".into());
    }
    match first {
        None => *first = Some((params, name.to_string())),
        Some((p, first_name)) => {
            if let Some(d) = params.difference(p) {
                return Err(format!("the header differs from {first_name}'s: {d}"));
            }
        }
    }
    Ok(())
}

/// Put `e` in its group: an archive (not a member) opens one, keyed by its
/// walk position; a member must be the next of the open archive (its id:
/// 1, 2, ... after it) and be named inside it.
fn add_to_group(
    groups: &mut BTreeMap<u32, Group>,
    open: &mut Option<u32>,
    e: FileEntry,
    name: &str,
    line: u64,
) -> std::result::Result<(), String> {
    if !e.view.is_member() {
        if groups.contains_key(&e.id) {
            return Err(format!("the archive at walk position {} twice", e.id));
        }
        *open = Some(e.id);
        groups.insert(
            e.id,
            Group {
                archive: e,
                members: Vec::new(),
                name: name.to_string(),
                line,
            },
        );
        return Ok(());
    }
    let Some(g) = open.and_then(|p| groups.get_mut(&p)) else {
        return Err("a member before any archive".into());
    };
    let want = g.members.len() as u64 + 1;
    if e.id as u64 != want {
        return Err(format!(
            "expected member {want} of the archive above, found id {}",
            e.id
        ));
    }
    let a = &g.archive.path;
    if e.view.archive != Some(a.len() as u32) || !e.path.starts_with(a) {
        return Err(format!(
            "a member not inside the archive above ({})",
            String::from_utf8_lossy(a)
        ));
    }
    g.members.push(e);
    Ok(())
}

/// Only the walk's counts and rules of a shard table's trailer.
fn walk_counts(t: Option<FilesTrailer>) -> FilesTrailer {
    let t = t.unwrap_or_default();
    FilesTrailer {
        repeated: t.repeated,
        work_folders: t.work_folders,
        excluded: t.excluded,
        left_out_by: t.left_out_by,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::files::scan_file_table;
    use crate::formats::views::FileType;

    /// A shard table of these walk positions (sizes = position).
    fn table(shard: &str, positions: &[u32], records: u64, digest: u128) -> String {
        let p = Params::new().with("method", "tttd").with("shard", shard);
        let mut v = Vec::new();
        write_header(Kind::Files, &p, &mut v);
        let mut t = TableDigest::default();
        for &id in positions {
            let e = FileEntry {
                id,
                size: id as u64,
                mtime_s: 1,
                mtime_ns: 0,
                content: id as u128,
                ftype: FileType::Text,
                view: crate::formats::FileView::raw(id as u64),
                path: format!("f{id}").into_bytes(),
            };
            t.write(&e, &mut v);
        }
        let tr = Params::new()
            .with("files", positions.len())
            .with("records", records)
            .with("digest", crate::formats::numbers::hex128(digest))
            .with("skipped", 0)
            .with(crate::formats::files::TABLE_DIGEST_KEY, t.hex());
        write_trailer(Kind::Files, &tr, &mut v);
        String::from_utf8(v).unwrap()
    }

    fn join(
        inputs: &[(&str, String)],
        records: Option<Digest>,
    ) -> Result<(String, Vec<(u32, u32)>)> {
        let mut s = ShardTables::default();
        for (name, text) in inputs {
            s.read(&mut LineReader::new(text.as_bytes(), *name))?;
        }
        let mut out = Vec::new();
        let Joined {
            moved,
            chunk_ends: ends,
            ..
        } = s.write(records, &mut out)?;
        let text = String::from_utf8(out).unwrap();
        // The chunk stream's ends: the table's header as a chunks header,
        // its trailer's records and digest.
        let ends = String::from_utf8(ends).unwrap();
        let (head, tail) = (text.lines().next().unwrap(), text.lines().last().unwrap());
        let (e_head, e_tail) = ends.split_once('\n').unwrap();
        assert_eq!(
            e_head,
            head.replacen(
                &format!("#fsim files {}", crate::formats::FILES_VERSION),
                "#fsim chunks v1",
                1
            )
        );
        let records_digest: Vec<&str> = tail.split('\t').skip(2).take(2).collect();
        assert_eq!(
            e_tail,
            format!("#end chunks\t{}\n", records_digest.join("\t"))
        );
        Ok((text, moved))
    }

    #[test]
    fn positions_become_dense_ids_and_the_trailer_adds_up() {
        // Position 3 was a skipped file: position 4 becomes id 3.
        let a = table("0/2", &[0, 2, 4], 5, u128::MAX);
        let b = table("1/2", &[1], 2, 3);
        let (text, moved) = join(&[("b", b.clone()), ("a", a.clone())], None).unwrap();
        assert_eq!(moved, vec![(4, 3)]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("files.tsv");
        std::fs::write(&path, &text).unwrap();
        let mut ids = Vec::new();
        let head = scan_file_table(&path, &mut |e| ids.push((e.id, e.size))).unwrap();
        assert_eq!(ids, vec![(0, 0), (1, 1), (2, 2), (3, 4)]);
        assert_eq!(head, Params::new().with("method", "tttd"));
        let trailer = text.lines().last().unwrap();
        assert!(
            trailer.starts_with(&format!(
                "#end files\tfiles=4\trecords=7\tdigest={}\tskipped=0\ttable-digest=",
                crate::formats::numbers::hex128(2)
            )),
            "{trailer}"
        );
        // The renumbered records' figures, given by the caller.
        let (text, _) = join(&[("a", a), ("b", b)], Some(Digest { count: 7, sum: 9 })).unwrap();
        assert!(text.contains(&format!(
            "records=7\tdigest={}\t",
            crate::formats::numbers::hex128(9)
        )));
    }

    #[test]
    fn bad_shard_tables_name_the_input_and_line() {
        let a = table("0/2", &[0, 2], 0, 0);
        let err = |inputs: &[(&str, String)]| join(inputs, None).unwrap_err().to_string();
        assert_eq!(
            err(&[("a", a.clone())]),
            "1 shard tables, expected 2 (shard=I/2)"
        );
        assert_eq!(
            err(&[("a", a.clone()), ("a2", a.clone())]),
            "a2:1: shard 0/2 twice"
        );
        let other = table("1/3", &[1], 0, 0);
        assert_eq!(
            err(&[("a", a.clone()), ("o", other)]),
            "o:1: shard 1/3 here but shards of 2 in a"
        );
        let avg = table("1/2", &[1], 0, 0).replacen("method=tttd", "method=sif", 1);
        assert_eq!(
            err(&[("a", a.clone()), ("m", avg)]),
            "m:1: the header differs from a's: method=sif here but method=tttd before"
        );
        let edited = table("1/2", &[1], 0, 0).replacen("\tf1\n", "\tg1\n", 1);
        assert!(err(&[("a", a.clone()), ("e", edited)])
            .starts_with("e:3: expected the file records to match"));
        let cut: String = a.lines().take(2).map(|l| format!("{l}\n")).collect();
        assert_eq!(
            err(&[("c", cut)]),
            "c:2: no '#end files' trailer: the shard table is truncated"
        );
        let unsharded = table("0/2", &[0], 0, 0).replacen("\tshard=0/2", "", 1);
        assert_eq!(
            err(&[("u", unsharded)]),
            "u:1: expected shard=I/N in the header: a table of fsim-chunk --shard"
        );
    }
}
