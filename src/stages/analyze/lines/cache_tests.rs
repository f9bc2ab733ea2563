//! The earlier run's line sets: taken instead of reading the files, the
//! same pairs; a changed content read; a file under other settings, or
//! broken, not trusted.

use super::super::tests::{source, table};
use super::super::{keep_chunk_figures, line_pairs, LineFiles, LineSource, LineStats, Reuse};
use super::{header, Earlier, KeepTo, Kept};
use crate::formats::{FileEntry, Params};
use crate::stages::analyze::{Pair, PairStore};
use std::path::{Path, PathBuf};

/// Catalog-like files: the same msgids, and the msgstrs of files 0-5
/// shared, 6-11 their own, so the pairs are those of 0-5; with `sized`,
/// each of its own size (a first line of its own), else 0-5 of one size.
fn catalogs_of(dir: &Path, sized: bool) -> Vec<FileEntry> {
    let texts: Vec<Vec<u8>> = (0..12u32)
        .map(|f| {
            let lang = if f < 6 { 0 } else { f };
            let first = if sized {
                format!("# {}\n", "x".repeat(f as usize))
            } else {
                String::new()
            };
            let body: String = (0..200)
                .map(|m| format!("msgid \"message {m}\"\nmsgstr \"traduction {m} {lang}\"\n\n"))
                .collect();
            (first + &body).into_bytes()
        })
        .collect();
    table(dir, "po", &texts)
}

fn catalogs(dir: &Path) -> Vec<FileEntry> {
    catalogs_of(dir, true)
}

fn src() -> LineSource {
    source(Some(0), true, 60.0, 0.0)
}

fn run(files: &[FileEntry], memory: u64, reuse: &Reuse) -> (LineStats, Vec<Pair>) {
    let mut store = PairStore::new(1 << 20, None);
    let rows = LineFiles::of(files, &src());
    let st = line_pairs(&rows, &src(), None, 2, memory, reuse, &mut store).unwrap();
    let pairs = keep_chunk_figures(store.finish().unwrap())
        .map(Result::unwrap)
        .collect();
    (st, pairs)
}

fn keep_to(path: &Path, compress: bool, room: Option<u64>) -> KeepTo {
    KeepTo {
        path: path.to_path_buf(),
        params: header(&Params::new()),
        compress,
        room,
    }
}

fn keeping(path: &Path) -> Reuse<'static> {
    keeping_within(path, true, None)
}

/// This run's line sets kept at `path`, within `room` bytes when given.
fn keeping_within(path: &Path, compress: bool, room: Option<u64>) -> Reuse<'static> {
    Reuse {
        keep: Some(keep_to(path, compress, room)),
        ..Reuse::default()
    }
}

fn taking(earlier: &Path, keep: Option<PathBuf>) -> Reuse<'static> {
    let want = header(&Params::new());
    Reuse {
        earlier: Some(Earlier::open(earlier, &want).unwrap()),
        keep: keep.map(|p| keep_to(&p, true, None)),
        ..Reuse::default()
    }
}

/// The files removed after the first run: a run that still finds their
/// pairs took their lines from the line sets, in one set and in groups,
/// and writes the same line sets again.
#[test]
fn a_rerun_takes_the_earlier_lines_and_finds_the_same_pairs() {
    let t = tempfile::tempdir().unwrap();
    let files = catalogs(t.path());
    let first_sets = t.path().join("lines.tsv");
    let (first, pairs) = run(&files, 1 << 30, &keeping(&first_sets));
    assert_eq!((first.contents, first.taken, pairs.len()), (12, 0, 15));
    for e in &files {
        std::fs::remove_file(std::str::from_utf8(&e.path).unwrap()).unwrap();
    }
    let (gone, none) = run(&files, 1 << 30, &Reuse::default());
    assert_eq!((gone.unreadable, none.len()), (12, 0), "the files are gone");
    // 256 KiB: the contents are joined in groups (they do not fit).
    for memory in [1 << 30, 256 << 10] {
        let again_sets = t.path().join(format!("again-{memory}.tsv"));
        let (again, same) = run(
            &files,
            memory,
            &taking(&first_sets, Some(again_sets.clone())),
        );
        assert_eq!(same, pairs, "{memory}");
        assert_eq!(
            (again.unreadable, again.taken),
            (0, 12),
            "{memory}: {again:?}"
        );
        assert_eq!(memory > 1 << 20, again.passes == 1, "{again:?}");
        assert_eq!(
            std::fs::read(&again_sets).unwrap(),
            std::fs::read(&first_sets).unwrap(),
            "{memory}"
        );
    }
}

/// A content that changed since is read from its file, the others taken:
/// the pairs of a run from scratch on the changed files.
#[test]
fn a_changed_content_is_read_and_the_others_are_taken() {
    let t = tempfile::tempdir().unwrap();
    let mut files = catalogs(t.path());
    let sets = t.path().join("lines.tsv");
    run(&files, 1 << 30, &keeping(&sets));
    // File 7 takes the translations of 0-5: it joins their pairs.
    let path = std::str::from_utf8(&files[7].path).unwrap().to_string();
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(" 7\"", " 0\"");
    std::fs::write(&path, &text).unwrap();
    files[7] = super::super::tests::entry_at(7, Path::new(&path));
    files[7].content = 1 << 100;
    let (fresh, want) = run(&files, 1 << 30, &Reuse::default());
    assert_eq!(want.len(), 21, "{want:?}");
    let (again, pairs) = run(&files, 1 << 30, &taking(&sets, None));
    assert_eq!(pairs, want);
    assert_eq!((again.taken, again.unreadable), (11, 0), "{again:?}");
    assert_eq!(again.candidates, fresh.candidates);
}

/// Line sets written under other settings are refused before any is
/// taken; a broken line or a missing end stops the taking there, the
/// files after it are read, and the pairs are the same.
#[test]
fn line_sets_under_other_settings_or_broken_are_not_trusted() {
    let t = tempfile::tempdir().unwrap();
    let files = catalogs(t.path());
    let sets = t.path().join("lines.tsv");
    let plain = keeping_within(&sets, false, None);
    let (_, want) = run(&files, 1 << 30, &plain);
    let other = header(&Params::new().with("avg", 200));
    let err = Earlier::open(&sets, &other).unwrap_err();
    assert!(
        err.contains("written under other settings") && err.contains("avg"),
        "{err}"
    );
    let text = std::fs::read_to_string(&sets).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 14, "header, 12 sets, trailer");
    let cut = &lines[7][..40];
    let broken = [
        // A set's line cut short in the middle of the file.
        [&lines[..7], &[cut], &lines[8..]].concat(),
        // The end lost: every set is there, the trailer is missing.
        lines[..13].to_vec(),
    ];
    for (n, l) in broken.iter().enumerate() {
        let path = t.path().join(format!("broken-{n}.tsv"));
        std::fs::write(&path, l.join("\n") + "\n").unwrap();
        let (st, pairs) = run(&files, 1 << 30, &taking(&path, None));
        assert_eq!(pairs, want, "{n}");
        assert_eq!(st.unreadable, 0, "{n}");
        let taken = if n == 0 { 6 } else { 12 };
        assert_eq!(st.taken, taken, "{n}: {st:?}");
    }
}

/// The sets of one size are held within an eighth of the line source's
/// memory: six catalogs of one size (~6.5 KB of lines each) do not fit in
/// the eighth of 256 KiB, so the ones past it are read from their files,
/// and the pairs are the same.
#[test]
fn the_sets_of_one_size_past_the_memory_are_read_from_their_files() {
    let t = tempfile::tempdir().unwrap();
    let files = catalogs_of(t.path(), false);
    let sets = t.path().join("lines.tsv");
    let (_, want) = run(&files, 1 << 30, &keeping(&sets));
    let (all, pairs) = run(&files, 1 << 30, &taking(&sets, None));
    assert_eq!((pairs.len(), all.taken), (15, 12));
    let (some, pairs) = run(&files, 256 << 10, &taking(&sets, None));
    assert_eq!(pairs, want);
    assert!((6..12).contains(&some.taken), "{some:?}");
    assert_eq!(some.unreadable, 0);
}

/// Line sets past their room are given up, in one set and in groups (a
/// stale file of the name removed too), with the same pairs; within it
/// they are written. The room bounds what is on disk, compressed.
#[test]
fn line_sets_past_their_room_are_not_kept() {
    let t = tempfile::tempdir().unwrap();
    let files = catalogs(t.path());
    let sets = t.path().join("lines.tsv");
    let (all, pairs) = run(&files, 1 << 30, &keeping(&sets));
    assert_eq!(all.kept, Some(Kept::Written));
    let size = std::fs::metadata(&sets).unwrap().len();
    for memory in [1 << 30, 256 << 10] {
        for (room, kept) in [(size - 1, Kept::OverRoom(size - 1)), (size, Kept::Written)] {
            let out = t.path().join("again.tsv");
            std::fs::write(&out, "an earlier run's\n").unwrap();
            let (st, same) = run(&files, memory, &keeping_within(&out, true, Some(room)));
            assert_eq!((st.kept, &same), (Some(kept), &pairs), "{memory} {room}");
            match kept {
                Kept::Written => {
                    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&sets).unwrap())
                }
                Kept::OverRoom(_) => assert!(!out.exists(), "{memory}: removed"),
            }
        }
    }
    // Text, a room far below its size: nothing kept either.
    let out = t.path().join("small.tsv");
    assert_eq!(
        run(&files, 1 << 30, &keeping_within(&out, false, Some(10)))
            .0
            .kept,
        Some(Kept::OverRoom(10))
    );
    assert!(!out.exists());
}
