//! Archives through the real binaries (docs/documents.md,
//! "Archives"): each member of a zip, tar or tar.gz, and each attachment
//! of a mail message, is an entry of its own (`ARCHIVE!/MEMBER`),
//! compared with loose files like any other. A text
//! edited inside a zip is found with its loose version at the figure two
//! loose files give, a copy inside a tar.gz is identical to the loose file,
//! a docx inside a zip is compared by its text, hostile archives (nested
//! too deep, truncated, traversal names) are notes and names, report.sh
//! never acts on a member, `CONTENT=raw` keeps archives whole, the notes of
//! hostile archives reach every report format, and the output is the same
//! on 1 and 2 jobs, in 2 shards, through `PREVIOUS=`, and through the pipe
//! of docs/usage.md.

use crate::common;

use common::archive_repo::*;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `make report` with extra variables: the json report.
fn report(repo: &Path, work: &Path, vars: &[&str]) -> Value {
    let all = [&["QUIET=-q", "FORMATS=txt json sh html"], vars].concat();
    run_ok(make_report_cmd(repo, work, &all), None);
    serde_json::from_str(&read(work, "report.json")).unwrap()
}

/// The path below the repository.
fn rel(v: &Value) -> String {
    let p = v.as_str().unwrap();
    p[p.find("/repo/").unwrap() + 6..].to_string()
}

/// The link between `a` and `b` (paths below the repository), if any.
fn link(r: &Value, a: &str, b: &str) -> Option<Value> {
    r["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["links"].as_array().unwrap())
        .find(|l| {
            let (x, y) = (rel(&l["a"]), rel(&l["b"]));
            (x == a && y == b) || (x == b && y == a)
        })
        .cloned()
}

#[test]
fn members_are_compared_with_loose_files() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let work = dir.path().join("work");
    let r = report(&repo, &work, &[]);

    // The edited note inside the zip: a pair with the loose note, at the
    // bytes in common the same two texts give as loose files.
    let l = link(&r, "bundle.zip!/notes/a.txt", "notes/a.txt").expect("the note pair");
    assert_eq!(l["exact"], true, "{l}");
    let loose = dir.path().join("loose");
    std::fs::create_dir_all(loose.join("notes")).unwrap();
    std::fs::create_dir_all(loose.join("edited")).unwrap();
    std::fs::write(loose.join("notes/a.txt"), text(80, false)).unwrap();
    std::fs::write(loose.join("edited/a.txt"), text(80, true)).unwrap();
    let lr = report(&loose, &dir.path().join("loose-work"), &[]);
    let c = &lr["clusters"][0]["links"][0];
    assert_eq!(l["bytes_in_common"], c["bytes_in_common"], "{l} / {c}");
    assert!(l["bytes_in_common"].as_u64().unwrap() > 3000, "{l}");

    // The docx attached to the mail, an identical set with the same docx
    // in the zip; the copy inside the tar.gz, one with the loose text.
    // Members of archives free nothing: both overheads are 0, so the
    // sets come by their first file.
    let sets = r["identical_sets"].as_array().unwrap();
    let names: Vec<Vec<String>> = sets
        .iter()
        .map(|s| s["files"].as_array().unwrap().iter().map(rel).collect())
        .collect();
    assert_eq!(
        names,
        vec![
            vec![
                "bundle.zip!/letter-v2.docx".to_string(),
                "mail/sent.eml!/letter-v2.docx".into()
            ],
            vec!["copy.tar.gz!/x/other.txt".to_string(), "other.txt".into()],
        ]
    );
    let figures: Vec<(u64, u64, u64)> = sets
        .iter()
        .map(|s| {
            let n = |k: &str| s[k].as_u64().unwrap();
            (
                n("overhead_bytes"),
                n("files_on_disk"),
                n("inside_archives"),
            )
        })
        .collect();
    assert_eq!(figures, [(0, 0, 2), (0, 1, 1)]);

    // The docx inside the zip: compared by its text with the loose one.
    let d = link(&r, "bundle.zip!/letter-v2.docx", "letter-v1.docx").expect("the letters");
    assert_eq!(d["bytes_in_common"], 285, "{d}");

    // The traversal name is a name: an entry, nothing written outside.
    let table = read(&work, "files.tsv");
    assert!(table.contains("/repo/bundle.zip!/../../etc/x\n"), "{table}");
    assert!(!dir.path().join("etc").exists());
    // Members are marked (raw!N, docx!N) with their archive's path length.
    let n = repo.join("bundle.zip").as_os_str().len();
    assert!(table.contains(&format!("\tdocx!{n}\t")), "{table}");

    // The mail's attachments are members too: the note it carries is a
    // version of the loose one, at the figure two loose files give; its
    // docx is a docx member; the traversal name is its base name.
    let m = link(&r, "mail/sent.eml!/a.txt", "notes/a.txt").expect("the mailed note");
    assert_eq!(m["exact"], true, "{m}");
    std::fs::write(loose.join("edited/a.txt"), mailed_note()).unwrap();
    let lr = report(&loose, &dir.path().join("loose-work-2"), &[]);
    let c = &lr["clusters"][0]["links"][0];
    assert_eq!(m["bytes_in_common"], c["bytes_in_common"], "{m} / {c}");
    // (The attached docx is analysed through its identical copy in the
    // zip, linked with letter-v1.docx above; it is a docx member.)
    let n = repo.join("mail/sent.eml").as_os_str().len();
    assert!(table.contains("\tmail\t"), "{table}");
    assert!(table.contains(&format!("\traw!{n}\t")), "{table}");
    assert!(table.contains(&format!("\tdocx!{n}\t")), "{table}");
    assert!(table.contains("/repo/mail/sent.eml!/passwd\n"), "{table}");
    assert!(!table.contains("sent.eml!/.."), "{table}");
}

#[test]
fn hostile_archives_are_notes_and_actions_never_touch_members() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let mut c = fsim("fsim-chunk");
    let (files, chunks) = (dir.path().join("f.tsv"), dir.path().join("c.tsv"));
    c.arg("--files-out")
        .arg(&files)
        .arg("-o")
        .arg(&chunks)
        .arg(&repo);
    let err = String::from_utf8(run_ok(c, None).stderr).unwrap();
    let deep = repo.join("deep.zip");
    let warn = format!("fsim-chunk: warning: {}: ", deep.display());
    assert!(
        err.lines()
            .any(|l| l.starts_with(&warn) && l.contains("nested more than 3 deep")),
        "{err}"
    );
    let broken = format!(
        "fsim-chunk: warning: {}: bad zip",
        repo.join("broken.zip").display()
    );
    assert!(err.lines().any(|l| l.starts_with(&broken)), "{err}");
    assert!(err.contains(", 2 archives with members left out"), "{err}");
    // Three levels of the deep zip are entries, the fourth a member whose
    // members are not read.
    let table = std::fs::read_to_string(&files).unwrap();
    assert!(
        table.contains("deep.zip!/level3.zip!/level2.zip!/level1.zip\n"),
        "{table}"
    );
    assert!(!table.contains("level0.zip!/"), "{table}");

    // The two notes reach every report format (the table keeps their
    // kinds: raw~deep, raw~broken).
    let work = dir.path().join("work");
    let r = report(&repo, &work, &["FORMATS=txt json tsv html xlsx sh"]);
    archive_notes_in_every_format(&repo, &work, &r);

    // report.sh lists the member of the identical set and acts on nothing.
    let sh = read(&work, "report.sh");
    let member = repo.join("copy.tar.gz!/x/other.txt");
    assert!(
        sh.contains(&format!(
            "# inside an archive, not acted on: {}\n",
            member.display()
        )),
        "{sh}"
    );
    assert!(!sh.lines().any(|l| l.starts_with("dup ")), "{sh}");
    let mut run = Command::new("sh");
    run.arg(work.join("report.sh")).arg("--remove");
    run_ok(run, None);
    assert!(repo.join("other.txt").exists() && repo.join("copy.tar.gz").exists());
}

/// The notes of the nested zip and of the zip cut in half, as each
/// format writes them.
fn archive_notes_in_every_format(repo: &Path, work: &Path, r: &Value) {
    let deep = "members left out: an archive inside it is nested more than 3 deep (it is listed, its members are not)";
    let broken = "members left out: the archive is damaged or truncated (the members before the damage are listed)";
    let table = read(work, "files.tsv");
    let (d, b) = (repo.join("deep.zip"), repo.join("broken.zip"));
    for (p, kind) in [(&d, "deep"), (&b, "broken")] {
        let size = std::fs::metadata(p).unwrap().len();
        let entry = format!("\traw~{kind}\t{size}\t-\t{}\n", p.display());
        assert!(table.contains(&entry), "{table}");
    }
    let a = &r["members_left_out"];
    assert_eq!(a["count"], 2, "{a}");
    assert_eq!(a["capped"], false, "{a}");
    let listed: Vec<(String, String)> = a["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (rel(&x["path"]), x["note"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        listed,
        [
            ("broken.zip".to_string(), broken.to_string()),
            ("deep.zip".into(), deep.into())
        ]
    );
    let text = read(work, "report.txt");
    for (p, n) in [(&b, broken), (&d, deep)] {
        assert!(
            text.contains(&format!("  {}  ({n})\n", p.display())),
            "{text}"
        );
    }
    assert!(text.contains("archives whose members are not all listed (fsim-chunk's warnings say which and why): 2\n"), "{text}");
    let tsv = read(work, "report.tsv");
    for (p, n) in [(&b, broken), (&d, deep)] {
        let row = format!(
            "note\tmembers-left-out\t1\t{0}\t0.0\t0\t0.0\t0.0\t{0}\t0\t{1}\t{n}\t0\t\t\n",
            std::fs::metadata(p).unwrap().len(),
            p.display()
        );
        assert!(tsv.contains(&row), "{tsv}");
    }
    let html = read(work, "report.html");
    let open = "<script type=\"application/json\" id=\"fsim-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).unwrap();
    assert_eq!(data["notes"]["count"], 2, "{}", data["notes"]);
    assert_eq!(data["notes"]["listed"][1][1], deep, "{}", data["notes"]);
    use calamine::Reader;
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(work.join("report.xlsx")).unwrap();
    let sheet = wb.worksheet_range("Summary").unwrap();
    let notes: Vec<String> = sheet
        .rows()
        .filter(|row| row[0] == "note")
        .map(|row| row[1].to_string())
        .collect();
    assert_eq!(
        notes,
        [
            format!("{}  ({broken})", b.display()),
            format!("{}  ({deep})", d.display())
        ]
    );
}

#[test]
fn content_raw_keeps_archives_whole() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let work = dir.path().join("work");
    let r = report(&repo, &work, &["CONTENT=raw"]);
    let table = read(&work, "files.tsv");
    assert!(!table.contains("!/"), "{table}");
    assert!(link(&r, "bundle.zip!/notes/a.txt", "notes/a.txt").is_none());
    assert!(r["identical_sets"].as_array().unwrap().is_empty(), "{r}");
}

/// The outputs are the same with JOBS=1 and JOBS=2, in 2 shards (also
/// reusing a run with members), through an incremental re-run, and
/// through the pipe of docs/usage.md.
#[test]
fn archive_outputs_are_the_same_every_way() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    // A message without attachments: no members, nothing left out.
    std::fs::write(
        repo.join("mail/plain.eml"),
        "From: a@example.org\nTo: b@example.org\nSubject: hello\n\nJust a line.\n",
    )
    .unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    report(&repo, &one, &["JOBS=1"]);
    report(&repo, &two, &["JOBS=2"]);
    let same = |a: &Path, b: &Path, names: &[&str]| {
        for n in names {
            assert!(
                read(a, n) == read(b, n),
                "{n}: {} / {}",
                a.display(),
                b.display()
            );
        }
    };
    let all = [
        "files.tsv",
        "verified.tsv",
        "report.txt",
        "report.json",
        "report.sh",
    ];
    same(&one, &two, &all);
    // Shards: each shard lists no members, the merging run reads the
    // archives again with theirs: the outputs of an unsharded run.
    let shards = dir.path().join("shards");
    report(&repo, &shards, &["SHARDS=2"]);
    same(&one, &shards, &all);
    joined_shard_tables_mark_the_archives(&shards, &dir.path().join("joined.tsv"));

    // PREVIOUS=: an archive unchanged is reused with its members, one
    // changed is read again; the outputs are those of a run from scratch.
    std::fs::write(repo.join("notes/b.txt"), text(30, true)).unwrap();
    let other = std::fs::read(repo.join("other.txt")).unwrap();
    let tgz = tar_gz_of(&[
        ("x/other.txt", &other),
        ("x/b.txt", text(30, false).as_bytes()),
    ]);
    std::fs::write(repo.join("copy.tar.gz"), tgz).unwrap();
    // A second message: new attachments, one a copy of b.txt.
    let b = text(30, false);
    let reply = mail_of(&[("b.txt", b.as_bytes()), ("a.txt", mailed_note().as_bytes())]);
    std::fs::write(repo.join("mail/reply.eml"), reply).unwrap();
    let (inc, fresh) = (dir.path().join("inc"), dir.path().join("fresh"));
    report(&repo, &inc, &[&format!("PREVIOUS={}", one.display())]);
    report(&repo, &fresh, &[]);
    same(&inc, &fresh, &all);
    // Shards reusing a run with members (dropped from the shard tables).
    let inc_shards = dir.path().join("inc-shards");
    report(
        &repo,
        &inc_shards,
        &["SHARDS=2", &format!("PREVIOUS={}", one.display())],
    );
    same(&inc_shards, &fresh, &all);
    assert!(read(&fresh, "files.tsv").contains("copy.tar.gz!/x/b.txt"));
    // The mails' attachments were in every one of those runs.
    assert!(read(&fresh, "files.tsv").contains("/mail/sent.eml!/passwd\n"));
    assert!(read(&fresh, "files.tsv").contains("/mail/reply.eml!/b.txt\n"));

    // The pipe of docs/usage.md writes make report's reports.
    let usage = std::fs::read_to_string(source_root().join("docs/usage.md")).unwrap();
    let line = usage
        .lines()
        .find(|l| l.starts_with("fsim-chunk ") && l.trim_end().ends_with("| fsim-report"))
        .expect("the pipe of docs/usage.md")
        .trim_end()
        .replace("~/docs", &format!("'{}'", repo.display()));
    let pipe = dir.path().join("pipe");
    sh(&pipe, &format!("{line} > report.txt"));
    sh(&pipe, &format!("{line} --format json > report.json"));
    same(&pipe, &fresh, &["files.tsv", "report.txt", "report.json"]);
}

/// The shard tables of a run with SHARDS=2 mark each archive as listing no
/// members; a table joined from them without walking (fsim-join
/// --shard-tables, fsim-spark's) keeps the mark, which its reports turn
/// into a note.
fn joined_shard_tables_mark_the_archives(shards: &Path, joined: &Path) {
    let tables: Vec<PathBuf> = (0..2)
        .map(|i| shards.join(format!("shards-2/files.{i}.tsv")))
        .collect();
    let mut c = fsim("fsim-join");
    c.args(["--shard-tables", "-o"]).arg(joined).args(&tables);
    run_ok(c, None);
    let joined = std::fs::read_to_string(joined).unwrap();
    for (name, marked) in [
        ("bundle.zip", true),
        ("copy.tar.gz", true),
        ("deep.zip", true),
        ("mail/sent.eml", true),
        ("mail/plain.eml", false),
    ] {
        let line = joined
            .lines()
            .find(|l| l.ends_with(&format!("/repo/{name}")))
            .unwrap_or_else(|| panic!("{name} not in {joined}"));
        assert_eq!(line.contains("~unlisted\t"), marked, "{line}");
    }
    assert!(!joined.contains("!/"), "a shard listed members: {joined}");
}
