//! An earlier run's file read once, start to end, and freed as it is
//! read: its name removed, and the disk blocks behind the read punched out
//! (`fallocate(PUNCH_HOLE)`), so that a re-run never holds that file and
//! the one it writes in its place whole at once.
//!
//! fsim's own re-run (`DROP_PREVIOUS=1`) removes the earlier chunk records
//! and line sets once it wrote its own. Until then both runs' copies are
//! on disk: on a tree of gzip manuals the chunk records are 0.46x the
//! tree, so the re-run's chunking alone held 0.92x, and the line sets had
//! no room (docs/pipeline.md, *Re-runs*). Read through a [`Consumed`], the
//! earlier file shrinks as the new one grows.
//!
//! Nothing is freed unless everything says it may be: the file has one
//! name (a file linked into another run, or this run's own output, keeps
//! its blocks), the name still names the file opened, and the [`Gate`] is
//! open (fsim-chunk's output compares itself with the earlier records and
//! may link them in place, [`crate::io::Output::same_as`]: the blocks stay
//! until it differs). The name goes at the first read once the gate is
//! open, before any block: a run killed after that finds no earlier file
//! and reads every file again, as after `DROP_PREVIOUS=1` removed it,
//! rather than a file with holes. Where the
//! file system cannot punch holes the file is read as any other, and goes
//! when it is closed.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bytes read between two frees: a system call per 8 MiB.
const STEP: u64 = 8 << 20;

/// Whether a [`Consumed`] file may be freed yet: opened by whoever still
/// needs its bytes, once they no longer do.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    open: Arc<AtomicBool>,
    /// Set when a file read through the gate was unnamed: it is being
    /// freed (what the stage's summary says).
    consumed: Arc<AtomicBool>,
}

impl Gate {
    /// A gate open from the start.
    pub fn open() -> Gate {
        let g = Gate::default();
        g.release();
        g
    }

    /// Nothing holds the file's bytes any more.
    pub fn release(&self) {
        self.open.store(true, Ordering::Release);
    }

    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Whether a file read through this gate was consumed (its name
    /// removed, its blocks freed where the file system can).
    pub fn consumed(&self) -> bool {
        self.consumed.load(Ordering::Acquire)
    }
}

/// What a [`Consumed`] file does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Its name is still there (the gate is shut); nothing freed.
    Named,
    /// Its name is gone; blocks are freed behind the read.
    Freeing,
    /// Read as any file (the name changed, or no holes here).
    Kept,
}

/// A file read once, freed behind its read ([module doc](self)).
#[derive(Debug)]
pub struct Consumed {
    file: File,
    path: PathBuf,
    gate: Gate,
    read: u64,
    freed: u64,
    state: State,
}

impl Consumed {
    /// `path` opened to be consumed, or `None` when it must not or cannot
    /// be: not a regular file, a file with another name (a hard link:
    /// another run's file, or the one this run writes), or one that cannot
    /// be opened for writing (a read-only file is read as any other, and
    /// whatever else is wrong with it said by the plain open).
    pub fn open(path: &Path, gate: Gate) -> io::Result<Option<Consumed>> {
        // Written through the holes it punches: opened for writing, never
        // written to.
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        else {
            return Ok(None);
        };
        let m = file.metadata()?;
        if !m.is_file() || nlink(&m) != 1 {
            return Ok(None);
        }
        Ok(Some(Consumed {
            file,
            path: path.to_path_buf(),
            gate,
            read: 0,
            freed: 0,
            state: State::Named,
        }))
    }

    /// Bytes freed so far.
    #[cfg(test)]
    fn freed(&self) -> u64 {
        self.freed
    }

    /// The name removed, at the first read once the gate is open (only if
    /// it still names this file).
    #[cold]
    fn unname(&mut self) {
        self.state = match self.unlink() {
            Ok(true) => {
                self.gate.consumed.store(true, Ordering::Release);
                State::Freeing
            }
            _ => State::Kept,
        };
    }

    /// The blocks freed up to the last whole 4 KiB read.
    #[cold]
    fn free(&mut self) {
        let upto = self.read & !4095;
        if upto > self.freed {
            match punch(&self.file, self.freed, upto - self.freed) {
                Ok(()) => self.freed = upto,
                Err(_) => self.state = State::Kept,
            }
        }
    }

    /// Remove the name when it is still this file's; whether it was.
    fn unlink(&self) -> io::Result<bool> {
        let ours = self.file.metadata()?;
        let named = std::fs::symlink_metadata(&self.path)?;
        if !same_file(&ours, &named) || nlink(&named) != 1 {
            return Ok(false);
        }
        std::fs::remove_file(&self.path)?;
        Ok(true)
    }
}

impl Read for Consumed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.state == State::Named && self.gate.is_open() {
            self.unname();
        }
        let n = self.file.read(buf)?;
        self.read += n as u64;
        if self.state == State::Freeing && self.read - self.freed >= STEP {
            self.free();
        }
        Ok(n)
    }
}

#[cfg(unix)]
fn nlink(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(m)
}

#[cfg(not(unix))]
fn nlink(_: &std::fs::Metadata) -> u64 {
    0
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// Free `len` bytes of `file`'s blocks from `at`, its size kept.
#[cfg(target_os = "linux")]
fn punch(file: &File, at: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain system call on a descriptor this value owns; no
    // memory is passed.
    let rc = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            at as libc::off_t,
            len as libc::off_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn punch(_: &File, _: u64, _: u64) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// Whether files in `dir` can have their blocks freed: a probe file
    /// punched.
    fn can_free_in(dir: &Path) -> bool {
        let path = dir.join("probe");
        std::fs::write(&path, [1u8; 8192]).unwrap();
        let file = File::options().write(true).open(&path).unwrap();
        punch(&file, 0, 4096).is_ok()
    }

    fn big_file(dir: &Path, mib: u64) -> (PathBuf, Vec<u8>) {
        let path = dir.join("earlier.tsv");
        let bytes: Vec<u8> = (0..mib << 20).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        File::open(&path).unwrap().sync_all().unwrap();
        (path, bytes)
    }

    #[test]
    fn a_file_read_through_is_its_bytes_and_goes_as_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = big_file(dir.path(), 24);
        let mut c = Consumed::open(&path, Gate::open()).unwrap().unwrap();
        let mut first = vec![0u8; 9 << 20];
        c.read_exact(&mut first).unwrap();
        // The name is gone from the first read, before any block.
        assert!(!path.exists() && c.gate.consumed());
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        first.extend(rest);
        assert!(first == bytes, "the bytes read are the file's");
        if can_free_in(dir.path()) {
            assert!(c.freed() >= 16 << 20, "freed {}", c.freed());
            let blocks = c.file.metadata().unwrap().blocks() * 512;
            assert!(blocks <= 9 << 20, "{blocks} bytes still on disk");
        }
    }

    #[test]
    fn nothing_is_freed_until_the_gate_opens() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = big_file(dir.path(), 20);
        let gate = Gate::default();
        let mut c = Consumed::open(&path, gate.clone()).unwrap().unwrap();
        let mut got = vec![0u8; 17 << 20];
        c.read_exact(&mut got).unwrap();
        assert!(path.exists(), "the name stays while the gate is shut");
        assert_eq!(c.freed(), 0);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "not a byte freed");
        gate.release();
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        got.extend(rest);
        assert!(got == bytes);
        assert!(!path.exists(), "gone once the gate opened");
    }

    #[test]
    fn a_file_with_another_name_or_renamed_under_it_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = big_file(dir.path(), 17);
        let other = dir.path().join("this run's.tsv");
        std::fs::hard_link(&path, &other).unwrap();
        assert!(Consumed::open(&path, Gate::open()).unwrap().is_none());
        std::fs::remove_file(&other).unwrap();
        // The name given to another file while this one is read: neither
        // is touched.
        let mut c = Consumed::open(&path, Gate::open()).unwrap().unwrap();
        std::fs::rename(&path, &other).unwrap();
        std::fs::write(&path, b"another file").unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert!(got == bytes);
        assert_eq!(c.freed(), 0);
        assert_eq!(std::fs::read(&path).unwrap(), b"another file");
        assert_eq!(std::fs::read(&other).unwrap(), bytes);
    }

    #[test]
    fn a_directory_or_a_missing_file_is_left_to_the_plain_open() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Consumed::open(dir.path(), Gate::open()).unwrap().is_none());
        let gone = dir.path().join("gone.tsv");
        assert!(Consumed::open(&gone, Gate::open()).unwrap().is_none());
    }
}
