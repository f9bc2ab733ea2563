//! The file table checks its own lines: its trailer's `table-digest=` is a
//! digest of its records, so a files.tsv whose paths or content hashes were
//! damaged (one byte, still well-formed) is refused by every reader with a
//! one-line `FILE:LINE: ...` error and exit status 2, never a panic, and
//! never a report that names other files.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;

/// Replace the byte at `at` with another byte of the same kind, so the line
/// still parses: a hex digit with another hex digit, a letter with another
/// letter, a digit with another digit, anything else printable with `_`.
fn mutate(b: u8) -> u8 {
    match b {
        b'0'..=b'8' | b'a'..=b'e' => b + 1,
        b'9' => b'0',
        b'f' => b'a',
        b'g'..=b'y' | b'A'..=b'Y' => b + 1,
        b'z' => b'a',
        b'Z' => b'A',
        b'_' => b'-',
        _ => b'_',
    }
}

/// Byte offsets to damage: in each sampled record, one in the content hash
/// (field 4) and one in the path (field 6).
fn targets(table: &[u8], per_field: usize) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut records = Vec::new();
    for line in table.split_inclusive(|&c| c == b'\n') {
        if line[0] != b'#' {
            records.push((start, line.len() - 1));
        }
        start += line.len();
    }
    assert!(records.len() >= 4, "too few records: {}", records.len());
    let step = (records.len() / per_field).max(1);
    for (i, &(at, len)) in records.iter().enumerate().step_by(step).take(per_field) {
        let line = &table[at..at + len];
        let tabs: Vec<usize> = line
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == b'\t')
            .map(|(p, _)| p)
            .collect();
        // Content hash: a digit somewhere in its 32.
        out.push((at + tabs[2] + 1 + (i * 7) % 32, "content hash"));
        // Path: a byte in its last component (after the root folder).
        let path_len = len - tabs[4] - 1;
        out.push((
            at + tabs[4] + 1 + path_len - 1 - (i % path_len.min(6)),
            "path",
        ));
    }
    out
}

fn check_refused(out: std::process::Output, prog: &str, files: &Path, what: &str, at: usize) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{prog} accepted a file table with its {what} damaged at byte {at}: {err}"
    );
    assert!(!err.contains("panicked"), "{prog} panicked: {err}");
    assert_eq!(err.lines().count(), 1, "{prog}: one line expected: {err}");
    let prefix = format!("{prog}: {}:", files.display());
    let rest = err
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{prog}: expected '{prefix}LINE: ...', got {err}"));
    let (line, msg) = rest.split_once(": ").expect("FILE:LINE: message");
    assert!(line.parse::<u64>().is_ok(), "{prog}: no line number: {err}");
    assert!(!msg.trim().is_empty(), "{prog}: empty message: {err}");
}

#[test]
fn damaged_file_tables_are_refused_by_report_and_partition() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(dir.path(), &[]);
    let work = dir.path().join("work");
    pipeline(&repo, &work, &[]);
    let table = std::fs::read(work.join("files.tsv")).unwrap();
    let bad = dir.path().join("bad-files.tsv");
    let mut tried = 0;
    for (at, what) in targets(&table, 12) {
        let mut t = table.clone();
        t[at] = mutate(t[at]);
        assert_ne!(t, table);
        std::fs::write(&bad, &t).unwrap();

        let mut c = Command::new(bin("fsim-report"));
        c.args(["-q", "--format", "text", "--files"])
            .arg(&bad)
            .arg("-o")
            .arg(dir.path().join("report.txt"))
            .arg(work.join("verified.tsv"));
        check_refused(run_raw(c, None), "fsim-report", &bad, what, at);

        let mut c = Command::new(bin("fsim-partition"));
        c.args(["-q", "--files"])
            .arg(&bad)
            .arg("-o")
            .arg(dir.path().join("partition.tsv"))
            .arg(work.join("sorted.tsv"));
        check_refused(run_raw(c, None), "fsim-partition", &bad, what, at);
        assert!(!dir.path().join("partition.tsv").exists());
        tried += 1;
    }
    assert!(tried >= 20, "{tried}");

    // The undamaged table still goes through.
    let mut c = Command::new(bin("fsim-report"));
    c.args(["-q", "--format", "text", "--files"])
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(dir.path().join("report.txt"))
        .arg(work.join("verified.tsv"));
    run_ok(c, None);
}

#[test]
fn a_file_table_without_its_digest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(dir.path(), &[]);
    let work = dir.path().join("work");
    pipeline(&repo, &work, &[]);
    let table = std::fs::read_to_string(work.join("files.tsv")).unwrap();
    let cut = table.rfind("\ttable-digest=").unwrap();
    let bad = dir.path().join("old-files.tsv");
    std::fs::write(&bad, format!("{}\n", &table[..cut])).unwrap();
    let mut c = Command::new(bin("fsim-report"));
    c.args(["-q", "--format", "text", "--files"])
        .arg(&bad)
        .arg(work.join("verified.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("expected table-digest="), "{err}");
    // A v1 table (an older fsim's) is named as such.
    let v1 = dir.path().join("v1-files.tsv");
    std::fs::write(&v1, table.replacen("#fsim files v4", "#fsim files v1", 1)).unwrap();
    let mut c = Command::new(bin("fsim-partition"));
    c.args(["-q", "--files"])
        .arg(&v1)
        .arg("-o")
        .arg(dir.path().join("p.tsv"))
        .arg(work.join("sorted.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("written by an older fsim"), "{err}");
}
