//! What a file is and which of its views was compared: its coarse type
//! ([`FileType`]), the view chunked ([`ViewKind`], [`FileView`]), why a
//! document's members or text were left out ([`LeftOut`]) and why a file
//! the walk found could not be read ([`Unread`]); the fields of the file
//! table (`files.tsv`, [`super::files`]) that say so.

use crate::formats::numbers::{parse_u64, write_hex128, write_u64};

/// Coarse content type, recorded while chunking (sif's file types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileType {
    Empty,
    Text,
    Binary,
    Compressed,
    Pdf,
    Postscript,
    Image,
}

impl FileType {
    pub const ALL: [FileType; 7] = [
        FileType::Empty,
        FileType::Text,
        FileType::Binary,
        FileType::Compressed,
        FileType::Pdf,
        FileType::Postscript,
        FileType::Image,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FileType::Empty => "empty",
            FileType::Text => "text",
            FileType::Binary => "binary",
            FileType::Compressed => "compressed",
            FileType::Pdf => "pdf",
            FileType::Postscript => "postscript",
            FileType::Image => "image",
        }
    }

    pub fn parse(s: &[u8]) -> Option<FileType> {
        FileType::ALL
            .into_iter()
            .find(|t| t.as_str().as_bytes() == s)
    }

    /// Classify a file from its first bytes (up to a few KB) and its size:
    /// magic numbers first, then "text" when there is no NUL byte and the
    /// bytes are mostly printable (valid UTF-8 or Latin-1 text).
    pub fn classify(head: &[u8], size: u64) -> FileType {
        if size == 0 {
            return FileType::Empty;
        }
        let starts = |m: &[u8]| head.starts_with(m);
        if starts(b"%PDF-") {
            return FileType::Pdf;
        }
        if starts(b"%!PS") || starts(b"\xc5\xd0\xd3\xc6") {
            return FileType::Postscript;
        }
        if starts(b"\x1f\x8b")
            || starts(b"PK\x03\x04")
            || starts(b"BZh")
            || starts(b"\xfd7zXZ\x00")
            || starts(b"\x28\xb5\x2f\xfd")
            || starts(b"7z\xbc\xaf\x27\x1c")
            || starts(b"Rar!\x1a\x07")
            || starts(b"\x1f\x9d")
        {
            return FileType::Compressed;
        }
        if starts(b"\x89PNG\r\n\x1a\n")
            || starts(b"\xff\xd8\xff")
            || starts(b"GIF87a")
            || starts(b"GIF89a")
        {
            return FileType::Image;
        }
        if head.contains(&0) {
            return FileType::Binary;
        }
        let suspicious = count_suspicious(head);
        if suspicious * 100 > head.len() {
            FileType::Binary
        } else {
            FileType::Text
        }
    }
}

/// Control bytes other than tab, newline, carriage return, form feed and
/// escape. Branch-free per byte with u8 counters, so it vectorises:
/// classifying the first 8 KiB of every file was costing more than chunking
/// it.
pub(crate) fn count_suspicious(head: &[u8]) -> usize {
    #[inline(always)]
    fn bad(b: u8) -> u8 {
        ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r') & (b != 0x0c) & (b != 0x1b)) as u8
    }
    // 32 u8 counters, one per byte of a 32-byte group, summed before they
    // can overflow: the inner loop is a fixed 32 bytes, so it is all vector
    // code (a 255-byte block left a 31-byte scalar tail in each).
    let mut groups = head.chunks_exact(32);
    let mut total = 0usize;
    let mut acc = [0u8; 32];
    let mut rounds = 0u32;
    for g in &mut groups {
        for (a, &b) in acc.iter_mut().zip(g) {
            *a += bad(b);
        }
        rounds += 1;
        if rounds == 255 {
            total += acc.iter().map(|&a| a as usize).sum::<usize>();
            acc = [0; 32];
            rounds = 0;
        }
    }
    total += acc.iter().map(|&a| a as usize).sum::<usize>();
    total
        + groups
            .remainder()
            .iter()
            .map(|&b| bad(b) as usize)
            .sum::<usize>()
}

/// Which content view of a file was chunked (`crate::content`):
/// the file table's `view` column. Defined here rather than in `content`
/// because the file table names it and formats is the lower layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViewKind {
    /// Compared as it is: text, html, images, unknown formats.
    Raw,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
    Docx,
    Xlsx,
    Pptx,
    Odt,
    Ods,
    Odp,
    /// OpenDocument drawings (.odg, .otg): the text of their pages.
    Odg,
    Epub,
    Pdf,
    Mail,
    /// A compiled gettext catalog: its messages as text.
    Mo,
    /// Legacy binary Word, Excel and PowerPoint documents (OLE2): their
    /// text as catdoc's programs print it.
    Doc,
    Xls,
    Ppt,
    /// A text file that reads as prose (`content::plaintext`): its
    /// sentences, one a line, as a document's text.
    Prose,
    /// A stand-alone HTML document (`content::html::is_document`): its
    /// text, as a document's. A page of a generated site stays raw.
    Html,
}

impl ViewKind {
    /// Whether the view is running text, compared as sentences (one per
    /// line, `content::prose`) so that the same words in another format
    /// compare alike: documents, slides, mail and text files that read as
    /// prose; not spreadsheets (rows), catalogs (messages) or decompressed
    /// streams (the bytes themselves, unless they read as prose).
    pub fn is_prose(self) -> bool {
        use ViewKind::*;
        matches!(
            self,
            Docx | Pptx | Odt | Odp | Odg | Epub | Pdf | Mail | Doc | Ppt | Prose | Html
        )
    }

    /// Every kind, in a fixed order (tests, docs).
    pub const ALL: [ViewKind; 21] = [
        ViewKind::Raw,
        ViewKind::Gzip,
        ViewKind::Bzip2,
        ViewKind::Xz,
        ViewKind::Zstd,
        ViewKind::Docx,
        ViewKind::Xlsx,
        ViewKind::Pptx,
        ViewKind::Odt,
        ViewKind::Ods,
        ViewKind::Odp,
        ViewKind::Odg,
        ViewKind::Epub,
        ViewKind::Pdf,
        ViewKind::Mail,
        ViewKind::Mo,
        ViewKind::Doc,
        ViewKind::Xls,
        ViewKind::Ppt,
        ViewKind::Prose,
        ViewKind::Html,
    ];

    /// The name written in notes and in the file table.
    pub fn name(self) -> &'static str {
        match self {
            ViewKind::Raw => "raw",
            ViewKind::Gzip => "gzip",
            ViewKind::Bzip2 => "bzip2",
            ViewKind::Xz => "xz",
            ViewKind::Zstd => "zstd",
            ViewKind::Docx => "docx",
            ViewKind::Xlsx => "xlsx",
            ViewKind::Pptx => "pptx",
            ViewKind::Odt => "odt",
            ViewKind::Ods => "ods",
            ViewKind::Odp => "odp",
            ViewKind::Odg => "odg",
            ViewKind::Epub => "epub",
            ViewKind::Pdf => "pdf",
            ViewKind::Mail => "mail",
            ViewKind::Mo => "mo",
            ViewKind::Doc => "doc",
            ViewKind::Xls => "xls",
            ViewKind::Ppt => "ppt",
            ViewKind::Prose => "prose",
            ViewKind::Html => "html",
        }
    }

    /// The kind named `s` (the inverse of [`ViewKind::name`]).
    pub fn from_name(s: &str) -> Option<ViewKind> {
        ViewKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Why an archive's members were not all listed: kept in the
/// file table after the view (`raw~broken`), so that the report lists the
/// archive in every format, also when a re-run or a shard merge reused its
/// records without reading it. A reason, not the whole note: the details
/// (the zip error, the member over a limit) are fsim-chunk's warning, as a
/// document's are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LeftOut {
    /// Damaged or truncated (a broken zip directory, a bad tar header, a
    /// member that fails to decompress, a reader that panicked): the
    /// members before the damage are listed.
    Broken,
    /// An archive inside it nested deeper than fsim reads
    /// (`content::archive::MAX_ARCHIVE_DEPTH`): that archive is a member,
    /// its own members are not listed.
    Deep,
    /// Members over a limit (size, expansion ratio, count, bytes in all,
    /// time) left out.
    Limit,
    /// Not read at all: larger than the limit read whole, or changed or
    /// unreadable when fsim-chunk opened it for its members.
    Unread,
    /// Not listed by design: a shard run (`fsim-chunk --shard`) numbers
    /// files by walk position and lists no members. make's merging run
    /// reads the archive again and lists them, fsim-spark's tasks too
    /// (`fsim-chunk --members-of`, joined by `fsim-join --shard-tables
    /// --members`); a table joined from shard tables alone keeps this
    /// reason, so its reports say the members are missing.
    Unlisted,
}

impl LeftOut {
    pub const ALL: [LeftOut; 5] = [
        LeftOut::Broken,
        LeftOut::Deep,
        LeftOut::Limit,
        LeftOut::Unread,
        LeftOut::Unlisted,
    ];

    /// The name written in the file table after `~`.
    pub fn name(self) -> &'static str {
        match self {
            LeftOut::Broken => "broken",
            LeftOut::Deep => "deep",
            LeftOut::Limit => "limit",
            LeftOut::Unread => "unread",
            LeftOut::Unlisted => "unlisted",
        }
    }

    pub fn from_name(s: &str) -> Option<LeftOut> {
        LeftOut::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Why a file the walk found could not be read (its entry in the file
/// table has no bytes, so that every report lists it): written after the
/// view's name, `raw^denied`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unread {
    /// Permission denied (the file, or a folder, with its whole subtree).
    Denied,
    /// Gone between the walk and the read, or listed but missing.
    Gone,
    /// A followed link back to a folder above it.
    Loop,
    /// Any other error of the file system.
    Error,
}

impl Unread {
    pub const ALL: [Unread; 4] = [Unread::Denied, Unread::Gone, Unread::Loop, Unread::Error];

    pub fn name(self) -> &'static str {
        match self {
            Unread::Denied => "denied",
            Unread::Gone => "gone",
            Unread::Loop => "loop",
            Unread::Error => "error",
        }
    }

    pub fn from_name(s: &str) -> Option<Unread> {
        Unread::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The kind of a walk or read warning, from its message (the text of
    /// an `io::Error`, or the walk's own for a loop).
    pub fn of_message(msg: &str) -> Unread {
        if msg.contains("ermission denied") {
            Unread::Denied
        } else if msg.contains("No such file") || msg.contains("vanished") {
            Unread::Gone
        } else if msg.contains("file system loop") {
            Unread::Loop
        } else {
            Unread::Error
        }
    }

    /// What the reports say of it.
    pub fn text(self) -> &'static str {
        match self {
            Unread::Denied => "not read: permission denied",
            Unread::Gone => "not read: gone since the walk, or missing",
            Unread::Loop => "not read: a link back to a folder above it",
            Unread::Error => {
                "not read: an error of the file system (fsim-chunk's warning says which)"
            }
        }
    }
}

/// Which view of a file was chunked, and the size of its raw bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileView {
    pub kind: ViewKind,
    /// Length of the file itself, what the stale checks compare with the
    /// file on disk (the entry's `size` is the view's length).
    pub raw_size: u64,
    /// The kind the bytes looked like when they could not be read as it
    /// (`kind` is then `Raw`): kept in the table (`raw/docx`) so that the
    /// report lists the file, also when its records were reused.
    pub unreadable: Option<ViewKind>,
    /// The content hash of a content view's bytes, computed as a raw
    /// file's `content` is (so a text and its gzip have equal hashes):
    /// what "same content, different file" groups by. `None` for a raw
    /// view (its `content` is it) and for a content view read from a v3
    /// table, which did not record it.
    pub hash: Option<u128>,
    /// For a member of an archive (`a.zip!/dir/m.txt`), the
    /// length in bytes of the archive's own path at the start of the
    /// entry's path (`a.zip`): the file on disk its bytes are read from.
    /// Recorded rather than guessed from the `!/`, so that a real folder
    /// named `a.zip!` is never taken for an archive. Written after the
    /// view's name: `docx!5`, `raw!5`, `raw/docx!5`.
    pub archive: Option<u32>,
    /// For an archive whose members were not all listed, why: written
    /// after the view's name and before `!N`: `raw~broken`, `gzip~deep`,
    /// `raw~limit!5` (a nested archive).
    pub left_out: Option<LeftOut>,
    /// For a file with more than one name (hard links), its identity on
    /// disk, (device, inode): the files of a table that share it are one
    /// file, whose extra names hold no extra bytes and are never acted on
    /// (src/report/actions.rs). Written last in the view column:
    /// `raw@2049:1234`. `None` for a file with one name and for members.
    pub link: Option<(u64, u64)>,
    /// For a file or folder the walk found but could not read, why (its
    /// entry has no bytes): written after the view's name, `raw^denied`.
    pub unread: Option<Unread>,
}

impl FileView {
    /// The view of a file read as it is: its raw bytes, `size` long.
    pub fn raw(size: u64) -> FileView {
        FileView {
            kind: ViewKind::Raw,
            raw_size: size,
            unreadable: None,
            hash: None,
            archive: None,
            left_out: None,
            link: None,
            unread: None,
        }
    }

    pub fn is_raw(&self) -> bool {
        self.kind == ViewKind::Raw
    }

    /// True for a member of an archive: its path names no file on disk.
    pub fn is_member(&self) -> bool {
        self.archive.is_some()
    }

    /// The `view` column: the kind's name, or `raw/KIND` for a document
    /// that kept its raw bytes.
    pub fn write_kind(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.kind.name().as_bytes());
        if let Some(k) = self.unreadable {
            out.push(b'/');
            out.extend_from_slice(k.name().as_bytes());
        }
        if let Some(l) = self.left_out {
            out.push(b'~');
            out.extend_from_slice(l.name().as_bytes());
        }
        if let Some(u) = self.unread {
            out.push(b'^');
            out.extend_from_slice(u.name().as_bytes());
        }
        if let Some(n) = self.archive {
            out.push(b'!');
            write_u64(n as u64, out);
        }
        if let Some((dev, ino)) = self.link {
            out.push(b'@');
            write_u64(dev, out);
            out.push(b':');
            write_u64(ino, out);
        }
    }

    /// The inverse of [`FileView::write_kind`]: the view with every field
    /// but the sizes and the hash (the caller's).
    pub fn parse_kind(s: &[u8]) -> Option<FileView> {
        let s = std::str::from_utf8(s).ok()?;
        let mut v = FileView::raw(0);
        let s = match s.split_once('@') {
            None => s,
            Some((k, l)) => {
                let (dev, ino) = l.split_once(':')?;
                v.link = Some((parse_u64(dev.as_bytes())?, parse_u64(ino.as_bytes())?));
                k
            }
        };
        let s = match s.split_once('!') {
            None => s,
            Some((k, n)) => {
                v.archive = Some(u32::try_from(parse_u64(n.as_bytes())?).ok()?);
                k
            }
        };
        let s = match s.split_once('^') {
            None => s,
            Some((k, u)) => {
                v.unread = Some(Unread::from_name(u)?);
                k
            }
        };
        let s = match s.split_once('~') {
            None => s,
            Some((k, l)) => {
                v.left_out = Some(LeftOut::from_name(l)?);
                k
            }
        };
        match s.split_once('/') {
            None => v.kind = ViewKind::from_name(s)?,
            Some(("raw", k)) => v.unreadable = Some(ViewKind::from_name(k)?),
            Some(_) => return None,
        }
        Some(v)
    }

    /// How the report names the view compared: `docx text`, `gzip
    /// content`, ... (`None` for raw bytes).
    pub fn label(&self) -> Option<String> {
        self.kind.label()
    }

    /// The `view hash` column: the view's hash, or `-` for a raw view.
    pub(crate) fn write_hash(&self, out: &mut Vec<u8>) {
        match self.hash {
            Some(h) => write_hex128(h, out),
            None => out.push(b'-'),
        }
    }
}

impl ViewKind {
    /// How the report names the view compared: `docx text`, `gzip
    /// content`, ... (`None` for raw bytes).
    pub fn label(self) -> Option<String> {
        let what = match self {
            ViewKind::Raw => return None,
            ViewKind::Gzip | ViewKind::Bzip2 | ViewKind::Xz | ViewKind::Zstd => "content",
            ViewKind::Mail => "headers and bodies",
            ViewKind::Mo => "messages",
            _ => "text",
        };
        Some(format!("{} {what}", self.name()))
    }
}
