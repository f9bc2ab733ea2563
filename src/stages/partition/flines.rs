//! The `F` lines: one per file of a component of two files or more, cut
//! from the file table in blocks formatted on several threads, written in
//! table order.

use super::*;

/// What the `F` lines need besides the file table.
pub(super) struct FLines<'a> {
    pub(super) comps: &'a crate::stages::partition::unionfind::Components,
    pub(super) tmpl: &'a crate::stages::templates::PayloadCounter,
    pub(super) feature_counts: Option<&'a [u32]>,
    /// The file whose path the summary shows (highest dropped chunk).
    pub(super) want_path: Option<u32>,
}

impl FLines<'_> {
    /// Append file `id`'s `F` line when it is in a component.
    #[inline]
    pub(super) fn line(&self, id: u32, size: u64, content: u128, b: &mut Vec<u8>) {
        if !self.comps.in_multi(id) {
            return;
        }
        b.extend_from_slice(b"F\t");
        crate::formats::write_id(id, b);
        b.push(b'\t');
        crate::formats::write_id(self.comps.label(id), b);
        b.push(b'\t');
        crate::formats::write_u64(self.tmpl.payload(id, size), b);
        b.push(b'\t');
        crate::formats::write_hex128(content, b);
        if let Some(c) = self.feature_counts {
            b.push(b'\t');
            crate::formats::write_u64(c[id as usize] as u64, b);
        }
        b.push(b'\n');
    }
}

/// Bytes of file table per block of [`f_lines_parallel`] (a few are in
/// flight: the union-find's labels already take most of the memory).
pub(super) const TABLE_BLOCK: usize = 1 << 20;

/// One block of the file table turned into `F` lines.
#[derive(Default)]
pub(super) struct FBlock {
    pub(super) out: Vec<u8>,
    /// Id of the block's first record and number of records (consecutive
    /// ids, else `odd`).
    pub(super) first: Option<u32>,
    pub(super) files: u64,
    /// The table's header or trailer line, when in this block.
    pub(super) header: Option<Params>,
    pub(super) trailer: Option<Params>,
    /// Of the block's records.
    pub(super) table: TableDigest,
    pub(super) example: Option<String>,
    /// A line only the serial reader can explain (it makes the error).
    pub(super) odd: bool,
}

/// The `F` lines of one block (whole lines); `first_block`/`last_block`:
/// its first/last line is the table's header/trailer.
pub(super) fn f_block(block: &[u8], first_block: bool, last_block: bool, fl: &FLines) -> FBlock {
    let mut r = FBlock {
        out: Vec::with_capacity(block.len()),
        ..Default::default()
    };
    let mut at = 0;
    let mut next_id = 0u32;
    while at < block.len() {
        let Some(nl) = memchr::memchr(b'\n', &block[at..]) else {
            r.odd = true;
            return r;
        };
        let line = &block[at..at + nl];
        let (is_first, is_last) = (
            first_block && at == 0,
            last_block && at + nl + 1 == block.len(),
        );
        at += nl + 1;
        if line.first() == Some(&b'#') {
            match classify_line(line) {
                Ok(Line::Header(Kind::Files, p)) if is_first => r.header = Some(p),
                Ok(Line::Trailer(Kind::Files, p)) if is_last => r.trailer = Some(p),
                Ok(Line::Comment(_)) => {}
                _ => r.odd = true,
            }
            continue;
        }
        r.table.add_line(line);
        match parse_file_line(line) {
            Ok((id, size, content, path)) => {
                match r.first {
                    None => r.first = Some(id),
                    Some(_) if id == next_id => {}
                    Some(_) => r.odd = true,
                }
                next_id = id.wrapping_add(1);
                r.files += 1;
                if Some(id) == fl.want_path {
                    // Escaped already in the file table: printable, valid UTF-8.
                    r.example = Some(String::from_utf8_lossy(path).into_owned());
                }
                fl.line(id, size, content, &mut r.out);
            }
            Err(_) => r.odd = true,
        }
        if r.odd {
            return r;
        }
    }
    r
}

/// Read the whole (regular) file table once more and write the `F` lines of
/// the files in components: blocks parsed and formatted on two threads,
/// written in order by this one. Returns the path of `fl.want_path`.
///
/// Anything but the expected shape (header first, trailer last, records
/// with ids 0, 1, 2...) is handed to the serial [`read_file_table`], which
/// names the line and what was expected; the output is then not finished.
pub(super) fn f_lines_parallel(
    path: &Path,
    table: &FileTable,
    fl: &FLines,
    w: &mut BgWriter,
) -> Result<Option<String>> {
    use std::io::Read;
    let name = path.display().to_string();
    let mut file = std::fs::File::open(path).map_err(|e| Error::msg(format!("{name}: {e}")))?;
    /// (sequence number, whole lines, first block, last block)
    type Work = (u64, Vec<u8>, bool, bool);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(u64, FBlock)>();
    let mut ends = (None, None);
    let (mut files, mut example, mut odd) = (0u64, None, false);
    let mut digest = TableDigest::default();
    std::thread::scope(|s| -> Result<()> {
        let mut workers: Vec<SyncSender<Work>> = Vec::new();
        for _ in 0..2 {
            let (tx, rx) = sync_channel::<Work>(1);
            let done = done_tx.clone();
            s.spawn(move || {
                for (seq, block, first, last) in rx.iter() {
                    if done.send((seq, f_block(&block, first, last, fl))).is_err() {
                        return;
                    }
                }
            });
            workers.push(tx);
        }
        drop(done_tx);
        let mut waiting = std::collections::BTreeMap::new();
        let mut next = 0u64;
        // Write the finished blocks that come next, in order.
        let mut take = |got: (u64, FBlock), w: &mut BgWriter| -> Result<()> {
            waiting.insert(got.0, got.1);
            while let Some(b) = waiting.remove(&next) {
                next += 1;
                odd |= b.odd || b.first.is_some_and(|f| f as u64 != files);
                if odd {
                    continue;
                }
                files += b.files;
                digest.merge(b.table);
                ends.0 = ends.0.take().or(b.header);
                ends.1 = ends.1.take().or(b.trailer);
                example = example.take().or(b.example);
                w.raw(&b.out)?;
            }
            Ok(())
        };
        let (mut seq, mut carry) = (0u64, Vec::new());
        loop {
            let mut block = std::mem::take(&mut carry);
            let want = block.len() + TABLE_BLOCK;
            let mut eof = false;
            while block.len() < want {
                let old = block.len();
                block.resize(want, 0);
                let n = match file.read(&mut block[old..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
                    Err(e) => return Err(Error::msg(format!("{name}: {e}"))),
                };
                block.truncate(old + n);
                if n == 0 {
                    eof = true;
                    break;
                }
            }
            if !eof {
                match memchr::memrchr(b'\n', &block) {
                    Some(p) => carry.extend_from_slice(&block[p + 1..]),
                    None => {
                        // One line longer than a block: read on.
                        carry = block;
                        continue;
                    }
                }
                block.truncate(block.len() - carry.len());
            }
            if !block.is_empty() {
                let to = &workers[(seq % 2) as usize];
                if to.send((seq, block, seq == 0, eof)).is_err() {
                    return Err(Error::msg("internal error: an F-line worker stopped"));
                }
                seq += 1;
            }
            while let Ok(got) = done_rx.try_recv() {
                take(got, w)?;
            }
            if eof {
                break;
            }
        }
        drop(workers);
        for got in done_rx.iter() {
            take(got, w)?;
        }
        Ok(())
    })?;
    let again = match ends {
        (Some(h), Some(t)) if !odd => FileTable::from_ends(name, h, &t),
        _ => None,
    };
    let whole = again
        .as_ref()
        .is_some_and(|t| t.files == files && t.table_digest == digest.0);
    if whole && again.as_ref() == Some(table) {
        return Ok(example);
    }
    if !whole {
        // The serial reader says what is wrong, with the line.
        read_file_table(path, |_, _, _, _| Ok(()))?;
    }
    Err(Error::msg(format!(
        "{}: the file table changed while fsim-partition was reading it",
        table.name
    )))
}
