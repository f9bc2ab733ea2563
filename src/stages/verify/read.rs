//! Reading a file for verification: only if its size and mtime are still
//! those of the file table (otherwise the pair keeps its lower bound).

use crate::content::{self, Limits};
use crate::formats::FileEntry;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Why a file could not be verified (the text after the escaped path).
pub type Stale = String;

/// Read a file if it still is what the file table says, into `buf`, and
/// return its bytes (a prefix of `buf`).
///
/// Three system calls for a small file: open, fstat on the open file (so
/// that size and mtime are those of the file read, not of a path that may
/// have been replaced in between) and one read. The read asks for one byte
/// more than the size, so a file that grew is noticed. When it returns
/// exactly the size, that short read has met the end of the file (Linux
/// returns short reads of regular files only there), so no second read is
/// made to see `0`; any other short read is followed by more reads. A file
/// changed after that read is a race no check can exclude: the mtime was
/// checked just before.
///
/// `buf` keeps its largest length between calls: only new bytes are zeroed
/// when it grows, instead of the whole file's length on every call.
///
/// A file chunked through a content view is read through it again
/// ([`content::entry_view`], under `limits`): fsim-verify measures the
/// text that was chunked, not the container's bytes.
pub fn read_checked<'b>(
    e: &FileEntry,
    buf: &'b mut Vec<u8>,
    limits: &Limits,
) -> std::result::Result<&'b [u8], Stale> {
    if !e.view.is_raw() || e.view.is_member() {
        *buf = content::entry_view(e, limits)?;
        return Ok(&buf[..]);
    }
    let path = Path::new(std::ffi::OsStr::from_bytes(&e.path));
    let mut f = crate::io::longpath::open_file(path)
        .map_err(|err| format!("vanished or unreadable since chunking ({err})"))?;
    let meta = f
        .metadata()
        .map_err(|err| format!("unreadable since chunking ({err})"))?;
    if !meta.is_file() {
        return Err("no longer a regular file".into());
    }
    if meta.len() != e.size {
        return Err(format!(
            "changed since chunking (size {} -> {})",
            e.size,
            meta.len()
        ));
    }
    if meta.mtime() != e.mtime_s || meta.mtime_nsec() as u32 != e.mtime_ns {
        return Err(format!(
            "changed since chunking (mtime {}.{:09} -> {}.{:09})",
            e.mtime_s,
            e.mtime_ns,
            meta.mtime(),
            meta.mtime_nsec()
        ));
    }
    let want = usize::try_from(e.size + 1).map_err(|_| "too large for memory".to_string())?;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut filled = 0;
    while filled < want {
        match f.read(&mut buf[filled..want]) {
            Ok(0) => break,
            Ok(n) => {
                let short = n < want - filled;
                filled += n;
                if short && filled as u64 == e.size {
                    break;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(format!("unreadable since chunking ({err})")),
        }
    }
    if filled as u64 != e.size {
        return Err(format!(
            "changed while being read (size {} -> {}{})",
            e.size,
            filled,
            if filled == want { " or more" } else { "" }
        ));
    }
    Ok(&buf[..filled])
}
