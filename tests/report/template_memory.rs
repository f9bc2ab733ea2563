//! fsim-template's memory on a large report.json (run alone in a process
//! of its own, `common::own_process`: `common::run_rss` counts the spawning
//! process's memory, so no other test may hold much beside it).

use crate::common;
use crate::common::template_repo;

use common::*;
use std::path::Path;
use template_repo::{flagged, mark};

/// The templated repository of tests/report/templates.rs, smaller: 60 files of a
/// long preamble and a payload, 70 unrelated ones.
fn make_repo(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("t")).unwrap();
    std::fs::create_dir_all(repo.join("other")).unwrap();
    let preamble = template_repo::text(1, 400);
    for i in 0..60u64 {
        let body = preamble.clone() + &template_repo::text(1000 + i, 100);
        std::fs::write(repo.join(format!("t/doc{i:03}.txt")), body).unwrap();
    }
    for i in 0..70u64 {
        let body = template_repo::text(50_000 + i, 15);
        std::fs::write(repo.join(format!("other/o{i:03}.txt")), body).unwrap();
    }
    repo
}

/// fsim-template reads report.json as it parses it, keeping only the
/// wanted cluster: the json report of a large run is gigabytes (1.25 GB
/// for eight Django releases with their HTML docs, which fsim-template
/// once loaded whole into 8 GB). Here a report with an unwanted cluster of
/// 400,000 files before the wanted one (66 MB): within 40 MB, and the same
/// template chunks as from the report without it.
#[test]
fn template_reads_a_large_report_as_it_parses_it() {
    if !own_process(
        module_path!(),
        "template_reads_a_large_report_as_it_parses_it",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = make_repo(t.path());
    let work = t.path().join("work");
    let before = pipeline(&repo, &work, &[]);
    let (id, _) = flagged(&before);
    let small = work.join("templates.tsv");
    mark(&work, &id, &small, false);
    // Written as it goes: the child's peak RSS counts this process's
    // (common::run_rss), which must stay small.
    let big_report = work.join("big.json");
    {
        use std::io::Write;
        let text = std::fs::read_to_string(work.join("report.json")).unwrap();
        let at = text.find("\"clusters\": [").unwrap() + "\"clusters\": [".len();
        let mut w = std::io::BufWriter::new(std::fs::File::create(&big_report).unwrap());
        w.write_all(&text.as_bytes()[..at]).unwrap();
        w.write_all(b"{\"files\": [").unwrap();
        let entry = format!(
            "{{\"id\": 7, \"path\": \"{}\", \"size\": 1}}",
            "p".repeat(120)
        );
        for i in 0..400_000 {
            if i > 0 {
                w.write_all(b",").unwrap();
            }
            w.write_all(entry.as_bytes()).unwrap();
        }
        w.write_all(b"], \"id\": \"padding\"}, ").unwrap();
        w.write_all(&text.as_bytes()[at..]).unwrap();
        w.flush().unwrap();
    }
    let size = std::fs::metadata(&big_report).unwrap().len();
    assert!(size > 60_000_000, "{size}");
    let out = work.join("big-templates.tsv");
    let mut c = fsim("fsim-template");
    c.args(["--cluster", &id, "--replace", "--report"])
        .arg(&big_report)
        .arg("--files")
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(&out)
        .arg(work.join("partition.tsv"));
    let (ok, kib) = run_rss(c, &work.join("stdout"));
    assert!(ok, "fsim-template failed on the large report");
    assert!(kib < 40 * 1024, "peak RSS {kib} KiB");
    let chunks = |p: &Path| -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    let want = chunks(&small);
    assert!(want.len() > 10, "{want:?}");
    assert_eq!(chunks(&out), want);
}
