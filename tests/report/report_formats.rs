//! fsim-report's HTML and xlsx formats on a generated repository with a
//! hostile file name: escaping of every path and piece of text (without a
//! browser), side-by-side views rebuilt from the files (shared chunks,
//! changed and unreadable files, template chunks apart from shared ones),
//! and the workbook read back.

use crate::common;
use crate::common::hostile_repo;
use crate::common::template_repo;

use common::*;
use hostile_repo::{setup, HOSTILE};
use std::path::{Path, PathBuf};

fn report(work: &Path, format: &str, out: &str, extra: &[&str]) -> PathBuf {
    let target = work.join(out);
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", format, "--files"])
        .arg(work.join("files.tsv"))
        .args(extra)
        .arg("-o")
        .arg(&target)
        .arg(work.join("verified.tsv"));
    run_ok(c, None);
    target
}

/// The JSON data block of the page, parsed.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"fsim-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).expect("data block is JSON")
}

#[test]
fn html_escapes_every_path_and_text() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let html = std::fs::read_to_string(report(&work, "html", "report.html", &[])).unwrap();
    // Neither the name nor the file's text appears as markup anywhere.
    assert!(!html.contains("<img"), "raw <img in the page");
    assert!(!html.contains("alert('text')</script>"));
    assert_eq!(
        html.matches("<script").count(),
        2,
        "only the page's two script tags"
    );
    // No external resource, and every network request is forbidden.
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(html.contains("default-src 'none'"));
    // The data parses back and holds the name as text.
    let d = page_data(&html);
    let c = d["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["files"].to_string().contains(HOSTILE))
        .expect("the hostile file is in a cluster");
    assert_eq!(c["type"], "pair");
    // Its link has a view; both files are shown, chunks shared and not.
    let v = &d["views"][c["links"][0][7].as_u64().expect("a view") as usize];
    let fa = &d["vfiles"][v["a"].as_u64().unwrap() as usize];
    let fb = &d["vfiles"][v["b"].as_u64().unwrap() as usize];
    assert_eq!(fa["status"], "ok");
    assert_eq!(fb["status"], "ok");
    let flags = format!("{}{}", v["flags_a"], v["flags_b"]);
    assert!(flags.contains('1') && flags.contains('0'), "{flags}");
    let text: String = fa["text"]
        .as_array()
        .unwrap()
        .iter()
        .chain(fb["text"].as_array().unwrap())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(text.contains("</script><script>alert('text')</script>"));
    assert!(text.contains("CHANGED LINE"));
}

#[test]
fn html_views_say_when_a_file_changed_or_is_gone() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let repo = t.path().join("repo");
    std::fs::write(repo.join("near-copy.txt"), "now something else\n").unwrap();
    std::fs::remove_file(repo.join(HOSTILE)).unwrap();
    let html = std::fs::read_to_string(report(&work, "html", "report.html", &[])).unwrap();
    let d = page_data(&html);
    let status = |name: &str| {
        d["vfiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name))
            .map(|f| (f["status"].clone(), f["note"].clone()))
            .unwrap()
    };
    let (s, note) = status("near-copy.txt");
    assert_eq!(s, "changed", "{note}");
    let (s, note) = status(HOSTILE);
    assert_eq!(s, "unreadable", "{note}");
    assert!(!html.contains("<img"));
}

#[test]
fn html_views_are_capped() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let html = report(
        &work,
        "html",
        "report.html",
        &["--html-max-views", "1", "--html-text-cap", "1K"],
    );
    let d = page_data(&std::fs::read_to_string(html).unwrap());
    assert_eq!(d["views"].as_array().unwrap().len(), 1);
    let f = &d["vfiles"][0];
    assert_eq!(f["truncated"], true);
    let shown: usize = f["text"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().len())
        .sum();
    assert!(shown <= 1024 + 4, "{shown}");
    assert!(d["views_note"].as_str().unwrap().contains("first 1 links"));
}

/// One file of a side-by-side view: which side, its flags, chunk lengths
/// and page data.
struct Side {
    key: &'static str,
    flags: String,
    lens: Vec<usize>,
    file: serde_json::Value,
}

/// The view of the one link of a templated run and its sides, doc00 first.
fn pair_view(d: &serde_json::Value) -> (serde_json::Value, [Side; 2]) {
    let c = &d["clusters"][0];
    let v = d["views"][c["links"][0][7].as_u64().expect("a view") as usize].clone();
    let side = |key: &'static str| {
        let file = d["vfiles"][v[key].as_u64().unwrap() as usize].clone();
        assert_eq!(file["status"], "ok", "{file}");
        assert_eq!(file["truncated"], false);
        let lens = file["lens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_u64().unwrap() as usize)
            .collect();
        let flags = v[format!("flags_{key}")].as_str().unwrap().to_string();
        Side {
            key,
            flags,
            lens,
            file,
        }
    };
    let (a, b) = (side("a"), side("b"));
    let sides = if a.file["path"].as_str().unwrap().ends_with("doc00.txt") {
        [a, b]
    } else {
        [b, a]
    };
    (v, sides)
}

impl Side {
    /// Bytes of the chunks flagged `flag`.
    fn bytes(&self, flag: char) -> u64 {
        self.flags
            .chars()
            .zip(&self.lens)
            .filter(|(f, _)| *f == flag)
            .map(|(_, &l)| l as u64)
            .sum()
    }
}

#[test]
fn html_views_mark_template_chunks_apart_from_shared_ones() {
    let t = tempfile::tempdir().unwrap();
    let tr = template_repo::setup(t.path());
    let out = t.path().join("report.html");
    let tpl = tr.templates.to_str().unwrap();
    template_repo::html_report(&tr, &["--templates", tpl], &out);
    let d = page_data(&std::fs::read_to_string(&out).unwrap());
    let chunks = d["params"]["template-chunks"].as_str().unwrap();
    assert_eq!(d["templates"]["chunks"], chunks);
    assert_eq!(d["templates"]["digest"], d["params"]["templates"]);
    let note = d["views_note"].as_str().unwrap();
    assert!(
        note.contains(&format!(
            "The analysis ignored {chunks} template chunks (--templates): the views mark them apart"
        )),
        "{note}"
    );
    let (v, sides) = pair_view(&d);
    for s in &sides {
        assert_eq!(s.flags.len(), s.lens.len());
        let text = s.file["text"].as_array().unwrap();
        // Every chunk inside the preamble is a template chunk; none after
        // it is: the template chunks are the preamble up to its last cut.
        let mut start = 0;
        let mut template_text = String::new();
        for ((flag, len), t) in s.flags.chars().zip(&s.lens).zip(text) {
            let end = start + len;
            if end <= tr.preamble.len() {
                assert_eq!(flag, '2', "chunk {start}..{end} of {}", s.file["path"]);
                template_text.push_str(t.as_str().unwrap());
            } else {
                assert_ne!(flag, '2', "chunk {start}..{end} of {}", s.file["path"]);
            }
            start = end;
        }
        assert!(tr.preamble.starts_with(&template_text));
        // Short of the preamble by less than one maximal chunk (276 bytes).
        assert!(template_text.len() + 276 >= tr.preamble.len());
        // The payload is shared but for the edited line's chunks.
        assert!(
            s.flags.contains('1') && s.flags.contains('0'),
            "{}",
            s.flags
        );
        // The byte counts are those of the flags (every chunk is shown).
        assert_eq!(v[format!("template_{}", s.key)], s.bytes('2'));
        assert_eq!(v[format!("shared_{}", s.key)], s.bytes('1'));
    }

    // Without --templates: no template marks, the preamble shows as shared,
    // and the page says why.
    template_repo::html_report(&tr, &[], &out);
    let d = page_data(&std::fs::read_to_string(&out).unwrap());
    assert!(d["templates"].is_null());
    let note = d["views_note"].as_str().unwrap();
    assert!(
        note.contains(&format!(
            "The analysis ignored {chunks} template chunks, but fsim-report was not given them (--templates FILE)"
        )),
        "{note}"
    );
    let (_, [plain, _]) = pair_view(&d);
    assert!(!plain.flags.contains('2'), "{}", plain.flags);
    assert_eq!(plain.bytes('1'), sides[0].bytes('1') + sides[0].bytes('2'));
    assert_eq!(plain.bytes('0'), sides[0].bytes('0'));
}

#[test]
fn report_refuses_templates_the_analysis_did_not_use() {
    let t = tempfile::tempdir().unwrap();
    let tr = template_repo::setup(t.path());
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "json", "--files"])
        .arg(tr.work.join("files.tsv"))
        .arg("--templates")
        .arg(&tr.templates)
        .arg(&tr.before);
    let err = run_fail(c, None);
    assert_eq!(
        err,
        format!(
            "fsim-report: {}: the pairs were made without templates but --templates was given: drop it, or re-run from fsim-partition with it\n",
            tr.before.display()
        )
    );
}

#[test]
fn xlsx_needs_an_output_file() {
    let t = tempfile::tempdir().unwrap();
    let mut c = fsim("fsim-report");
    c.args(["--format", "xlsx", "--files"])
        .arg(t.path().join("files.tsv"))
        .arg(t.path().join("pairs.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("-o FILE"), "{err}");
}

/// Every format, and the extension of its file.
const EVERY_FORMAT: [(&str, &str); 6] = [
    ("text", "txt"),
    ("json", "json"),
    ("tsv", "tsv"),
    ("html", "html"),
    ("xlsx", "xlsx"),
    ("sh", "sh"),
];

#[test]
fn one_process_writes_every_format_with_the_bytes_of_a_process_each() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    // With reviewed clusters too: the model then holds what text, json and
    // html show of them, which tsv does not.
    for extra in [&[][..], &["--review-files", "2"][..]] {
        let mut c = fsim("fsim-report");
        c.args(["-q", "--format", "tsv", "--files"])
            .arg(work.join("files.tsv"))
            .args(extra)
            .arg("-o")
            .arg(work.join("together.tsv"));
        for (format, ext) in EVERY_FORMAT.iter().filter(|(f, _)| *f != "tsv") {
            c.arg("--also").arg(format!(
                "{format}={}",
                work.join(format!("together.{ext}")).display()
            ));
        }
        c.arg(work.join("verified.tsv"));
        run_ok(c, None);
        for (format, ext) in EVERY_FORMAT {
            let alone = report(&work, format, &format!("alone.{ext}"), extra);
            let together = work.join(format!("together.{ext}"));
            assert!(
                std::fs::read(&alone).unwrap() == std::fs::read(&together).unwrap(),
                "{format} {extra:?}: one process for every format wrote other bytes than {format} alone"
            );
        }
    }
    let json = std::fs::read_to_string(work.join("alone.json")).unwrap();
    assert!(
        json.contains("\"review\": {"),
        "a reviewed cluster was compared"
    );
}

#[test]
fn two_reports_in_one_file_are_refused_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let out = work.join("both.txt");
    let mut c = fsim("fsim-report");
    c.args(["--format", "text", "--files"])
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(&out)
        .arg("--also")
        .arg(format!("json={}", out.display()))
        .arg(work.join("verified.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("two reports would be written to"), "{err}");
    assert!(!out.exists());
    let mut c = fsim("fsim-report");
    c.args(["--format", "text", "--also", "pdf=x.pdf"]);
    let err = run_fail(c, None);
    assert!(err.contains("\"pdf\" is not a format"), "{err}");
}

/// Cell text of a calamine row: strings as is, numbers without ".0".
/// One process writes its reports on a thread each: when one cannot be
/// written, the process fails with that report's error, and each of the
/// others is whole (the bytes of its format alone) or not there, with no
/// temporary file left.
#[test]
fn a_report_that_cannot_be_written_fails_the_process_and_halves_none() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let txt = work.join("unwritten.txt");
    let tsv = work.join("unwritten.tsv");
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "text", "--files"])
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(&txt)
        .args(["--also", "json=/dev/full", "--also"])
        .arg(format!("tsv={}", tsv.display()))
        .arg(work.join("verified.tsv"));
    let err = run_fail(c, None);
    assert!(
        err.contains("writing /dev/full: No space left on device"),
        "{err}"
    );
    for (format, path) in [("text", &txt), ("tsv", &tsv)] {
        if path.exists() {
            let alone = report(&work, format, &format!("alone.{format}"), &[]);
            assert!(std::fs::read(&alone).unwrap() == std::fs::read(path).unwrap());
        }
    }
    let left: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn cells(row: &[calamine::Data]) -> Vec<String> {
    row.iter()
        .map(|c| match c {
            calamine::Data::Float(f) if f.fract() == 0.0 => format!("{}", *f as i64),
            other => other.to_string(),
        })
        .collect()
}

/// The XML of one worksheet of the workbook.
fn sheet_xml(path: &Path, n: usize) -> String {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut s = String::new();
    z.by_name(&format!("xl/worksheets/sheet{n}.xml"))
        .unwrap()
        .read_to_string(&mut s)
        .unwrap();
    s
}

#[test]
fn xlsx_reads_back_with_outlines() {
    use calamine::Reader;
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap();
    let path = report(&work, "xlsx", "report.xlsx", &[]);
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(&path).unwrap();
    assert_eq!(
        wb.sheet_names(),
        ["Summary", "Folders", "A Identical", "B Clusters", "C Links"],
        "the summary first"
    );
    let sets = json["identical_sets"].as_array().unwrap();
    let clusters = json["clusters"].as_array().unwrap();
    let mut rows = |name: &str| -> Vec<Vec<String>> {
        wb.worksheet_range(name)
            .unwrap()
            .rows()
            .map(cells)
            .collect()
    };
    sheet_a_has_the_sets(&rows("A Identical"), sets);
    sheet_b_has_the_clusters(&rows("B Clusters"), clusters);

    // C: every link.
    let rows = rows("C Links");
    let links: Vec<&serde_json::Value> = clusters
        .iter()
        .flat_map(|c| c["links"].as_array().unwrap())
        .collect();
    assert_eq!(rows.len(), links.len() + 1);
    for (row, l) in rows[1..].iter().zip(&links) {
        assert_eq!(row[4], l["bytes_in_common"].to_string());
        assert_eq!(row[10], l["a"].as_str().unwrap());
        assert_eq!(row[11], l["b"].as_str().unwrap());
    }
    sheets_have_outlines(&path, sets, clusters);
}

/// A: one row per set, then its files.
fn sheet_a_has_the_sets(rows: &[Vec<String>], sets: &[serde_json::Value]) {
    assert_eq!(
        rows[0],
        [
            "Set",
            "Files",
            "Overhead (bytes)",
            "Size (bytes)",
            "Path",
            "Note"
        ]
    );
    assert!(!sets.is_empty());
    let mut r = 1;
    for s in sets {
        let files = s["files"].as_array().unwrap();
        assert_eq!(rows[r][0], s["id"].as_str().unwrap());
        assert_eq!(rows[r][1], files.len().to_string());
        assert_eq!(rows[r][2], s["overhead_bytes"].to_string());
        for (k, f) in files.iter().enumerate() {
            assert_eq!(rows[r + 1 + k][4], f.as_str().unwrap());
        }
        r += files.len() + 1;
    }
    assert_eq!(rows.len(), r);
}

/// B: clusters in report order, files below (figure 5).
fn sheet_b_has_the_clusters(rows: &[Vec<String>], clusters: &[serde_json::Value]) {
    assert_eq!(rows[0][0], "Cluster #");
    assert_eq!(rows[0][9], "Filename");
    let mut r = 1;
    let mut saw_hostile = false;
    for (i, c) in clusters.iter().enumerate() {
        assert_eq!(rows[r][0], (i + 1).to_string());
        assert_eq!(rows[r][1], c["id"].as_str().unwrap());
        assert_eq!(rows[r][2], c["type"].as_str().unwrap());
        assert_eq!(rows[r][3], c["total_size"].to_string());
        assert_eq!(rows[r][4], c["file_count"].to_string());
        for (k, f) in c["files"].as_array().unwrap().iter().enumerate() {
            let row = &rows[r + 1 + k];
            assert_eq!(row[7], f["size"].to_string());
            assert_eq!(row[9], f["path"].as_str().unwrap());
            saw_hostile |= row[9].ends_with(HOSTILE);
        }
        r += c["files"].as_array().unwrap().len() + 1;
    }
    assert_eq!(rows.len(), r);
    assert!(saw_hostile, "the hostile name is a plain string cell");
}

/// Outline levels (calamine does not expose them): the sheet XML. Group
/// rows are level 0, their files level 1; 1-based row numbers (sheet 2
/// is Folders, without outlines).
fn sheets_have_outlines(path: &Path, sets: &[serde_json::Value], clusters: &[serde_json::Value]) {
    for (sheet, groups, members) in [
        (
            3,
            sets.len(),
            sets.iter()
                .map(|s| s["files"].as_array().unwrap().len())
                .sum::<usize>(),
        ),
        (
            4,
            clusters.len(),
            clusters
                .iter()
                .map(|c| c["files"].as_array().unwrap().len())
                .sum(),
        ),
    ] {
        let xml = sheet_xml(path, sheet);
        assert_eq!(
            xml.matches("outlineLevel=\"1\"").count(),
            members,
            "sheet {sheet}: one level-1 row per file"
        );
        assert!(
            xml.contains("autoFilter"),
            "sheet {sheet} has an autofilter"
        );
        assert!(
            xml.contains("summaryBelow=\"0\""),
            "group row above its files"
        );
        // The first group row (row 2) is not outlined, its first file (row 3) is.
        assert!(groups > 0);
        let row3 = &xml[xml.find("<row r=\"3\"").unwrap()..];
        assert!(row3[..row3.find('>').unwrap()].contains("outlineLevel=\"1\""));
        let row2 = &xml[xml.find("<row r=\"2\"").unwrap()..];
        assert!(!row2[..row2.find('>').unwrap()].contains("outlineLevel"));
    }
}

/// `make report` of `repo` into `work`, with more make variables.
fn make_report(repo: &Path, work: &Path, vars: &[String]) {
    let mut c = std::process::Command::new("make");
    c.current_dir(source_root())
        .arg("--no-print-directory")
        .arg("report")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={}", repo.display()))
        .arg(format!("WORK={}", work.display()))
        .args(vars);
    run_ok(c, None);
}

#[test]
fn make_report_writes_every_format() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let work = t.path().join("work");
    make_report(&repo, &work, &["FORMATS=txt json tsv html xlsx".into()]);
    for f in ["txt", "json", "tsv", "html", "xlsx"] {
        let len = std::fs::metadata(work.join(format!("report.{f}")))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 100, "report.{f} missing or empty");
    }
    let html = std::fs::read_to_string(work.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(page_data(&html)["views"].as_array().unwrap().len() > 3);
}

#[test]
fn make_report_passes_templates_to_the_html_report() {
    let t = tempfile::tempdir().unwrap();
    let tr = template_repo::setup(t.path());
    let work = t.path().join("make-work");
    let templates = format!("TEMPLATES={}", tr.templates.display());
    make_report(&tr.repo, &work, &[templates, "FORMATS=json html".into()]);
    let d = page_data(&std::fs::read_to_string(work.join("report.html")).unwrap());
    assert_eq!(d["templates"]["digest"], d["params"]["templates"]);
    let (_, [doc00, doc01]) = pair_view(&d);
    assert!(doc00.flags.starts_with("222") && doc01.flags.starts_with("222"));
}

#[test]
fn text_colour_only_when_asked_or_on_a_terminal() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let text = |extra: &[&str]| {
        let mut c = fsim("fsim-report");
        c.args(["-q", "--files"])
            .arg(work.join("files.tsv"))
            .args(extra)
            .arg(work.join("verified.tsv"));
        String::from_utf8(run_ok(c, None).stdout).unwrap()
    };
    let plain = text(&[]);
    assert!(!plain.contains('\x1b'), "auto: no colour in a pipe");
    assert_eq!(text(&["--color", "never"]), plain);
    let coloured = text(&["--color", "always"]);
    assert!(coloured.contains("\x1b[1m"));
    // Without its escape sequences, the coloured text is the plain text.
    let mut stripped = String::new();
    let mut rest = coloured.as_str();
    while let Some(i) = rest.find('\x1b') {
        stripped.push_str(&rest[..i]);
        let end = rest[i..].find('m').unwrap();
        rest = &rest[i + end + 1..];
    }
    stripped.push_str(rest);
    assert_eq!(stripped, plain);
}
