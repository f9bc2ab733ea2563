//! The views fsim-chunk extracted, kept beside its file table so that the
//! stages after it read them instead of extracting them again.
//!
//! A PDF's text comes from a separate process (pdftotext or fsim-pdftext,
//! [`super::pdf`]) at about half a second per megabyte; fsim-chunk pays
//! that once per PDF; without the store, fsim-verify, the line source and
//! the html report would pay it again for every PDF of a pair they read
//! (on a tree of manuals as PDF, more than the chunking itself).
//!
//! The store is the folder `<file table>.views` (`files.tsv.views` in a
//! make run's WORK). fsim-chunk, when it writes its file table to a file,
//! creates it with the first view it keeps (a run without PDFs has none),
//! and puts in it the view of each file extracted by a separate process, named by the view's content hash (the table's `view` hash) and
//! followed by the xxh3-64 of its bytes. A stage that reads a file table
//! looks for the folder beside it; [`super::entry_view`] takes a view from
//! it only when the file on disk is still the one chunked (same size and
//! mtime, as before) and the stored bytes have the entry's length and
//! their checksum: a missing, partial or foreign entry is extracted again,
//! as without a store, so the outputs never depend on it.
//!
//! Bounded: a view is kept only when it is no longer than its file, so the
//! store is never larger than the documents it holds the text of. A re-run
//! (`--previous`) links the views of the files it reuses from the earlier
//! table's store, since it does not read those files.
//!
//! Copies: fsim-chunk remembers the raw MD5 of each file whose view it
//! kept, and a later file of the same bytes (the same manual in two
//! releases, a report filed in two folders) takes its view from the store
//! instead of from the extractor ([`extracted_before`]): the same bytes,
//! read back with the checksum check of [`get`].

use super::Kind;
use crate::formats::FileEntry;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{self, Seek, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use xxhash_rust::xxh3::xxh3_64;

/// This process's store, and the stores of the earlier runs whose records
/// fsim-chunk reuses (`--previous`, in their order).
struct Stores {
    dir: PathBuf,
    previous: Vec<PathBuf>,
    /// fsim-chunk: raw MD5 of a file whose view this run kept → (the
    /// view's hash, its length); at most [`COPIES_MAX`] entries.
    by_raw: Mutex<HashMap<u128, (u128, u64)>>,
}

/// Files whose views [`remember`] keeps track of (48 bytes each): a run
/// with more PDFs extracts the copies of the later ones again.
const COPIES_MAX: usize = 100_000;

static STORES: OnceLock<Stores> = OnceLock::new();

/// The store of the file table `table`.
pub fn dir_beside(table: &Path) -> PathBuf {
    let mut name = table.as_os_str().to_owned();
    name.push(".views");
    PathBuf::from(name)
}

/// Whether views of this kind are kept: those extracted by a separate
/// process (the others cost about what reading the file does).
pub fn kept(kind: Kind) -> bool {
    kind == Kind::Pdf
}

/// fsim-chunk writing `table` (a regular file or a new path; not a pipe or
/// a device): its store, made with the first view kept, and the stores of
/// the `previous` tables. Without a store (a table on a pipe, a folder
/// that cannot be made) the run is the same, and the later stages extract
/// again.
pub fn create_beside(table: &Path, previous: &[PathBuf]) {
    if table.as_os_str() == "-" {
        return;
    }
    let writable = match std::fs::metadata(table) {
        Ok(m) => m.is_file(),
        Err(e) => e.kind() == io::ErrorKind::NotFound,
    };
    if writable {
        let previous = previous.iter().map(|p| dir_beside(p)).collect();
        let _ = STORES.set(Stores {
            dir: dir_beside(table),
            previous,
            by_raw: Mutex::default(),
        });
    }
}

/// A stage reading `table`: use its store if there is one.
pub fn use_beside(table: &Path) {
    let dir = dir_beside(table);
    if dir.is_dir() {
        let _ = STORES.set(Stores {
            dir,
            previous: Vec::new(),
            by_raw: Mutex::default(),
        });
    }
}

fn entry_name(hash: u128) -> String {
    format!("{hash:032x}")
}

/// Keep the view `bytes` of kind `kind`, content hash `hash`, of a file of
/// `raw_size` bytes (fsim-chunk, as it chunks it); whether the store has
/// it now. Errors are ignored: a view not kept is extracted again by the
/// stage that needs it.
pub fn put(kind: Kind, hash: u128, bytes: &[u8], raw_size: u64) -> bool {
    let Some(s) = STORES.get() else { return false };
    if !kept(kind) || bytes.len() as u64 > raw_size {
        return false;
    }
    let path = s.dir.join(entry_name(hash));
    if path.exists() {
        return true;
    }
    if std::fs::create_dir_all(&s.dir).is_err() {
        return false;
    }
    let tmp = s.dir.join(format!(
        ".{}.{}.{:?}",
        entry_name(hash),
        std::process::id(),
        std::thread::current().id()
    ));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.write_all(&xxh3_64(bytes).to_le_bytes())
    });
    if written.is_err() || std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return false;
    }
    true
}

/// fsim-chunk: the file of raw MD5 `raw` has its view `view` (`len`
/// bytes) in the store ([`put`] said so), for the copies of that file.
pub fn remember(raw: u128, view: u128, len: u64) {
    let Some(s) = STORES.get() else { return };
    if let Ok(mut m) = s.by_raw.lock() {
        if m.len() < COPIES_MAX {
            m.insert(raw, (view, len));
        }
    }
}

/// fsim-chunk: the view of kind `kind` of `file`, when a file of the same
/// bytes had its view kept earlier in this run ([`remember`]) and the
/// store still has it whole; `None` otherwise (then extract). Reads the
/// file once for its MD5 when this run has kept views; the file is left
/// at its start.
pub fn extracted_before(kind: Kind, file: &mut std::fs::File) -> Option<Vec<u8>> {
    let s = STORES.get()?;
    if !kept(kind) || s.by_raw.lock().ok()?.is_empty() {
        return None;
    }
    let mut buf = vec![0u8; 1 << 16];
    let identity = super::raw_identity(file, &mut buf);
    file.rewind().ok()?;
    let (view, len) = *s.by_raw.lock().ok()?.get(&identity.ok()?.0)?;
    read_entry(&s.dir, view, len)
}

/// A re-run reusing the records of a file of the table `source` of
/// `--previous` (its index) whose view is `hash`: link that run's stored
/// view into this one's, if it has one.
pub fn carry(source: usize, kind: Kind, hash: u128) {
    let Some(s) = STORES.get() else { return };
    let Some(from) = s.previous.get(source) else {
        return;
    };
    if !kept(kind) {
        return;
    }
    let name = entry_name(hash);
    let (from, to) = (from.join(&name), s.dir.join(&name));
    if !to.exists() && from.is_file() && std::fs::create_dir_all(&s.dir).is_ok() {
        let _ = std::fs::hard_link(from, &to);
    }
}

/// The stored view of `e`, if the store has it whole: its length is the
/// entry's and its checksum holds. The caller checks that the file is the
/// one chunked.
pub fn get(e: &FileEntry) -> Option<Vec<u8>> {
    let s = STORES.get()?;
    let hash = e.view.hash.filter(|_| kept(e.view.kind))?;
    read_entry(&s.dir, hash, e.size)
}

/// The entry `hash` of the store `dir`, if it holds `len` bytes and their
/// checksum.
fn read_entry(dir: &Path, hash: u128, len: u64) -> Option<Vec<u8>> {
    let path = dir.join(OsStr::from_bytes(entry_name(hash).as_bytes()));
    // Looked at before it is read: anything but a regular file of the
    // right length (a FIFO would block, a huge file fill the memory) is
    // no entry.
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() != len + 8 {
        return None;
    }
    let mut bytes = std::fs::read(path).ok()?;
    if bytes.len() as u64 != len + 8 {
        return None;
    }
    let sum = bytes.split_off(len as usize);
    (sum[..] == xxh3_64(&bytes).to_le_bytes()).then_some(bytes)
}
