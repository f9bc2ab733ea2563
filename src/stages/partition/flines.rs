//! The `F` lines: one per file of a component of two files or more, cut
//! from the file table in blocks formatted on several threads, written in
//! table order.

use super::*;
use crate::io::ordered::ordered_map;

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
    /// Of the block's (id, path) pairs ([`crate::formats::files::path_mix`]).
    pub(super) paths: u128,
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
                r.paths = r
                    .paths
                    .wrapping_add(crate::formats::files::path_mix(id, path));
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

/// The file table cut into blocks of whole lines of about [`TABLE_BLOCK`]
/// bytes, in order.
struct Blocks {
    file: std::fs::File,
    name: String,
    /// The start of a line the last block cut.
    carry: Vec<u8>,
    blocks: u64,
    eof: bool,
}

impl Blocks {
    /// The next block, whether it is the first, and whether the end of the
    /// file was reached with it (then its last line is the trailer).
    fn next(&mut self) -> Result<Option<(Vec<u8>, bool, bool)>> {
        use std::io::Read;
        while !self.eof {
            let mut block = std::mem::take(&mut self.carry);
            let want = block.len() + TABLE_BLOCK;
            while block.len() < want {
                let old = block.len();
                block.resize(want, 0);
                let n = match self.file.read(&mut block[old..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
                    Err(e) => return Err(Error::msg(format!("{}: {e}", self.name))),
                };
                block.truncate(old + n);
                if n == 0 {
                    self.eof = true;
                    break;
                }
            }
            if !self.eof {
                match memchr::memrchr(b'\n', &block) {
                    Some(p) => self.carry.extend_from_slice(&block[p + 1..]),
                    None => {
                        // One line longer than a block: read on.
                        self.carry = block;
                        continue;
                    }
                }
                block.truncate(block.len() - self.carry.len());
            }
            if !block.is_empty() {
                self.blocks += 1;
                return Ok(Some((block, self.blocks == 1, self.eof)));
            }
        }
        Ok(None)
    }
}

/// The finished blocks, taken in order: written unless a line only the
/// serial reader can explain was seen, and summed.
#[derive(Default)]
struct Joined {
    ends: (Option<Params>, Option<Params>),
    files: u64,
    example: Option<String>,
    odd: bool,
    digest: TableDigest,
    paths: u128,
}

impl Joined {
    fn take(&mut self, b: FBlock, w: &mut BgWriter) -> Result<()> {
        self.odd |= b.odd || b.first.is_some_and(|f| f as u64 != self.files);
        if self.odd {
            return Ok(());
        }
        self.files += b.files;
        self.digest.merge(b.table);
        self.paths = self.paths.wrapping_add(b.paths);
        self.ends.0 = self.ends.0.take().or(b.header);
        self.ends.1 = self.ends.1.take().or(b.trailer);
        self.example = self.example.take().or(b.example);
        w.raw(&b.out)
    }
}

/// Read the whole (regular) file table once more and write the `F` lines of
/// the files in components: blocks parsed and formatted on two threads,
/// written in order by this one ([`ordered_map`], at most 4 blocks in
/// flight). Returns the path of `fl.want_path` and the identity of the
/// table's paths ([`crate::formats::files::path_mix`]).
///
/// Anything but the expected shape (header first, trailer last, records
/// with ids 0, 1, 2...) is handed to the serial [`read_file_table`], which
/// names the line and what was expected; the output is then not finished.
pub(super) fn f_lines_parallel(
    path: &Path,
    table: &FileTable,
    fl: &FLines,
    w: &mut BgWriter,
) -> Result<(Option<String>, u128)> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| Error::msg(format!("{name}: {e}")))?;
    let mut blocks = Blocks {
        file,
        name: name.clone(),
        carry: Vec::new(),
        blocks: 0,
        eof: false,
    };
    let mut joined = Joined::default();
    ordered_map::<_, _, _, crate::error::Error>(
        &mut [(), ()],
        4,
        |_, (block, first, last): (Vec<u8>, bool, bool)| f_block(&block, first, last, fl),
        || blocks.next(),
        |b| joined.take(b, w),
    )?;
    let Joined {
        ends,
        files,
        example,
        odd,
        digest,
        paths,
    } = joined;
    let again = match ends {
        (Some(h), Some(t)) if !odd => FileTable::from_ends(name, h, &t),
        _ => None,
    };
    let whole = again
        .as_ref()
        .is_some_and(|t| t.files == files && t.table_digest == digest.0);
    if whole && again.as_ref() == Some(table) {
        return Ok((example, paths));
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
