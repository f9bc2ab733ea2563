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

use crate::error::{Context, Error, Result};
use crate::formats::chunks::Digest;
use crate::formats::files::{FileEntry, TableDigest};
use crate::formats::headers::{FilesHeader, FilesTrailer};
use crate::formats::lines::{write_header, write_trailer, Kind, Line, LineReader, Params};
use std::io::{BufRead, Write};

/// The shard tables read so far.
#[derive(Default)]
pub struct ShardTables {
    /// The first table's header without `shard=`, and its `N` and name.
    params: Option<(Params, String, String)>,
    entries: Vec<FileEntry>,
    records: Digest,
    skipped: u64,
    shards: Vec<String>,
}

/// What [`ShardTables::write`] found besides the table it wrote.
pub struct Joined {
    /// (walk position, id) of each entry whose id is not its position.
    pub moved: Vec<(u32, u32)>,
    /// The run's chunk stream's header and trailer lines.
    pub chunk_ends: Vec<u8>,
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
        let mut buf = Vec::new();
        write_header(Kind::Files, &params, &mut buf);
        let (mut table, mut moved) = (TableDigest::default(), Vec::new());
        for (id, e) in self.entries.iter_mut().enumerate() {
            let id = id as u32;
            if e.id != id {
                moved.push((e.id, id));
                e.id = id;
            }
            table.write(e, &mut buf);
            if buf.len() >= 1 << 20 {
                out.write_all(&buf).ctx(|| "writing the file table")?;
                buf.clear();
            }
        }
        let records = records.unwrap_or(self.records);
        let trailer = FilesTrailer {
            files: Some(self.entries.len() as u64),
            records: Some(records.count),
            digest: Some(records.sum),
            skipped: Some(self.skipped),
            table_digest: Some(table.0),
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
        Ok(Joined { moved, chunk_ends })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::files::{scan_file_table, FileType};

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
