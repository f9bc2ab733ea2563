//! Opening and examining repository files whatever the length of their
//! paths.
//!
//! Linux refuses a path of `PATH_MAX` (4096) bytes or more in any one system
//! call (`ENAMETOOLONG`), yet a tree can be arbitrarily deep, since names
//! are created relative to a directory: a user's archive with 20 levels of
//! 250-byte names is unusual but real, and its files must be chunked,
//! verified and shown like any other. Every stage that opens or stats a
//! repository file goes through this module ([`open_file`], [`metadata`],
//! [`symlink_metadata`]); the walk uses [`read_dir`] for directories whose
//! paths are too long.
//!
//! # Cost
//!
//! Each function first makes the ordinary call on the full path, so paths
//! under `PATH_MAX` cost exactly what they did: no extra system call, no
//! directory descriptor held. Only on `ENAMETOOLONG` is the path resolved
//! in pieces of under `PATH_MAX` bytes, each opened (`O_PATH`) relative to
//! the directory reached by the previous piece (`openat`): one extra
//! `openat` per 4 KiB of path. The kernel resolves each piece as it would
//! have resolved the whole path (symlinks inside are followed, `..` is
//! physical), so the file reached is the one the full path names. A whole
//! walk relative to directory descriptors would not be faster for the
//! common case (walkdir's `read_dir` on the full path is one `openat` too)
//! and would touch the chunk stage's hand-over of paths to its workers.
//!
//! # Why rustix and not libc
//!
//! `rustix` wraps `openat`, `fstatat` and `getdents64` safely (owned
//! descriptors, `io::Error`s, a directory reader), so this module needs no
//! `unsafe`; with `libc` each call, `fdopendir`/`readdir` and the `dirent`
//! name would be an `unsafe` block to get right. It is already built for
//! `tempfile` (same version, feature `fs`), so it brings no new code into
//! the build.

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, CWD};
use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Length from which Linux refuses a path (`PATH_MAX`, counting its NUL).
pub const PATH_MAX: usize = 4096;

/// True when `e` is "File name too long": the path must be resolved in
/// pieces.
pub fn too_long(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::NAMETOOLONG.raw_os_error())
}

/// Open a file for reading, also when its path is `PATH_MAX` or longer.
///
/// `O_NONBLOCK`: a path replaced by a FIFO since the walk must not block
/// the caller, which checks `is_file()` on the open file before reading (the
/// flag has no effect on regular files).
pub fn open_file(path: &Path) -> io::Result<File> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK;
    match File::options()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
    {
        Err(e) if too_long(&e) => open_in_pieces(path, flags).map(File::from),
        r => r,
    }
}

/// `std::fs::metadata` (symlinks followed), also for long paths.
pub fn metadata(path: &Path) -> io::Result<Metadata> {
    match std::fs::metadata(path) {
        Err(e) if too_long(&e) => File::from(open_in_pieces(path, OFlags::PATH)?).metadata(),
        r => r,
    }
}

/// `std::fs::symlink_metadata` (a symlink itself), also for long paths.
pub fn symlink_metadata(path: &Path) -> io::Result<Metadata> {
    match std::fs::symlink_metadata(path) {
        Err(e) if too_long(&e) => {
            // O_PATH | O_NOFOLLOW opens a symlink itself; fstat describes it.
            File::from(open_in_pieces(path, OFlags::PATH | OFlags::NOFOLLOW)?).metadata()
        }
        r => r,
    }
}

/// Open `path` with `flags`, resolving it in pieces of under [`PATH_MAX`]
/// bytes, each relative to the directory the previous piece reached. A
/// piece ends at a `/`; a single name of `PATH_MAX` bytes cannot exist (a
/// name is at most 255), so that is `ENAMETOOLONG` again.
fn open_in_pieces(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let mut rest = path.as_os_str().as_bytes();
    let mut dir: Option<OwnedFd> = None;
    while rest.len() >= PATH_MAX {
        let cut = memchr::memrchr(b'/', &rest[..PATH_MAX - 1])
            .ok_or_else(|| io::Error::from(rustix::io::Errno::NAMETOOLONG))?;
        // A leading `/` is the root directory itself.
        dir = Some(open_dir_at(dir.as_ref(), &rest[..cut.max(1)])?);
        rest = &rest[cut + 1..];
        while let [b'/', tail @ ..] = rest {
            rest = tail;
        }
    }
    if rest.is_empty() {
        rest = b".";
    }
    let base = dir.as_ref().map_or(CWD, |d| d.as_fd());
    Ok(rustix::fs::openat(
        base,
        rest,
        flags | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// A directory `path` (under [`PATH_MAX`] bytes) relative to `dir` (none:
/// the working directory), opened only to resolve names relative to it.
fn open_dir_at(dir: Option<&OwnedFd>, path: &[u8]) -> io::Result<OwnedFd> {
    let base = dir.map_or(CWD, |d| d.as_fd());
    Ok(rustix::fs::openat(
        base,
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// What a directory entry is, as the walk needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    /// A directory, with its device and inode (for loop detection when
    /// symlinks are followed; zero otherwise).
    Dir {
        dev: u64,
        ino: u64,
    },
    /// A symlink not followed.
    Symlink,
    /// FIFO, socket or device.
    Special,
}

/// One entry of [`read_dir`].
#[derive(Debug)]
pub struct Entry {
    pub name: OsString,
    /// What it is, or why that could not be found out (a dangling symlink
    /// when following them).
    pub kind: io::Result<Kind>,
}

/// The entries of a directory (without `.` and `..`), sorted by the bytes
/// of their names, for a directory whose path may be `PATH_MAX` or longer.
/// `follow`: symlinked entries are resolved to what they point to (the
/// directory itself is always opened through symlinks, as walkdir's
/// `read_dir` does). Types come from the directory entries; an `fstatat`
/// relative to the open directory is made only when the file system does
/// not give a type, for followed symlinks and, when following, for
/// directories (their identity).
pub fn read_dir(path: &Path, follow: bool) -> io::Result<Vec<Entry>> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY;
    let fd = match rustix::fs::open(path, flags | OFlags::CLOEXEC, Mode::empty()) {
        Err(e) if e == rustix::io::Errno::NAMETOOLONG => open_in_pieces(path, flags)?,
        r => r?,
    };
    let mut raw: Vec<(Vec<u8>, FileType)> = Vec::new();
    let mut dir = Dir::new(fd)?;
    while let Some(ent) = dir.read() {
        let ent = ent?;
        let name = ent.file_name().to_bytes();
        if name != b"." && name != b".." {
            raw.push((name.to_vec(), ent.file_type()));
        }
    }
    raw.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let fd = dir.fd()?;
    let stat = |name: &[u8], follow: bool| {
        let at = if follow {
            AtFlags::empty()
        } else {
            AtFlags::SYMLINK_NOFOLLOW
        };
        rustix::fs::statat(fd, name, at).map_err(io::Error::from)
    };
    // `st_dev` and `st_ino` are `c_ulong` on some targets, `u64` on others.
    #[allow(clippy::useless_conversion)]
    let kind_of = |ft: FileType, st: Option<&rustix::fs::Stat>| match ft {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir {
            dev: st.map_or(0, |s| u64::from(s.st_dev)),
            ino: st.map_or(0, |s| u64::from(s.st_ino)),
        },
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Special,
    };
    Ok(raw
        .into_iter()
        .map(|(name, ft)| {
            let needs_stat = match ft {
                FileType::Unknown => true,
                FileType::Symlink | FileType::Directory => follow,
                _ => false,
            };
            let kind = if needs_stat {
                stat(&name, follow)
                    .map(|st| kind_of(FileType::from_raw_mode(st.st_mode), Some(&st)))
            } else {
                Ok(kind_of(ft, None))
            };
            Entry {
                name: OsString::from_vec(name),
                kind,
            }
        })
        .collect())
}

/// `mkdir -p` for a path of any length: each directory is created
/// relative to its parent. For tests and corpus generators that build deep
/// trees.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    use std::path::Component;
    let mut dir: Option<OwnedFd> = None;
    for c in path.components() {
        let name: &[u8] = match c {
            Component::RootDir => b"/",
            Component::CurDir => continue,
            Component::ParentDir => b"..",
            Component::Normal(n) => n.as_bytes(),
            Component::Prefix(_) => unreachable!("no path prefixes on Unix"),
        };
        let base = dir.as_ref().map_or(CWD, |d| d.as_fd());
        match rustix::fs::mkdirat(base, name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        dir = Some(open_dir_at(dir.as_ref(), name)?);
    }
    Ok(())
}

/// `std::fs::write` for a path of any length (the directory must exist).
pub fn write(path: &Path, data: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
    let fd = match rustix::fs::open(path, flags | OFlags::CLOEXEC, Mode::from_raw_mode(0o666)) {
        Err(e) if e == rustix::io::Errno::NAMETOOLONG => {
            let dir = path.parent().unwrap_or(Path::new("."));
            let name = path.file_name().unwrap_or_default();
            let dir = open_in_pieces(dir, OFlags::PATH | OFlags::DIRECTORY)?;
            rustix::fs::openat(
                &dir,
                name,
                flags | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            )?
        }
        r => r?,
    };
    File::from(fd).write_all(data)
}

/// `std::os::unix::fs::symlink` for a link path of any length.
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    let dir = link.parent().unwrap_or(Path::new("."));
    let name = link.file_name().unwrap_or_default();
    let dir = open_in_pieces(dir, OFlags::PATH | OFlags::DIRECTORY)?;
    Ok(rustix::fs::symlinkat(target, &dir, name)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;

    /// A chain of `levels` directories of 250-byte names under `root`,
    /// with `leaf.txt` and a symlink `link` to it at the bottom.
    fn deep_chain(root: &Path, levels: usize) -> std::path::PathBuf {
        let mut path = root.to_path_buf();
        for _ in 0..levels {
            path.push("n".repeat(250));
        }
        create_dir_all(&path).unwrap();
        write(&path.join("leaf.txt"), b"deep leaf\n").unwrap();
        symlink(Path::new("leaf.txt"), &path.join("link")).unwrap();
        path
    }

    #[test]
    fn long_paths_are_opened_stated_and_listed() {
        let t = tempfile::tempdir().unwrap();
        let dir = deep_chain(t.path(), 20);
        let leaf = dir.join("leaf.txt");
        assert!(leaf.as_os_str().len() > 5000);
        // The plain call fails: the fallback is what is tested.
        assert!(too_long(&std::fs::File::open(&leaf).unwrap_err()));
        let mut s = String::new();
        open_file(&leaf).unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, "deep leaf\n");
        assert_eq!(metadata(&leaf).unwrap().len(), 10);
        assert_eq!(metadata(&dir.join("link")).unwrap().len(), 10);
        assert!(symlink_metadata(&dir.join("link"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            open_file(&dir.join("missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );

        let plain: Vec<(String, Kind)> = read_dir(&dir, false)
            .unwrap()
            .into_iter()
            .map(|e| (e.name.into_string().unwrap(), e.kind.unwrap()))
            .collect();
        assert_eq!(
            plain,
            [
                ("leaf.txt".to_string(), Kind::File),
                ("link".to_string(), Kind::Symlink)
            ]
        );
        let followed = read_dir(&dir, true).unwrap();
        assert_eq!(followed[1].kind.as_ref().unwrap(), &Kind::File);
        // A followed directory carries its identity.
        let parent = dir.parent().unwrap();
        let listed = read_dir(parent, true).unwrap();
        let m = metadata(&dir).unwrap();
        assert_eq!(
            listed[0].kind.as_ref().unwrap(),
            &Kind::Dir {
                dev: m.dev(),
                ino: m.ino()
            }
        );
    }

    #[test]
    fn short_paths_take_the_plain_calls() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("b"), b"x").unwrap();
        std::fs::create_dir(t.path().join("a")).unwrap();
        let names: Vec<OsString> = read_dir(t.path(), false)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(metadata(&t.path().join("b")).unwrap().len(), 1);
        assert!(open_file(&t.path().join("a"))
            .unwrap()
            .metadata()
            .unwrap()
            .is_dir());
    }
}
