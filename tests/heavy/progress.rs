//! Progress on a real terminal: fsim-chunk, fsim-sort and
//! fsim-analyze run with stderr on a pseudo-terminal (util-linux `script`)
//! and their input fed through a pipe that pauses half-way, so the bar is
//! redrawn while the stage waits and must show the work done so far (files,
//! bytes, bins, records). Then the same stages with stderr to a pipe, with
//! `-q` and with `FSIM_PROGRESS=0`: nothing but the summary line (or
//! nothing at all with `-q`). The installed `fsim FOLDER` likewise: bars
//! on a terminal, summaries in a pipe.
//!
//! Needs `script` (util-linux, in every Debian); without it the terminal
//! tests print a skip line and pass, except under CI (`CI` set).

use crate::common;

use common::*;
use indicatif::HumanBytes;
use std::path::Path;
use std::process::Command;

/// Is `script` there? Panics under CI when it is not.
fn have_script() -> bool {
    let ok = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` (util-linux) is needed for the progress tests under CI"
        );
        println!("SKIP: `script` (util-linux) is not installed");
    }
    ok
}

/// Run `sh -c cmd` in `dir` with its output on a pseudo-terminal; what the
/// terminal received. The stages' data outputs go to files (`-o`).
fn on_terminal(cmd: &str, dir: &Path, env: &[(&str, &str)]) -> String {
    let mut c = Command::new("script");
    c.args(["-qec", cmd, "/dev/null"])
        .current_dir(dir)
        .env("TERM", "xterm")
        .env_remove("FSIM_PROGRESS");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = run_ok(c, None);
    String::from_utf8(out.stdout).expect("terminal output is UTF-8")
}

/// Run `sh -c cmd` in `dir` with stderr to a pipe; its stderr.
fn on_pipe(cmd: &str, dir: &Path) -> String {
    let mut c = Command::new("sh");
    c.args(["-c", cmd])
        .current_dir(dir)
        .env_remove("FSIM_PROGRESS");
    String::from_utf8(run_ok(c, None).stderr).unwrap()
}

/// The lines drawn on the terminal: escape sequences removed, split at
/// carriage returns and newlines, trailing blanks trimmed, empty ones
/// dropped, in order.
fn frames(raw: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            // Parameters, then one final byte in '@'..='~'.
            for f in chars.by_ref() {
                if ('@'..='~').contains(&f) {
                    break;
                }
            }
            plain.push('\n');
        } else {
            plain.push(c);
        }
    }
    plain
        .split(['\r', '\n'])
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A stage's progress frames (its prefix followed by a spinner or a bar,
/// not a digit as in the summary) and its last frame.
fn split<'a>(frames: &'a [String], prog: &str) -> (Vec<&'a str>, &'a str) {
    let prefix = format!("{prog}: ");
    let progress = frames
        .iter()
        .filter_map(|f| f.strip_prefix(&prefix))
        .filter(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    (progress, frames.last().map(String::as_str).unwrap_or(""))
}

/// The summary is the last thing on the terminal, after the bar was
/// cleared from its line, and the only frame that is one.
fn ends_with_summary(raw: &str, frames: &[String], summary_start: &str) {
    let last = frames.last().expect("something on the terminal");
    assert!(
        last.starts_with(summary_start),
        "last line is not the summary: {last:?}\n{frames:#?}"
    );
    assert_eq!(
        frames
            .iter()
            .filter(|f| f.starts_with(summary_start))
            .count(),
        1
    );
    let at = raw.rfind(summary_start).unwrap();
    assert!(
        raw[..at].ends_with("\r\x1b[2K") || raw[..at].ends_with("\x1b[2K"),
        "the bar is not cleared before the summary: {:?}",
        &raw[at.saturating_sub(80)..at]
    );
}

/// Some frame of `prog` is a bar over `size` bytes with an ETA (its
/// inputs' size known).
fn has_bar_over(frames: &[String], prog: &str, size: u64) {
    let (progress, _) = split(frames, prog);
    let total = format!("/{}, ", HumanBytes(size));
    assert!(
        progress
            .iter()
            .any(|p| p.starts_with('[') && p.contains(&total) && p.contains("ETA")),
        "no bar over {size} bytes: {frames:#?}"
    );
}

/// The count before `unit` in a progress frame (`..., 16 files, ...`).
fn count_of(frame: &str, unit: &str) -> Option<u64> {
    let end = frame.find(&format!(" {unit}"))?;
    let start = frame[..end].rfind(' ').map_or(0, |i| i + 1);
    frame[start..end].replace(',', "").parse().ok()
}

/// The sample repository and its file list, sorted.
fn repo_and_list(dir: &Path) -> usize {
    gen_repo(dir, &[]);
    on_pipe("find repo -type f | sort > list.txt", dir);
    std::fs::read_to_string(dir.join("list.txt"))
        .unwrap()
        .lines()
        .count()
}

/// The sample repository, run through the pipeline in `dir/work`.
fn analysed(dir: &Path) -> std::path::PathBuf {
    let (repo, _) = gen_repo(dir, &[]);
    let work = dir.join("work");
    pipeline(&repo, &work, &[]);
    work
}

#[test]
fn chunk_shows_files_and_bytes_done_on_a_terminal() {
    if !have_script() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let total = repo_and_list(d);
    assert!(total > 40, "{total}");
    let chunk = bin("fsim-chunk");
    let cmd = format!(
        "(head -n 20 list.txt; sleep 1; tail -n +21 list.txt) | {} --files-from - --files-out files.tsv -o chunks.tsv",
        chunk.display()
    );
    let raw = on_terminal(&cmd, d, &[]);
    let f = frames(&raw);
    let (progress, _) = split(&f, "fsim-chunk");
    // While the list pauses, the bar shows some of the files done, with
    // their bytes and a rate: a spinner (the total is unknown).
    let midway: Vec<&&str> = progress
        .iter()
        .filter(|p| count_of(p, "files").is_some_and(|n| n > 0 && (n as usize) < total))
        .collect();
    assert!(
        !midway.is_empty(),
        "no frame with part of the files: {f:#?}"
    );
    for p in &midway {
        assert!(
            !p.contains(" 0 B,") && p.contains("/s, "),
            "bytes and rate: {p}"
        );
    }
    ends_with_summary(&raw, &f, &format!("fsim-chunk: {total} files, "));

    // One file root: its size is the total, with an ETA.
    let one = std::fs::read_to_string(d.join("list.txt")).unwrap();
    let one = one.lines().next().unwrap();
    let size = std::fs::metadata(d.join(one)).unwrap().len();
    let raw = on_terminal(
        &format!("{} --files-out f1.tsv -o c1.tsv {one}", chunk.display()),
        d,
        &[],
    );
    let f = frames(&raw);
    has_bar_over(&f, "fsim-chunk", size);
    ends_with_summary(&raw, &f, "fsim-chunk: 1 files, ");
}

#[test]
fn sort_shows_bytes_read_then_records_merged_on_a_terminal() {
    if !have_script() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    repo_and_list(d);
    on_pipe(
        &format!(
            "{} -q --files-from list.txt --files-out files.tsv -o chunks.tsv",
            bin("fsim-chunk").display()
        ),
        d,
    );
    let sort = bin("fsim-sort");
    let raw = on_terminal(
        &format!(
            "(head -c 100000 chunks.tsv; sleep 1; tail -c +100001 chunks.tsv) | {} -o sorted.tsv",
            sort.display()
        ),
        d,
        &[],
    );
    let f = frames(&raw);
    let (progress, summary) = split(&f, "fsim-sort");
    // While the input pauses: the 100000 bytes read so far.
    let cut = HumanBytes(100_000).to_string();
    assert!(
        progress.iter().any(|p| p.contains(&format!(" {cut}, "))),
        "no frame with {cut} read: {f:#?}"
    );
    // Then the merge, over the records the summary counts.
    let records: u64 = summary
        .strip_prefix("fsim-sort: ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("summary: {summary:?}"));
    let of = format!("/{} records", indicatif::HumanCount(records));
    assert!(
        progress
            .iter()
            .any(|p| p.starts_with("merging: [") && p.contains(&of)),
        "no merge bar over {records} records: {f:#?}"
    );
    ends_with_summary(
        &raw,
        &f,
        &format!("fsim-sort: {records} records ({records} sorted, 0 resumed), "),
    );

    // From a file: its size is the total, with an ETA.
    let size = std::fs::metadata(d.join("chunks.tsv")).unwrap().len();
    let raw = on_terminal(&format!("{} -o s2.tsv chunks.tsv", sort.display()), d, &[]);
    has_bar_over(&frames(&raw), "fsim-sort", size);
}

#[test]
fn analyze_shows_bins_done_of_those_announced_on_a_terminal() {
    if !have_script() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let work = analysed(d);
    // Small bins, so there are several.
    let mut c = fsim("fsim-binpack");
    c.args(["-q", "--capacity", "4K", "-o"])
        .arg(work.join("bins.tsv"))
        .arg(work.join("partition.tsv"));
    run_ok(c, None);
    let bins = std::fs::read(work.join("bins.tsv")).unwrap();
    let text = String::from_utf8_lossy(&bins);
    let announced: u64 = text
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .find_map(|kv| kv.strip_prefix("bins="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(announced >= 4, "{announced} bins");
    // Cut the input just after the third bin's `#bin` line: bins 1 and 2
    // are done while it pauses.
    let third = text.find("\n#bin\t3\t").unwrap() + 1;
    let cut = third + text[third..].find('\n').unwrap() + 1;
    let cmd = format!(
        "(head -c {cut} work/bins.tsv; sleep 1; tail -c +{} work/bins.tsv) | {} --no-line-source -o pairs.tsv -",
        cut + 1,
        bin("fsim-analyze").display()
    );
    let raw = on_terminal(&cmd, d, &[]);
    let f = frames(&raw);
    let (progress, _) = split(&f, "fsim-analyze");
    let want = format!(" {}, 2/{announced} bins, ", HumanBytes(cut as u64));
    assert!(
        progress.iter().any(|p| p.contains(&want)),
        "no frame with {want:?}: {f:#?}"
    );
    ends_with_summary(&raw, &f, &format!("fsim-analyze: {announced} bins ("));
}

#[test]
fn nothing_but_the_summary_on_a_pipe_or_when_quiet() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let total = repo_and_list(d);
    let chunk = bin("fsim-chunk").display().to_string();
    let sort = bin("fsim-sort").display().to_string();
    let analyze = bin("fsim-analyze").display().to_string();
    let cmd = format!(
        "{chunk} --files-from list.txt --files-out files.tsv -o chunks.tsv && \
         {sort} -o sorted.tsv chunks.tsv && \
         {} -q --files files.tsv -o partition.tsv sorted.tsv && \
         {} -q -o bins.tsv partition.tsv && \
         {analyze} --no-line-source -o pairs.tsv bins.tsv",
        bin("fsim-partition").display(),
        bin("fsim-binpack").display()
    );
    // stderr to a pipe: three summary lines, nothing drawn (fsim-analyze
    // without its line source, which adds a line of its own).
    let err = on_pipe(&cmd, d);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].starts_with(&format!("fsim-chunk: {total} files, ")));
    assert!(lines[1].starts_with("fsim-sort: "));
    assert!(lines[2].starts_with("fsim-analyze: "));
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    if !have_script() {
        return;
    }
    // On a terminal with FSIM_PROGRESS=0: the same three lines.
    let raw = on_terminal(&cmd, d, &[("FSIM_PROGRESS", "0")]);
    assert!(!raw.contains('\x1b'), "{raw:?}");
    assert_eq!(frames(&raw).len(), 3, "{raw:?}");
    // On a terminal with -q: nothing at all.
    let quiet = format!(
        "{chunk} -q --files-from list.txt --files-out files.tsv -o chunks.tsv && \
         {sort} -q -o sorted.tsv chunks.tsv && {analyze} -q -o pairs.tsv bins.tsv"
    );
    assert_eq!(on_terminal(&quiet, d, &[]), "");
}

#[test]
fn binpack_prints_its_plan_above_the_bar() {
    if !have_script() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    analysed(d);
    // Small bins: warnings about oversized components, a long plan.
    let cmd = format!(
        "{} --capacity 4K -o bins.tsv work/partition.tsv",
        bin("fsim-binpack").display()
    );
    let piped = on_pipe(&cmd, d);
    let raw = on_terminal(&cmd, d, &[]);
    let f = frames(&raw);
    // Every line the pipe got, warnings and plan, is on the terminal whole,
    // in order, none drawn over by the bar.
    let lines: Vec<String> = piped.lines().map(|l| l.trim_end().to_string()).collect();
    assert!(lines.iter().any(|l| l.contains("warning")), "{piped}");
    assert!(
        lines.iter().any(|l| l.trim_start().starts_with("total")),
        "{piped}"
    );
    let plan = &lines[..lines.len() - 1];
    let at = f
        .iter()
        .position(|x| *x == plan[0])
        .unwrap_or_else(|| panic!("{:?} not on the terminal: {f:#?}", plan[0]));
    assert_eq!(&f[at..at + plan.len()], plan, "{f:#?}");
    let summary = lines.last().unwrap().split(", ").next().unwrap();
    ends_with_summary(&raw, &f, &format!("{summary}, "));
}

/// The installed command: `fsim FOLDER` on a terminal draws the
/// stages' bars (make report's `QUIET=`), and in a pipe only their summary
/// lines, its own closing line last.
#[test]
fn the_fsim_command_shows_progress_on_a_terminal() {
    if !have_script() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let fsim = bin("fsim");
    let cmd = |work: &str| {
        format!(
            "'{}' WORK={work} JOBS=1 '{}'",
            fsim.display(),
            repo.display()
        )
    };
    let sort_input = |work: &str| std::fs::metadata(tmp.path().join(work).join("chunks.tsv"));

    let raw = on_terminal(&cmd("tty"), tmp.path(), &[]);
    let frames = frames(&raw);
    has_bar_over(&frames, "fsim-sort", sort_input("tty").unwrap().len());
    let last = frames.last().map(String::as_str).unwrap_or_default();
    assert_eq!(last, "fsim: reports in tty: report.txt report.json");

    let piped = on_pipe(&cmd("pipe"), tmp.path());
    assert!(!piped.contains("ETA"), "a bar in a pipe: {piped}");
    let summary = |l: &str| {
        l.strip_prefix("fsim-sort: ")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    assert!(piped.lines().any(summary), "no fsim-sort summary: {piped}");
    assert!(
        piped.ends_with("fsim: reports in pipe: report.txt report.json\n"),
        "{piped}"
    );
}
