//! The members of the archive a thread read last, kept for the next
//! member asked for.
//!
//! Every reader of a member ([`super::member_bytes`]: fsim-verify, the line
//! source, the html report) reads it through its archive, and a zip's or
//! tar's members are read by going through the archive: without this each
//! member costs its whole archive, so an archive of N members in pairs
//! costs N archives (800 members of two 3 MB archives: 100 s of
//! fsim-verify). The readers take files in id order and an archive's
//! members have consecutive ids, so the members of one archive are asked
//! for one after the other: keeping the last archive's members, while they
//! fit in [`budget`], reads each archive about once.
//!
//! An entry is the archive's identity when it was read (device, inode,
//! size, mtime): an archive changed since is read again, as it would have
//! been without the cache.

use super::Limits;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

/// Bytes of members kept at most, per thread: an eighth of the view cap
/// (`max_bytes`, itself a quarter of a stage's `--memory` at most), so
/// 8 MiB under the defaults, 1/32 of `--memory` below 256 MiB.
pub(super) fn budget(limits: &Limits) -> u64 {
    limits.max_bytes / 8
}

/// What identifies an archive file as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    path: Vec<u8>,
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

impl Identity {
    pub(super) fn new(path: &[u8], m: &Metadata) -> Identity {
        Identity {
            path: path.to_vec(),
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
        }
    }
}

/// One archive's members by name, and the note its reading ended with.
pub(super) struct Members {
    pub(super) identity: Identity,
    pub(super) bytes: HashMap<Vec<u8>, Vec<u8>>,
    pub(super) note: Option<String>,
}

/// What a lookup found: a member's bytes, or the archive's note when it
/// does not hold it.
pub(super) enum Found {
    Member(Vec<u8>),
    Absent(Option<String>),
}

thread_local! {
    static LAST: RefCell<Option<Members>> = const { RefCell::new(None) };
    /// Archives this thread read for a member (the tests count them).
    static READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Count an archive read for a member.
pub(super) fn count_read() {
    READS.with(|r| r.set(r.get() + 1));
}

/// Archives this thread read for a member so far.
#[cfg(test)]
pub(super) fn reads() -> u64 {
    READS.with(std::cell::Cell::get)
}

/// The member `name` of the archive `identity`, when it is the one kept.
pub(super) fn lookup(identity: &Identity, name: &[u8]) -> Option<Found> {
    LAST.with(|last| {
        let last = last.borrow();
        let m = last.as_ref().filter(|m| m.identity == *identity)?;
        Some(match m.bytes.get(name) {
            Some(b) => Found::Member(b.clone()),
            None => Found::Absent(m.note.clone()),
        })
    })
}

/// Keep `members` in place of the archive kept before.
pub(super) fn keep(members: Members) {
    LAST.with(|last| *last.borrow_mut() = Some(members));
}

/// Forget the archive kept (its members are over the budget).
pub(super) fn forget() {
    LAST.with(|last| *last.borrow_mut() = None);
}
