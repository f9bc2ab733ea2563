//! Templates end to end (paper section 4): a repository where 200 files
//! share a long preamble and a few pairs are truly near-duplicates. Before
//! marking, one big clique flagged as a likely template; after marking it
//! once with fsim-template, exactly the true pairs, with sizes and
//! percentages of the payload in analyze, verify and report alike. A nested
//! template (a footer in half of them) needs a second round, appended to
//! the same templates file or given as a second one.

use crate::common;
use crate::common::template_repo;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use template_repo::{flagged, mark, text};

/// The true near-duplicate pairs (file numbers of the templated files).
const TRUE_PAIRS: [(usize, usize); 3] = [(0, 1), (2, 3), (4, 5)];

/// 200 files `t/docNNN.txt` = preamble + payload (+ footer for 100..199
/// when `footer`), and 220 unrelated small files `other/` so that the
/// preamble's degree (200) stays under partition's limit (half the files).
fn make_repo(dir: &Path, footer: bool) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("t")).unwrap();
    std::fs::create_dir_all(repo.join("other")).unwrap();
    let preamble = text(1, 400); // ~24 KB
    let foot = text(2, 130); // ~8 KB
    for i in 0..200usize {
        let mut payload = text(1000 + i as u64, 100); // ~6 KB
        if let Some(&(a, _)) = TRUE_PAIRS.iter().find(|p| p.1 == i) {
            // A near-duplicate of file a: one line changed.
            payload = text(1000 + a as u64, 100);
            let mid = payload.len() / 2;
            let nl = mid + payload[mid..].find('\n').unwrap() + 1;
            payload.insert_str(nl, "an edited line in the copy\n");
        }
        let mut body = preamble.clone() + &payload;
        if footer && i >= 100 {
            body += &foot;
        }
        std::fs::write(repo.join(format!("t/doc{i:03}.txt")), body).unwrap();
    }
    for i in 0..220u64 {
        std::fs::write(
            repo.join(format!("other/o{i:03}.txt")),
            text(50_000 + i, 15),
        )
        .unwrap();
    }
    repo
}

fn true_pairs(repo: &Path) -> BTreeSet<(String, String)> {
    TRUE_PAIRS
        .iter()
        .map(|&(a, b)| {
            let p = |i: usize| repo.join(format!("t/doc{i:03}.txt")).display().to_string();
            (p(a), p(b))
        })
        .collect()
}

/// Link paths of every cluster.
fn links(report: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for c in report["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            out.insert((
                l["a"].as_str().unwrap().to_string(),
                l["b"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// partition (with templates) .. report, in `work`; returns the json report.
fn rerun(work: &Path, templates: &[&Path]) -> Value {
    let tpl: Vec<String> = templates
        .iter()
        .flat_map(|t| ["--templates".to_string(), t.display().to_string()])
        .collect();
    rest_of_pipeline(work, &tpl)
}

#[test]
fn template_marked_once_leaves_the_true_pairs() {
    let t = tempfile::tempdir().unwrap();
    let repo = make_repo(t.path(), false);
    let work = t.path().join("work");
    let before = pipeline(&repo, &work, &[]);
    // One big clique of the 200 templated files, flagged.
    let clusters = before["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{before:#}");
    assert_eq!(clusters[0]["file_count"], 200);
    assert_eq!(clusters[0]["type"], "clique");
    let (id, n) = flagged(&before);
    assert_eq!(n, 200);

    let tpl = work.join("templates.tsv");
    let msg = mark(&work, &id, &tpl, false);
    assert!(msg.contains("template chunks"), "{msg}");
    let text = std::fs::read_to_string(&tpl).unwrap();
    assert!(
        text.starts_with("#fsim templates v1\tmethod=tttd"),
        "{text}"
    );
    assert!(
        text.contains(&format!("# cluster {id}: 200 files")),
        "{text}"
    );
    assert!(text.contains("t/doc"), "a sample file is named: {text}");

    let after = rerun(&work, &[&tpl]);
    assert_eq!(links(&after), true_pairs(&repo), "{after:#}");
    assert!(after["params"]["template-chunks"].as_str().is_some());
    for c in after["clusters"].as_array().unwrap() {
        assert_eq!(c["likely_template"], false);
        for f in c["files"].as_array().unwrap() {
            // Sizes are payloads: well under the file size.
            let (size, file_size) = (
                f["size"].as_u64().unwrap(),
                f["file_size"].as_u64().unwrap(),
            );
            assert!(size < file_size && size > 4000, "{f}");
        }
        let l = &c["links"][0];
        assert_eq!(l["exact"], true, "verified on the payloads: {l}");
        assert!(l["percent_of_a"].as_f64().unwrap() > 90.0, "{l}");
    }
    // Pairs, verified pairs and report agree on the payload sizes.
    let pairs = String::from_utf8(crate::common::read_records(&work.join("pairs.tsv"))).unwrap();
    let verified =
        String::from_utf8(crate::common::read_records(&work.join("verified.tsv"))).unwrap();
    assert!(pairs.lines().next().unwrap().contains("templates="));
    let sizes = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split('\t').take(4).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(sizes(&pairs), sizes(&verified));

    // Verify refuses pairs analysed with templates when not given them.
    let mut c = fsim("fsim-verify");
    c.args(["-q", "--files"])
        .arg(work.join("files.tsv"))
        .arg(work.join("pairs.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("give the same --templates"), "{err}");
}

#[test]
fn nested_template_takes_a_second_round() {
    let t = tempfile::tempdir().unwrap();
    let repo = make_repo(t.path(), true);
    let work = t.path().join("work");
    let before = pipeline(&repo, &work, &[]);
    let (id, n) = flagged(&before);
    assert_eq!(n, 200);
    let tpl = work.join("templates.tsv");
    mark(&work, &id, &tpl, false);
    // Round two: the footer shared by files 100..199 is what is left.
    let mid = rerun(&work, &[&tpl]);
    let (id2, n2) = flagged(&mid);
    assert_eq!(n2, 100);
    // A second templates file...
    let tpl2 = work.join("templates2.tsv");
    mark(&work, &id2, &tpl2, false);
    // ... or the same section appended to the first.
    mark(&work, &id2, &tpl, true);
    let appended = std::fs::read_to_string(&tpl).unwrap();
    assert_eq!(appended.matches("#fsim templates v1").count(), 2);

    let two_files = rerun(&work, &[&tpl2, &tpl]);
    let part_two = std::fs::read(work.join("partition.tsv")).unwrap();
    assert_eq!(links(&two_files), true_pairs(&repo), "{two_files:#}");
    let one_file = rerun(&work, &[&tpl]);
    assert_eq!(links(&one_file), true_pairs(&repo));
    // The same set of chunks, whatever the files that hold it.
    assert_eq!(std::fs::read(work.join("partition.tsv")).unwrap(), part_two);
}

/// The likely-template test within any budget, in one read of the links:
/// 8,000 clusters of 5 files, most of them candidates (nearly
/// cliques), with a `--memory` that the model alone is over. Each
/// candidate was read alone when none fit, by narrowing a histogram over
/// the whole pairs file a few times a cluster: quadratic (here minutes, at
/// a million files and `--memory 128M` more than 20 minutes). Now the
/// candidates' figures are sorted by cluster, and the report is the same
/// as with the budget that holds them.
#[test]
fn likely_templates_of_many_clusters_in_one_read_at_any_budget() {
    use fsim::formats::{FileEntry, FileType};
    let t = tempfile::tempdir().unwrap();
    let clusters = 8_000u32;
    let files: Vec<FileEntry> = (0..clusters * 5)
        .map(|id| FileEntry {
            id,
            size: 1000,
            mtime_s: 1,
            mtime_ns: 0,
            content: (id as u128 + 1) * 0x9e37_79b9_7f4a_7c15,
            ftype: FileType::Text,
            view: fsim::formats::FileView::raw(1000),
            path: format!("c{:05}/f{}.txt", id / 5, id % 5).into_bytes(),
        })
        .collect();
    let mut pairs = Vec::new();
    for c in 0..clusters {
        for i in 0..5 {
            for j in i + 1..5 {
                let d = (j - i) as u64;
                // A template (uniform links), a chain of versions (closer
                // relatives), a template with a link missing (90 % of a
                // clique), versions of one file (uniform, nearly all of
                // each file), a chain (no candidate).
                let common = match c % 5 {
                    0 => Some(700),
                    1 => Some(950 - 100 * (d - 1)),
                    2 => ((i, j) != (0, 4)).then_some(600),
                    3 => Some(920),
                    _ => (d == 1).then_some(800),
                };
                if let Some(common) = common {
                    pairs.push((c * 5 + i, c * 5 + j, 1000, 1000, common));
                }
            }
        }
    }
    std::fs::write(t.path().join("files.tsv"), file_table(&files)).unwrap();
    std::fs::write(t.path().join("pairs.tsv"), pairs_file(&pairs)).unwrap();
    drop((files, pairs));
    let report = |memory: Option<&str>| {
        let mut c = fsim("fsim-report");
        c.current_dir(t.path())
            .args(["--files", "files.tsv", "--format", "json", "-q"])
            .args(["--tmpdir", ".", "pairs.tsv"]);
        if let Some(m) = memory {
            c.args(["--memory", m]);
        }
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = c.spawn().unwrap();
        let mut out = Vec::new();
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            std::io::Read::read_to_end(&mut stdout, &mut out).unwrap();
            out
        });
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed().as_secs() > 60 {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!(
                    "fsim-report --memory {}: over 60 s (one read of the links takes under 1 s)",
                    memory.unwrap_or("256M")
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        String::from_utf8(reader.join().unwrap()).unwrap()
    };
    let all = report(None);
    let small = report(Some("64"));
    let j: Value = serde_json::from_str(&all).unwrap();
    assert_eq!(j["summary"]["clusters"], clusters);
    assert_eq!(j["summary"]["likely_templates"], 2 * clusters / 5);
    assert!(all == small, "the same report at --memory 64");
}

/// A re-run's partition of the changed chunks alone (`changed-only=` in
/// its trailer) holds the cluster's files only in part: fsim-template
/// refuses it, naming the line, and writes nothing.
#[test]
fn a_partition_of_the_changed_chunks_alone_makes_no_template() {
    let t = tempfile::tempdir().unwrap();
    let repo = make_repo(t.path(), false);
    let work = t.path().join("work");
    let before = pipeline(&repo, &work, &[]);
    let (id, _) = flagged(&before);
    let text = std::fs::read_to_string(work.join("partition.tsv")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| match l.starts_with("#end partition") {
            true => format!("{l}\tchanged-only=7"),
            false => l.to_string(),
        })
        .collect();
    let at = lines.iter().position(|l| l.starts_with("#end")).unwrap() + 1;
    std::fs::write(work.join("partition.tsv"), lines.join("\n") + "\n").unwrap();
    let out = t.path().join("templates.tsv");
    let mut c = fsim("fsim-template");
    c.args(["--cluster", &id, "--report"])
        .arg(work.join("report.json"))
        .arg("--files")
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(&out)
        .arg(work.join("partition.tsv"));
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "partition.tsv:{at}: a re-run's records of the changed chunks alone"
        )),
        "{err}"
    );
    assert!(!out.exists());
}
