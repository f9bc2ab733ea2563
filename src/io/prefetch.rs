//! Reading ahead of the workers: the kernel is asked to start reading the
//! files a stage will open next, when they are not in the page cache.
//!
//! A tree outside the page cache (the case of a share larger than memory)
//! is read one small file at a time by each worker, and each read waits
//! for the disk: the 100,000-file overlap tree took fsim-chunk 27.7 s
//! cold against 13.5 s warm, with the disk never asked for more than two
//! files at once. `posix_fadvise(WILLNEED)` on the files ahead queues
//! their reads and returns at once, so the disk works on many while the
//! workers hash (docs/performance.md, "A tree outside the page cache").
//!
//! On a tree in the page cache the advice is wasted: an open, a stat and a
//! close a file, a second of CPU per 100,000 files and stage. So each file
//! is first asked whether its first byte is cached (`preadv2` with
//! `RWF_NOWAIT`, which fails rather than wait for the disk; on a miss the
//! kernel starts that read, and a fast disk may answer it at once), and
//! after [`CACHED_RUN`] files in a row came at once only one file in
//! [`SAMPLE`] is looked at, until one has to wait ([`ReadAhead`]).
//!
//! Advice only: it changes no byte of any output. A file that cannot be
//! opened, or is not a regular file, is left alone (the worker that reads
//! it reports what it finds); a FIFO is opened without waiting for a
//! writer, and nothing is read from it. Only the first [`AHEAD_BYTES`] of
//! each file are asked for, so that the files ahead (a bounded number: see
//! each caller) hold a bounded amount of page cache; a larger file is read
//! on from there by the kernel's own read-ahead.

use rustix::fs::{Advice, Mode, OFlags, CWD};
use rustix::io::{Errno, ReadWriteFlags};
use std::io::IoSliceMut;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::OnceLock;

/// How much of each file is asked for: most documents and source files
/// whole.
pub const AHEAD_BYTES: u64 = 128 << 10;

/// Cached files in a row after which [`ReadAhead`] only samples.
pub const CACHED_RUN: u32 = 32;

/// While sampling, one file in this many is looked at.
pub const SAMPLE: u64 = 16;

/// What became of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Not in the page cache: the kernel was asked to read it.
    Asked,
    /// Its first byte came without waiting (it was cached, it is empty,
    /// or the disk answered the probe's own read at once): nothing asked.
    Cached,
    /// Not looked at ([`ReadAhead`] sampling a cached tree).
    Skipped,
    /// Could not be opened, or not a regular file.
    Left,
}

/// Ask the kernel to start reading the first [`AHEAD_BYTES`] of `path`
/// into the page cache, unless its first byte is there already.
pub fn will_need(path: &Path) -> Found {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(CWD, path, flags, Mode::empty()) else {
        return Found::Left;
    };
    let regular = rustix::fs::fstat(&fd)
        .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_file());
    if !regular {
        return Found::Left;
    }
    let mut byte = [0u8; 1];
    match rustix::io::preadv2(
        &fd,
        &mut [IoSliceMut::new(&mut byte)],
        0,
        ReadWriteFlags::NOWAIT,
    ) {
        Ok(_) => Found::Cached,
        // EOPNOTSUPP: a file system without RWF_NOWAIT; ask anyway.
        Err(Errno::AGAIN) | Err(Errno::OPNOTSUPP) => {
            match rustix::fs::fadvise(&fd, 0, NonZeroU64::new(AHEAD_BYTES), Advice::WillNeed) {
                Ok(()) => Found::Asked,
                Err(_) => Found::Left,
            }
        }
        Err(_) => Found::Left,
    }
}

/// [`will_need`] over a stream of files, sampling once the files are
/// found cached: [`CACHED_RUN`] cached files in a row, then one file in
/// [`SAMPLE`] until one is found on disk.
#[derive(Debug, Default)]
pub struct ReadAhead {
    cached_run: u32,
    seen: u64,
}

impl ReadAhead {
    pub fn new() -> ReadAhead {
        ReadAhead::default()
    }

    /// The next file the stage will read.
    pub fn file(&mut self, path: &Path) -> Found {
        self.step(|| will_need(path))
    }

    /// One file, `look` at it unless sampling.
    fn step(&mut self, look: impl FnOnce() -> Found) -> Found {
        self.seen += 1;
        if self.cached_run >= CACHED_RUN && !self.seen.is_multiple_of(SAMPLE) {
            return Found::Skipped;
        }
        let found = look();
        match found {
            Found::Cached => self.cached_run = self.cached_run.saturating_add(1),
            Found::Asked => self.cached_run = 0,
            Found::Skipped | Found::Left => {}
        }
        found
    }
}

/// Read `path` ahead on the process's read-ahead thread, after the paths
/// sent before it, through one [`ReadAhead`]: for a stage whose own
/// threads must not wait for an open.
///
/// The thread starts with the first path and lives as long as the
/// process; the process never waits for it, so an open that hangs (a stale
/// network mount) never holds a stage's exit. Nor does a caller wait: a
/// path sent while [`QUEUE`] paths wait already is dropped (it is advice),
/// so the queue's memory is bounded whatever the thread's pace.
pub fn ahead(path: PathBuf) {
    static THREAD: OnceLock<Option<SyncSender<PathBuf>>> = OnceLock::new();
    let tx = THREAD.get_or_init(|| {
        let (tx, rx) = sync_channel::<PathBuf>(QUEUE);
        let started = std::thread::Builder::new()
            .name("read-ahead".into())
            .spawn(move || {
                let mut r = ReadAhead::new();
                for p in rx {
                    r.file(&p);
                }
            });
        // No thread (the system's limit): no read-ahead, the same output.
        started.is_ok().then_some(tx)
    });
    if let Some(tx) = tx {
        let _ = tx.try_send(path);
    }
}

/// Paths waiting for the read-ahead thread at most: twice what a stage
/// sends ahead of its workers (fsim-verify's 512 files), so that only a
/// thread stuck in an open drops any.
pub const QUEUE: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// `path` written with `len` bytes and evicted from the page cache;
    /// false when the file system keeps its pages (tmpfs).
    fn cold_file(path: &Path, len: usize) -> bool {
        std::fs::write(path, vec![b'y'; len]).unwrap();
        let f = std::fs::File::open(path).unwrap();
        f.sync_all().unwrap();
        rustix::fs::fadvise(&f, 0, None, Advice::DontNeed).unwrap();
        resident(&f, len.min(AHEAD_BYTES as usize)) == 0
    }

    /// Pages of the first `len` bytes of `f` in the page cache (mincore on
    /// a mapping, which reads nothing in itself).
    fn resident(f: &std::fs::File, len: usize) -> usize {
        use std::os::fd::AsRawFd;
        let page = 4096;
        let mut v = vec![0u8; len.div_ceil(page)];
        // SAFETY: a private read-only mapping of a file this test owns and
        // does not change, unmapped before return; `v` has one byte a page.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::mincore(p, len, v.as_mut_ptr()), 0);
            libc::munmap(p, len);
        }
        v.iter().filter(|&&b| b & 1 != 0).count()
    }

    #[test]
    fn only_regular_files_are_read_ahead() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, vec![b'x'; 300 << 10]).unwrap();
        assert_eq!(will_need(&file), Found::Cached, "just written");
        std::fs::write(d.path().join("empty"), b"").unwrap();
        assert_eq!(will_need(&d.path().join("empty")), Found::Cached);
        assert_eq!(will_need(d.path()), Found::Left, "a folder");
        assert_eq!(will_need(&d.path().join("missing")), Found::Left);
        // A FIFO without a writer: opened without blocking, then left.
        let fifo = d.path().join("fifo");
        rustix::fs::mknodat(
            CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::RUSR | Mode::WUSR,
            0,
        )
        .unwrap();
        assert_eq!(will_need(&fifo), Found::Left);
        // The thread takes any of these.
        for path in [&file, &fifo, &d.path().to_path_buf()] {
            ahead(path.clone());
        }
    }

    #[test]
    fn the_start_of_a_file_is_read_into_the_page_cache() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("cold");
        if !cold_file(&path, 1 << 20) {
            eprintln!("skipped: this file system keeps the pages (tmpfs?)");
            return;
        }
        // Asked; or Cached when the disk answered the probe at once, which
        // read its first page.
        let found = will_need(&path);
        let f = std::fs::File::open(&path).unwrap();
        let want = AHEAD_BYTES as usize;
        let pages = match found {
            Found::Asked => want / 4096,
            Found::Cached => 1,
            other => panic!("{other:?}"),
        };
        let t = std::time::Instant::now();
        while resident(&f, want) < pages && t.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(
            resident(&f, want) >= pages,
            "{found:?}: {pages} pages read ahead"
        );
    }

    #[test]
    fn a_cached_tree_is_sampled_until_a_file_has_to_wait() {
        let mut r = ReadAhead::new();
        let mut looked = 0;
        let mut step = |r: &mut ReadAhead, found: Found| {
            r.step(|| {
                looked += 1;
                found
            })
        };
        for _ in 0..CACHED_RUN {
            assert_eq!(step(&mut r, Found::Cached), Found::Cached);
        }
        // Sampling: one file in SAMPLE is looked at.
        let skipped = (0..2 * SAMPLE)
            .filter(|_| step(&mut r, Found::Cached) == Found::Skipped)
            .count() as u64;
        assert_eq!(skipped, 2 * SAMPLE - 2);
        // A sampled file that has to wait ends the sampling...
        while step(&mut r, Found::Asked) == Found::Skipped {}
        // ...and every file is looked at again, a file that cannot be
        // opened breaking no run, until CACHED_RUN in a row came at once.
        assert_eq!(step(&mut r, Found::Left), Found::Left);
        for _ in 0..CACHED_RUN {
            assert_eq!(step(&mut r, Found::Cached), Found::Cached);
        }
        assert_eq!(step(&mut r, Found::Cached), Found::Skipped);
        assert_eq!(looked, CACHED_RUN as usize * 2 + 2 + 1 + 1);
    }
}
