//! Opening inputs (a path or `-` for standard input) and writing outputs
//! atomically: a temp file in the target's folder, renamed over the target
//! only when the stage finished, so a killed stage never leaves a file that
//! `make` would take as done.

pub mod bgwrite;
pub mod consume;
pub mod frames;
pub mod hashing;
pub mod longpath;
pub mod ordered;
pub mod prefetch;
pub mod progress;
pub mod sorter;
pub mod walk;

use crate::error::{Context, Error, Result};
use crate::formats::BUF_SIZE;
use std::fs::File;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Where a stage writes: standard output, or a file that appears only when
/// [`Output::finish`] succeeds.
pub struct Output {
    inner: Option<BufWriter<Sink>>,
    target: Option<PathBuf>,
    name: String,
    written: u64,
}

/// Fault injection for tests, read once from the environment; costs one
/// branch per write otherwise.
///
/// * `FSIM_TEST_ABORT=<program>:<bytes>[:<arg>]` makes that program abort
///   (no cleanup, like `kill -9`) once it has written that many bytes to an
///   output; with `<arg>`, only a run that has this exact argument (e.g.
///   `2/4` for one shard of fsim-chunk).
/// * `FSIM_TEST_ENOSPC=<program>:<bytes>[:<arg>]` makes writes fail with
///   "No space left on device" (ENOSPC) from that point on.
/// * `FSIM_TEST_ABORT_RUN=<program>:<n>[:<arg>]` makes that program abort
///   right after its n-th sort run is journaled ([`test_abort_after_run`]).
fn fault_point(var: &str) -> Option<u64> {
    let spec = std::env::var(var).ok()?;
    let mut parts = spec.splitn(3, ':');
    let (prog, bytes, arg) = (parts.next()?, parts.next()?, parts.next());
    let mut args = std::env::args_os();
    let me = args.next()?;
    let me = Path::new(&me).file_name()?.to_string_lossy().into_owned();
    if me != prog {
        return None;
    }
    if let Some(a) = arg {
        if !args.any(|x| x == a) {
            return None;
        }
    }
    bytes.parse().ok()
}

fn abort_point() -> Option<u64> {
    use std::sync::OnceLock;
    static POINT: OnceLock<Option<u64>> = OnceLock::new();
    *POINT.get_or_init(|| fault_point("FSIM_TEST_ABORT"))
}

fn enospc_point() -> Option<u64> {
    use std::sync::OnceLock;
    static POINT: OnceLock<Option<u64>> = OnceLock::new();
    *POINT.get_or_init(|| fault_point("FSIM_TEST_ENOSPC"))
}

/// Abort like `kill -9` when `runs` is the point set by
/// `FSIM_TEST_ABORT_RUN` (the resume tests of `fsim-sort --resume-dir`).
pub fn test_abort_after_run(runs: u64) {
    use std::sync::OnceLock;
    static POINT: OnceLock<Option<u64>> = OnceLock::new();
    if *POINT.get_or_init(|| fault_point("FSIM_TEST_ABORT_RUN")) == Some(runs) {
        std::process::abort();
    }
}

/// ENOSPC, as the kernel reports a full file system.
const ENOSPC: i32 = 28;

enum Sink {
    Stdout(io::Stdout),
    Temp(TempSink),
    /// An existing target that is not a regular file (`/dev/null`, a FIFO):
    /// written in place, since renaming over it would replace the device.
    Direct(File),
    /// A record stream kept compressed on disk ([`Output::compress`]).
    Zstd(Box<zstd::stream::write::Encoder<'static, Sink>>),
    /// Chunk records kept compressed as frames a re-run may copy
    /// ([`Output::create_framed_records`]).
    Frames(Box<frames::FrameWriter<Sink>>),
}

/// The mode a finished output is created with: `0666`, less the umask
/// (the kernel applies it at `open`), as `sort -o` or a shell redirection
/// would make it. The temp file's default, `0600`, would leave reports
/// unreadable to the colleagues they are written for.
pub fn output_mode() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o666)
}

/// Bytes written between two write-back starts ([`TempSink::wrote`]).
pub const WRITEBACK_STEP: u64 = 8 << 20;

/// [`WRITEBACK_STEP`], or `FSIM_WRITEBACK_STEP` (bytes; `0` never starts
/// the write-back early) for measuring what the early write-back buys
/// (docs/measurements/2026-11-22-chunk-sort-partition-internals.md).
fn writeback_step() -> u64 {
    use std::sync::OnceLock;
    static STEP: OnceLock<u64> = OnceLock::new();
    *STEP.get_or_init(|| {
        std::env::var("FSIM_WRITEBACK_STEP")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(WRITEBACK_STEP, |v: u64| if v == 0 { u64::MAX } else { v })
    })
}

/// The temp file of an atomic output, and how far its write-back was
/// started.
///
/// Every output ends with an `fsync` (see [`Output::finish`]). On a machine
/// with much memory nothing is written back before that (the kernel waits
/// for 10% of RAM to be dirty), so the `fsync` then writes the whole output
/// while the stage waits: ~1.3 s for the 520 MB of `fsim-chunk --avg-size
/// 100` on a 1 GB tree. Starting the write-back of every
/// [`WRITEBACK_STEP`] bytes as they are written (`sync_file_range`,
/// `SYNC_FILE_RANGE_WRITE`: it queues the pages for the disk and returns)
/// overlaps the disk with the stage's work, and the `fsync` waits only for
/// the tail. An error of the write-back is reported by the `fsync`.
/// Measured (`strace -T`, fsim-chunk avg 100, 1 GB tree, 520 MB of
/// records): the `fsync`s took 0.89-0.93 s in all, now 0.34-0.36 s.
struct TempSink {
    file: tempfile::NamedTempFile,
    /// An earlier file this output may turn out to repeat ([`Output::same_as`]).
    same: Option<Same>,
    /// Bytes written to the file.
    written: u64,
    /// Write-back started for bytes before this offset.
    started: u64,
    /// [`writeback_step`] (read from the environment once per process),
    /// kept here so that [`TempSink::wrote`] compares two fields.
    step: u64,
}

impl TempSink {
    fn new(file: tempfile::NamedTempFile) -> Self {
        TempSink {
            file,
            same: None,
            written: 0,
            started: 0,
            step: writeback_step(),
        }
    }

    #[inline]
    fn wrote(&mut self, n: usize) {
        self.written += n as u64;
        if self.written - self.started >= self.step {
            self.start_writeback();
        }
    }

    #[cold]
    fn start_writeback(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let len = self.written - self.started;
            // SAFETY: a plain system call on an open descriptor we own;
            // no memory is passed. Its result is advisory (see above).
            unsafe {
                libc::sync_file_range(
                    self.file.as_file().as_raw_fd(),
                    self.started as libc::off64_t,
                    len as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.started = self.written;
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.same.is_some() && self.still_same(buf)? {
            return Ok(buf.len());
        }
        let n = self.file.write(buf)?;
        self.wrote(n);
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.same.is_some() && self.still_same(buf)? {
            return Ok(());
        }
        self.file.write_all(buf)?;
        self.wrote(buf.len());
        Ok(())
    }

    /// True when `buf` is the earlier file's next bytes; false from the
    /// first difference on, once the equal part has been copied here.
    fn still_same(&mut self, buf: &[u8]) -> io::Result<bool> {
        let s = self.same.as_mut().expect("checked by the caller");
        let (from, to) = (s.pos as usize, s.pos as usize + buf.len());
        if s.map.get(from..to) == Some(buf) {
            s.pos += buf.len() as u64;
            return Ok(true);
        }
        self.diverge()?;
        Ok(false)
    }

    /// Write the earlier file's equal part (copied by the kernel where it
    /// can) and stop comparing.
    fn diverge(&mut self) -> io::Result<()> {
        let Some(mut s) = self.same.take() else {
            return Ok(());
        };
        let copied = io::copy(&mut Read::take(&mut s.prev, s.pos), self.file.as_file_mut())?;
        if copied != s.pos {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} got shorter while it was read", s.path.display()),
            ));
        }
        self.wrote(copied as usize);
        s.gate.release();
        Ok(())
    }
}

/// The earlier file an output is compared with as it is written: a re-run
/// whose inputs did not change writes the same bytes (fsim-chunk's records
/// after files were only touched: 94 MB on Django + moment, written again
/// and kept twice; on a page-cached disk the writer thread was not the
/// stage's critical path, so what this saves is the disk's writes and
/// space, not time there). Nothing is written while
/// the bytes agree; at the end the earlier file is linked in place
/// ([`link_dated_now`]), and from a first difference on the output is
/// written as any other, the equal part copied first.
struct Same {
    /// Released once the earlier file's bytes are no longer needed here
    /// (its blocks may then be freed: [`consume::Gate`]).
    gate: consume::Gate,
    prev: File,
    path: PathBuf,
    /// The earlier file's bytes, mapped (compared without a copy).
    map: memmap2::Mmap,
    /// The earlier file's first `pos` bytes were this output's.
    pos: u64,
}

impl Same {
    /// `prev` mapped to be compared, or `None` when it cannot be.
    fn open(prev: &Path, gate: consume::Gate) -> Option<Same> {
        let f = File::open(prev).ok()?;
        if !f.metadata().ok()?.is_file() {
            return None;
        }
        // SAFETY: the map is only read, and a change to the earlier file
        // while it is mapped (no fsim program writes into an existing
        // file; a consumed one frees nothing before the gate is released)
        // could only make this output differ from it: the bytes compared
        // are then written as any output's.
        let map = unsafe { memmap2::Mmap::map(&f) }.ok()?;
        Some(Same {
            gate,
            prev: f,
            path: prev.to_path_buf(),
            map,
            pos: 0,
        })
    }
}

/// Put `from` at `to` as a hard link, atomically (a temporary name in
/// `to`'s folder, renamed into place), its modification time set to now:
/// make compares it with the outputs of the stages after it. One inode, so
/// the earlier name gets the new time too; safe because no fsim program
/// writes into an existing file (each renames a new one over its output).
/// An error when the file system refuses the link or the time (the caller
/// copies instead).
pub fn link_dated_now(from: &Path, to: &Path) -> io::Result<()> {
    let dir = match to.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".link.{}.{name}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::fs::hard_link(from, &tmp)?;
    // Opened for reading: the owner may set an explicit time without
    // write permission (a read-only earlier output).
    let placed = File::open(&tmp)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()))
        .and_then(|()| std::fs::rename(&tmp, to));
    // Gone after a rename, but not when `to` was already this file: rename
    // does nothing between two links of one file.
    let _ = std::fs::remove_file(&tmp);
    placed
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Temp(t) => t.write(buf),
            Sink::Direct(f) => f.write(buf),
            Sink::Zstd(z) => z.write(buf),
            Sink::Frames(z) => z.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.write_all(buf),
            Sink::Temp(t) => t.write_all(buf),
            Sink::Direct(f) => f.write_all(buf),
            Sink::Zstd(z) => z.write_all(buf),
            Sink::Frames(z) => z.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Temp(t) => t.file.flush(),
            Sink::Direct(f) => f.flush(),
            // No flush: it would end a block wherever a stage flushed,
            // and equal records would not give equal bytes (a renamed
            // temp file needs no flush before its end).
            Sink::Zstd(_) | Sink::Frames(_) => Ok(()),
        }
    }
}

/// zstd's level for record streams ([`Output::compress`]).
pub const ZSTD_LEVEL: i32 = 1;

/// Threads zstd compresses a record stream with, beside the stage's own:
/// one, so that the compression overlaps the stage's work (a sort's
/// merge, the partition's union-find) instead of adding to it. zstd's
/// output is the same for any number of workers from one on.
pub const ZSTD_WORKERS: u32 = 1;

/// What a stream compressed on the stage's own thread holds
/// ([`Output::create_small_records`]).
pub const ZSTD_SMALL_ENCODER_BYTES: u64 = 2 << 20;

/// A zstd encoder writing into `sink` ([`Output::compress`]), with
/// `workers` threads of its own (0: on the caller's thread).
fn zstd_encoder(
    sink: Sink,
    workers: u32,
) -> io::Result<zstd::stream::write::Encoder<'static, Sink>> {
    let mut z = zstd::stream::write::Encoder::new(sink, ZSTD_LEVEL)?;
    z.include_checksum(true)?;
    if workers > 0 {
        z.multithread(workers)?;
    }
    Ok(z)
}

impl Output {
    /// `None` or `-` means standard output.
    pub fn create(path: Option<&Path>) -> Result<Output> {
        match path {
            None => Ok(Self::stdout()),
            Some(p) if p.as_os_str() == "-" => Ok(Self::stdout()),
            Some(p) if std::fs::metadata(p).is_ok_and(|m| !m.is_file()) => {
                let name = p.display().to_string();
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .ctx(|| format!("cannot open {name} for writing"))?;
                Ok(Output {
                    inner: Some(BufWriter::with_capacity(BUF_SIZE, Sink::Direct(f))),
                    target: None,
                    name,
                    written: 0,
                })
            }
            Some(p) => {
                let name = p.display().to_string();
                let dir = match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let file_name = p
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let tmp = tempfile::Builder::new()
                    .prefix(&format!(".{file_name}."))
                    .suffix(".tmp")
                    .permissions(output_mode())
                    .tempfile_in(&dir)
                    .ctx(|| {
                        format!(
                            "cannot create a temporary file in {} for {name}",
                            dir.display()
                        )
                    })?;
                Ok(Output {
                    inner: Some(BufWriter::with_capacity(
                        BUF_SIZE,
                        Sink::Temp(TempSink::new(tmp)),
                    )),
                    target: Some(p.to_path_buf()),
                    name,
                    written: 0,
                })
            }
        }
    }

    /// [`Output::create`], compressed ([`Output::compress`]) when
    /// `compress`: a stage's `-o` under its `--compress`.
    pub fn create_records(path: Option<&Path>, compress: bool) -> Result<Output> {
        let mut out = Output::create(path)?;
        if compress {
            out.compress_with(ZSTD_WORKERS)?;
        }
        Ok(out)
    }

    /// [`Output::create_records`] for a stream written slowly beside much
    /// work (fsim-verify's pairs: 16 MB compressed in a minute), compressed
    /// on the stage's own thread: nothing to overlap, and the encoder's
    /// buffers are ~1.4 MiB ([`ZSTD_SMALL_ENCODER_BYTES`]) instead of a
    /// worker thread's 16 (fsim-verify at `--memory 4M` on the
    /// 100,000-file overlap tree: 45.7 MiB writing text, 61.6 compressed),
    /// left to the stage's `--memory`. Other bytes than a worker thread's
    /// zstd frame, the same lines.
    pub fn create_small_records(path: Option<&Path>, compress: bool) -> Result<Output> {
        let mut out = Output::create(path)?;
        if compress {
            out.compress_with(0)?;
        }
        Ok(out)
    }

    /// [`Output::create_records`] for chunk records: compressed, they are
    /// written as frames of whole files that a re-run copies when their
    /// files did not change ([`frames`]; [`Output::end_frame`],
    /// [`Output::copy_frame`]), compressed on the caller's thread (a
    /// [`crate::io::bgwrite::BgWriter`]'s, beside the stage).
    pub fn create_framed_records(path: Option<&Path>, compress: bool) -> Result<Output> {
        let mut out = Output::create(path)?;
        if !compress {
            return Ok(out);
        }
        let Some(w) = out.inner.take() else {
            return Ok(out);
        };
        let sink = match w.into_parts().0 {
            Sink::Temp(t) => {
                let name = &out.name;
                let z = frames::FrameWriter::new(Sink::Temp(t))
                    .ctx(|| format!("compressing {name}"))?;
                Sink::Frames(Box::new(z))
            }
            other => other,
        };
        out.inner = Some(BufWriter::with_capacity(BUF_SIZE, sink));
        Ok(out)
    }

    /// Whether this output is written as frames ([`Output::create_framed_records`]).
    pub fn is_framed(&self) -> bool {
        matches!(
            self.inner.as_ref().map(|w| w.get_ref()),
            Some(Sink::Frames(_))
        )
    }

    /// The sink's frame writer, once what is buffered is compressed.
    fn frames(&mut self) -> Result<Option<&mut frames::FrameWriter<Sink>>> {
        let name = &self.name;
        let Some(w) = self.inner.as_mut() else {
            return Ok(None);
        };
        w.flush().ctx(|| format!("writing {name}"))?;
        Ok(match w.get_mut() {
            Sink::Frames(z) => Some(z),
            _ => None,
        })
    }

    /// End the current frame, announced by `meta` ([`frames::FrameMeta`]);
    /// nothing for an output not written as frames.
    pub fn end_frame(&mut self, meta: Option<frames::FrameMeta>) -> Result<()> {
        let name = self.name.clone();
        match self.frames()? {
            Some(z) => z.end_frame(meta).ctx(|| format!("writing {name}")),
            None => Ok(()),
        }
    }

    /// Write an earlier run's frame as it is (its announcement and itself).
    pub fn copy_frame(&mut self, frame: &[u8]) -> Result<()> {
        if let Err(e) = self.tick(frame.len()) {
            return Err(Error::Io {
                context: format!("writing {}", self.name),
                source: e,
            });
        }
        let name = self.name.clone();
        match self.frames()? {
            Some(z) => z.copy(frame).ctx(|| format!("writing {name}")),
            None => Err(Error::msg(format!(
                "internal error: a frame copied into {name}, which is not written as frames"
            ))),
        }
    }

    fn stdout() -> Output {
        Output {
            inner: Some(BufWriter::with_capacity(
                BUF_SIZE,
                Sink::Stdout(io::stdout()),
            )),
            target: None,
            name: "standard output".into(),
            written: 0,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Compare this output with the earlier file `prev` as it is written,
    /// and link `prev` in place of writing it when every byte is the same
    /// ([`Same`]). Before anything is written; a no-op for standard output,
    /// a device, or a `prev` that cannot be opened. `gate` is released
    /// when this output no longer needs `prev`'s bytes: at once when it
    /// does not compare, else once it differs ([`consume`]).
    pub fn same_as(&mut self, prev: &Path, gate: consume::Gate) {
        let sink = self.inner.as_mut().map(|w| match w.get_mut() {
            Sink::Zstd(z) => z.get_mut(),
            Sink::Frames(z) => z.get_mut(),
            s => s,
        });
        let compared = match sink {
            Some(Sink::Temp(t)) if t.written == 0 => Same::open(prev, gate.clone()).map(|s| (t, s)),
            _ => None,
        };
        match compared {
            Some((t, same)) => t.same = Some(same),
            None => gate.release(),
        }
    }

    /// Keep this output zstd-compressed on disk: record streams that the
    /// next stage reads back ([`crate::formats::open_input`] detects the
    /// compression) take a fifth to two fifths of their text's space, and
    /// `zstdcat` (`zstd -dc`) still gives the lines. Level 1: ~4x faster
    /// than deflate's level 2 and smaller (chunk records 0.38x their text,
    /// sorted ones 0.19x; docs/performance.md, "Scratch space"). One
    /// frame (chunk records: many, [`Output::create_framed_records`]) with
    /// a checksum (a damaged file is an error when it is read, not wrong
    /// records), compressed by a worker thread of zstd's while
    /// the stage goes on ([`ZSTD_WORKERS`]); its bytes depend on the
    /// records only. Before anything is written; nothing changes for
    /// standard output, a device or a FIFO, which stay text for the pipes
    /// that read them.
    pub fn compress(&mut self) -> Result<()> {
        self.compress_with(ZSTD_WORKERS)
    }

    /// [`Output::compress`] with `workers` threads of zstd's (0: on the
    /// caller's thread).
    fn compress_with(&mut self, workers: u32) -> Result<()> {
        let Some(w) = self.inner.take() else {
            return Ok(());
        };
        assert!(w.buffer().is_empty(), "compress after a write");
        let sink = match w.into_parts().0 {
            Sink::Temp(t) => {
                let name = &self.name;
                let z =
                    zstd_encoder(Sink::Temp(t), workers).ctx(|| format!("compressing {name}"))?;
                Sink::Zstd(Box::new(z))
            }
            other => other,
        };
        self.inner = Some(BufWriter::with_capacity(BUF_SIZE, sink));
        Ok(())
    }

    /// Count bytes written, for the fault injection of the resume and
    /// full-disk tests.
    #[inline]
    fn tick(&mut self, n: usize) -> io::Result<()> {
        let (abort, full) = (abort_point(), enospc_point());
        if abort.is_some() || full.is_some() {
            self.written += n as u64;
            if abort.is_some_and(|limit| self.written >= limit) {
                // Die like `kill -9`, without unwinding, so the temp file
                // stays behind unfinished.
                std::process::abort();
            }
            if full.is_some_and(|limit| self.written >= limit) {
                return Err(io::Error::from_raw_os_error(ENOSPC));
            }
        }
        Ok(())
    }

    /// The bytes in the temp file so far (compressed, when the output is):
    /// what the output takes on disk, short of what its buffers and zstd's
    /// worker still hold. 0 for standard output, a device or a FIFO.
    pub fn bytes_on_disk(&self) -> u64 {
        let sink = self.inner.as_ref().map(|w| match w.get_ref() {
            Sink::Zstd(z) => z.get_ref(),
            Sink::Frames(z) => z.get_ref(),
            s => s,
        });
        match sink {
            Some(Sink::Temp(t)) => t.written,
            _ => 0,
        }
    }

    /// True when nothing is renamed at the end (standard output, a device
    /// or a FIFO): the output is visible while it is written.
    pub fn is_stdout(&self) -> bool {
        self.target.is_none()
    }

    /// Write bytes; a failure (full disk, closed pipe) names the output.
    #[inline]
    pub fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        if let Err(e) = self.tick(buf.len()) {
            return Err(Error::Io {
                context: format!("writing {}", self.name),
                source: e,
            });
        }
        let name = &self.name;
        self.inner
            .as_mut()
            .expect("write after finish")
            .write_all(buf)
            .ctx(|| format!("writing {name}"))
    }

    /// Flush, sync and rename into place. Without this call (an error, a
    /// panic, a kill) the temp file is removed and the target untouched.
    pub fn finish(mut self) -> Result<()> {
        let name = self.name.clone();
        let w = self.inner.take().expect("finish twice");
        let mut sink = w.into_inner().map_err(|e| Error::Io {
            context: format!("writing {name}"),
            source: e.into_error(),
        })?;
        match sink {
            Sink::Zstd(z) => sink = z.finish().ctx(|| format!("writing {name}"))?,
            Sink::Frames(z) => sink = z.finish().ctx(|| format!("writing {name}"))?,
            s => sink = s,
        }
        match sink {
            Sink::Zstd(_) | Sink::Frames(_) => {
                unreachable!("the compressed stream was finished above")
            }
            Sink::Stdout(mut s) => s.flush().ctx(|| format!("writing {name}")),
            Sink::Direct(mut f) => f.flush().ctx(|| format!("writing {name}")),
            Sink::Temp(mut t) => {
                let target = self.target.take().expect("temp output has a target");
                if let Some(s) = &t.same {
                    // Every byte the earlier file's, and no more: link it
                    // (the temp file, empty, is removed when dropped).
                    if s.pos == s.map.len() as u64 && link_dated_now(&s.path, &target).is_ok() {
                        return Ok(());
                    }
                    t.diverge().ctx(|| format!("writing {name}"))?;
                }
                let t = t.file;
                t.as_file().sync_all().ctx(|| format!("writing {name}"))?;
                t.persist(&target).map_err(|e| Error::Io {
                    context: format!("renaming the finished output to {name}"),
                    source: e.error,
                })?;
                Ok(())
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tick(buf.len())?;
        self.inner.as_mut().expect("write after finish").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.as_mut().expect("write after finish").flush()
    }
}

/// In a pipe (`fsim-chunk DIR | fsim-sort | fsim-partition`), the file table
/// that `fsim-chunk` writes is complete only once the stream reaches the
/// next stage: block until standard input has data (or ends) before reading
/// a side file such as `--files`. Does nothing for a named input.
pub fn wait_for_input(path: &Path) -> Result<()> {
    if path.as_os_str() == "-" {
        io::stdin()
            .lock()
            .fill_buf()
            .ctx(|| "reading standard input".to_string())?;
    }
    Ok(())
}

/// Have the allocator give freed memory back to the system as it is
/// freed, for a process whose peak RSS must stay within a budget
/// (fsim-report's `--memory`) and that frees large buffers between its
/// phases. glibc raises its mmap threshold to the size of each mapped
/// block freed (up to 32 MiB) and its trim threshold to twice that, so
/// after the first large buffer is freed the next ones come from the heap
/// and their freed pages stay resident under the next phase: at a million
/// files, fsim-report's heap was 224 MiB at its peak and its RSS 274 MiB
/// at `--memory 256M`; with the thresholds fixed at glibc's defaults (128
/// KiB: a larger block is mapped and unmapped on its own, the heap's free
/// top is returned), 246 MiB. Elsewhere nothing is done.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets two of the allocator's parameters (no
        // memory is passed). A refusal (result 0) leaves glibc's dynamic
        // thresholds: more RSS, the same output.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
        }
    }
}

/// Have every thread allocate from one malloc arena, for a process whose
/// threads share a cache bounded in bytes (fsim-verify's tokenized files).
/// glibc gives each thread an arena of its own: a file tokenized by one
/// worker is freed into that worker's arena whichever worker evicts it,
/// so each arena grows to about the whole cache as the workers take turns
/// filling it, and the pages a thread freed stay resident in its arena.
/// On the 100,000-file overlap tree at `--memory 128M`, two workers
/// peaked at 264 MiB with an arena each and at 199 MiB with one, in about
/// the same time (the workers allocate little per file). Call before the
/// threads start; elsewhere nothing is done.
pub fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets one of the allocator's parameters (no
        // memory is passed). A refusal (result 0) leaves an arena per
        // thread: more RSS, the same output.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The umask of this process, read without changing it.
    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line[6..].trim(), 8).unwrap()
    }

    #[test]
    fn finished_outputs_have_the_usual_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.tsv");
        let mut o = Output::create(Some(&p)).unwrap();
        o.write_all(b"x\n").unwrap();
        o.finish().unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask(), "mode {mode:o}");
    }

    #[test]
    fn output_appears_only_on_finish() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.tsv");
        let mut o = Output::create(Some(&target)).unwrap();
        o.write_all(b"hello\n").unwrap();
        assert!(!target.exists());
        drop(o);
        assert!(!target.exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "temp file removed"
        );
        let mut o = Output::create(Some(&target)).unwrap();
        o.write_all(b"hello\n").unwrap();
        o.finish().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"hello\n");
    }

    #[test]
    fn large_outputs_with_write_back_started_are_whole() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("big");
        let mut o = Output::create(Some(&target)).unwrap();
        let mut want = Vec::new();
        let mut i = 0u64;
        while (want.len() as u64) < 2 * WRITEBACK_STEP + 12345 {
            let line = format!("{i}\n");
            want.extend_from_slice(line.as_bytes());
            o.write_all(line.as_bytes()).unwrap();
            i += 1;
        }
        o.finish().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), want);
    }

    #[test]
    fn devices_are_written_in_place_not_replaced() {
        let mut o = Output::create(Some(Path::new("/dev/null"))).unwrap();
        o.write_all(b"nothing\n").unwrap();
        o.finish().unwrap();
        let m = std::fs::metadata("/dev/null").unwrap();
        assert!(!m.is_file(), "/dev/null must still be a device");
    }
}
