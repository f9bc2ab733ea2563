//! fsim-eval end to end on a tiny generated folder: CSV columns, i = 0 is
//! identity, similarity falls with the number of edits for every method,
//! and the figures and report are written.
use crate::common;

use common::{fsim, run_fail, run_ok};
use std::collections::BTreeMap;

/// Words from a seeded LCG: distinct documents share no long runs.
fn text(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (x >> 33) as usize;
        let n = 2 + r % 8;
        for k in 0..n {
            out.push(b"etaoinshrdlucmfwypvbgkjqxz"[(r >> (3 + k * 2)) % 26]);
        }
        out.push(if r.is_multiple_of(13) { b'\n' } else { b' ' });
    }
    out
}

type Key = (String, String, String, String);

fn averages(csv: &str) -> BTreeMap<Key, Vec<(usize, f64)>> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("variant,method,n,window,i,docs,avg_similarity")
    );
    let mut m: BTreeMap<Key, Vec<(usize, f64)>> = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 7, "{l}");
        assert_eq!(f[5], "5", "{l}");
        m.entry((f[0].into(), f[1].into(), f[2].into(), f[3].into()))
            .or_default()
            .push((f[4].parse().unwrap(), f[6].parse().unwrap()));
    }
    m
}

#[test]
fn eval_on_tiny_folder() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    for k in 0..7u64 {
        let sub = docs.join(format!("d{}", k % 2));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("doc{k}.txt")),
            text(3000 + 700 * k as usize, k),
        )
        .unwrap();
    }
    // Not candidates: binary, too small, an exact copy.
    std::fs::write(docs.join("bin.dat"), [0u8, 1, 2].repeat(2000)).unwrap();
    std::fs::write(docs.join("tiny.txt"), b"tiny").unwrap();
    std::fs::write(docs.join("copy.txt"), text(3000, 0)).unwrap();
    let out = dir.path().join("out");
    let md = dir.path().join("evaluation.md");
    let run = |out: &std::path::Path| {
        let mut c = fsim("fsim-eval");
        c.args(["-q", "--count", "5", "--max-i", "3", "--min-size", "1K"])
            .args(["--windows", "20,40", "--no-timing", "-j", "2"])
            // A long word: three edits must show under every sampler.
            .args(["--word", "supercalifragilisticexpialidocious-and-more"])
            .arg("--docs")
            .arg(&docs)
            .arg("-o")
            .arg(out)
            .arg("--markdown")
            .arg(&md);
        run_ok(c, None);
    };
    run(&out);

    averages_fall_with_the_edits(&out);
    let docs_csv = std::fs::read_to_string(out.join("documents.csv")).unwrap();
    assert_eq!(docs_csv.lines().next(), Some("id,bytes,path"));
    assert_eq!(docs_csv.lines().count(), 6);
    assert!(!docs_csv.contains("bin.dat") && !docs_csv.contains("tiny.txt"));
    assert!(
        !(docs_csv.contains("copy.txt") && docs_csv.contains("doc0.txt")),
        "an exact copy is not distinct"
    );
    let summary = std::fs::read_to_string(out.join("pairs_summary.csv")).unwrap();
    assert!(summary
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(3) == Some("10")));
    let per = std::fs::read_to_string(out.join("per_document.csv")).unwrap();
    assert_eq!(
        per.lines().next(),
        Some("variant,method,n,window,i,doc,bytes,similarity")
    );
    for f in [
        "fig2-mod_100.svg",
        "fig4-methods-cdf.svg",
        "fig6a-sketch.svg",
        "fig7b-delete.svg",
    ] {
        let svg = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(svg.contains("<svg") && svg.contains("</svg>"), "{f}");
    }
    assert!(!out.join("timing.csv").exists());
    let report = std::fs::read_to_string(&md).unwrap();
    assert!(report.contains("| Mod_100, w = 100"));
    assert!(
        report.contains("](out/fig7a-insert.svg)"),
        "links relative to the report"
    );

    // Deterministic: a second run writes the same bytes.
    let out2 = dir.path().join("out2");
    run(&out2);
    for f in [
        "average.csv",
        "per_document.csv",
        "pairs_cdf.csv",
        "fig2-mod_100.svg",
    ] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(out2.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// Every method's average similarity is 1 at i = 0 and falls with the
/// number of edits.
fn averages_fall_with_the_edits(out: &std::path::Path) {
    let avg = averages(&std::fs::read_to_string(out.join("average.csv")).unwrap());
    for want in ["mod", "min", "sketch", "bsw-min", "sif", "tttd", "exact"] {
        assert!(avg.keys().any(|k| k.1 == want), "{want} missing");
    }
    assert!(avg.keys().any(|k| k.0 == "delete"));
    for (k, pts) in &avg {
        assert_eq!(pts[0], (0, 1.0), "{k:?}: i = 0 must be identity");
        assert!(
            pts.windows(2).all(|w| w[1].1 <= w[0].1 + 1e-12),
            "{k:?}: {pts:?}"
        );
        let last = pts.last().unwrap();
        assert_eq!(last.0, 3, "{k:?}");
        assert!(last.1 < 1.0, "{k:?}: no decrease: {pts:?}");
    }
    // The sweep window has insertions only, at i = 0..3.
    assert!(avg.keys().filter(|k| k.3 == "40").all(|k| k.0 == "insert"));
}

#[test]
fn eval_too_few_documents() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), text(20_000, 1)).unwrap();
    let mut c = fsim("fsim-eval");
    c.args(["-q", "--count", "3", "--no-timing", "--docs"])
        .arg(dir.path())
        .arg("-o")
        .arg(dir.path().join("out"));
    let err = run_fail(c, None);
    assert!(
        err.starts_with("fsim-eval: ") && err.contains("3 needed"),
        "{err}"
    );
}
