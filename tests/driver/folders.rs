//! Folder pairs through the real binaries: `make report` on
//! the small end (two folders of two files) and on 20 copied-and-edited
//! project folders, read back from the json, text and tsv reports.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// `n` lines of pseudo-random words, seeded.
fn text(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    let mut out = String::new();
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push_str(&format!("line {i} of {seed}: {:016x} {:08x}\n", x, x >> 40));
    }
    out
}

fn write(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

/// `make report` with txt, json and tsv; the json document.
fn report(repo: &Path, work: &Path) -> Value {
    run_ok(make_report_cmd(repo, work, &["FORMATS=txt json tsv"]), None);
    serde_json::from_str(&read(work, "report.json")).unwrap()
}

fn tail(v: &Value, key: &str) -> String {
    let s = v[key].as_str().unwrap();
    s.rsplit('/').next().unwrap().to_string()
}

#[test]
fn two_folders_of_two_files_are_one_folder_pair() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let x = text(1, 60);
    let y = text(2, 80);
    // B/y: every fifth line edited.
    let y2: String = y
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 5 == 0 {
                format!("edited {i}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    write(&repo.join("A/x.txt"), &x);
    write(&repo.join("A/y.txt"), &y);
    write(&repo.join("B/x.txt"), &x);
    write(&repo.join("B/y.txt"), &y2);
    let work = dir.path().join("work");
    let j = report(&repo, &work);
    let folders = j["folders"].as_array().unwrap();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let f = &folders[0];
    assert_eq!((tail(f, "a"), tail(f, "b")), ("A".into(), "B".into()));
    assert_eq!(j["summary"]["folder_pairs"], 1);
    // x is identical (its size); y's bytes in common are the verified
    // link's figure.
    let links = j["clusters"][0]["links"].as_array().unwrap();
    assert_eq!(links.len(), 1);
    let common = links[0]["bytes_in_common"].as_u64().unwrap();
    assert!(links[0]["exact"].as_bool().unwrap());
    let want = x.len() as u64 + common;
    assert_eq!(f["a_in_b"].as_u64().unwrap(), want);
    assert_eq!(f["b_in_a"].as_u64().unwrap(), want);
    assert_eq!(f["bytes_a"].as_u64().unwrap(), (x.len() + y.len()) as u64);
    // By relative path: x the same, y changed (each pair of files once).
    assert_eq!(f["same"], 1);
    assert_eq!(f["changed"], 1);
    // The cluster of the two y and the set of the two x lie inside it.
    assert_eq!(j["clusters"][0]["folder_pair"], 0);
    assert_eq!(j["identical_sets"][0]["folder_pair"], 0);
    assert_eq!(
        (f["only_a"].as_u64(), f["only_b"].as_u64()),
        (Some(0), Some(0))
    );
    let txt = read(&work, "report.txt");
    let at = txt
        .find("Folders that are copies or versions of each other: 1 pairs")
        .unwrap();
    assert!(at < txt.find("A. Identical files").unwrap(), "{txt}");
    assert!(txt.contains("/A  <->  ") && txt.contains("/B  "), "{txt}");
    assert_eq!(txt.matches("(folder pair 1, above)").count(), 2, "{txt}");
    let tsv = read(&work, "report.tsv");
    let row = tsv.lines().nth(1).unwrap();
    assert!(row.starts_with("folders\tfolder-pair\t4\t"), "{row}");
}

#[test]
fn twenty_copied_and_edited_projects_pair_at_their_tops() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let subs = ["src", "docs", "tests"];
    for k in 0..20u64 {
        for (s, sub) in subs.iter().enumerate() {
            for i in 0..4u64 {
                let seed = 100 + s as u64 * 10 + i;
                let mut body = text(seed, 50);
                // Copy k edits one file of its own: a version.
                if s == 0 && i == k % 4 {
                    body = body.replacen("line 7 ", &format!("line seven, copy {k} "), 1);
                    body.push_str(&format!("added by copy {k}\n"));
                }
                write(&repo.join(format!("p{k:02}/{sub}/f{i}.txt")), &body);
            }
        }
        // And a file only it has.
        write(
            &repo.join(format!("p{k:02}/docs/notes-{k}.txt")),
            &text(1000 + k, 30),
        );
    }
    let work = dir.path().join("work");
    let j = report(&repo, &work);
    let folders = j["folders"].as_array().unwrap();
    assert_eq!(folders.len(), 20 * 19 / 2);
    for f in folders {
        let (a, b) = (tail(f, "a"), tail(f, "b"));
        assert!(a.starts_with('p') && b.starts_with('p') && a != b, "{f}");
        assert_eq!(
            (f["files_a"].as_u64(), f["files_b"].as_u64()),
            (Some(13), Some(13))
        );
        assert_eq!(
            (f["only_a"].as_u64(), f["only_b"].as_u64()),
            (Some(1), Some(1)),
            "{f}"
        );
        assert!(f["percent"].as_f64().unwrap() > 85.0, "{f}");
    }
    // Under each projects' pair: tests/ (identical) and src/ (one or two
    // files edited: closer than the projects, which differ in docs/ too);
    // not docs/ (its notes differ: less alike), nothing under them.
    for f in folders {
        let kids: Vec<String> = f["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| tail(c, "a"))
            .collect();
        assert_eq!(kids, ["tests", "src"], "{f}");
        assert_eq!(f["children"][0]["percent"].as_f64(), Some(100.0));
    }
    let txt = read(&work, "report.txt");
    assert!(txt.contains("/tests  =  "), "{txt}");
    // One family (sibling folders: their paths differ in one component,
    // shown as *) of more than ten pairs: the best 20 listed first, the
    // family in one line.
    assert!(
        txt.contains("190 pairs") && txt.contains("in 1 families"),
        "{txt}"
    );
    assert!(
        txt.contains(", 20 of them among the best above, all in report.json and report.tsv"),
        "{txt}"
    );
    assert!(
        txt.contains("... 20 folder pairs listed here of 190"),
        "{txt}"
    );
}

/// `sh report.sh ARG` in `dir`: (exit code, stdout, stderr).
fn script(work: &Path, arg: &str) -> (i32, String, String) {
    let out = std::process::Command::new("sh")
        .arg(work.join("report.sh"))
        .arg(arg)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_actions_script_links_or_removes_copies_and_refuses_changed_files() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let body = text(7, 40);
    // Three copies, one under a hostile name; a fourth set of two.
    let odd = "it's a\nname $HOME.txt";
    write(&repo.join("a/orig.txt"), &body);
    write(&repo.join("b/copy.txt"), &body);
    write(&repo.join(format!("c/{odd}")), &body);
    write(&repo.join("d/one.txt"), &text(8, 30));
    write(&repo.join("d/two.txt"), &text(8, 30));
    let work = dir.path().join("work");
    run_ok(make_report_cmd(&repo, &work, &["FORMATS=sh"]), None);
    // Dry run (the default): says what it would do, touches nothing.
    let (code, out, _) = script(&work, "--dry-run");
    assert_eq!(code, 0);
    assert_eq!(
        out.matches("would replace by a link or remove").count(),
        3,
        "{out}"
    );
    assert!(repo.join(format!("c/{odd}")).exists());
    // A copy changed since the run is refused; the others are linked.
    std::fs::write(repo.join("b/copy.txt"), body.replace("line 3 ", "LINE 3 ")).unwrap();
    let (code, _, err) = script(&work, "--link");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused (changed since the run):") && err.contains("b/copy.txt"),
        "{err}"
    );
    assert!(
        err.contains("2 copies handled (link), 0 already done, 1 refused"),
        "{err}"
    );
    let ino = |p: &str| std::fs::metadata(repo.join(p)).unwrap().ino();
    assert_eq!(ino(&format!("c/{odd}")), ino("a/orig.txt"));
    assert_eq!(ino("d/two.txt"), ino("d/one.txt"));
    assert_ne!(ino("b/copy.txt"), ino("a/orig.txt"));
    // Linked again: nothing more to do, and it says so.
    let (_, out, err) = script(&work, "--link");
    assert!(
        err.contains("0 copies handled (link), 2 already done, 1 refused"),
        "{err}"
    );
    assert_eq!(out.matches("already linked: ").count(), 2, "{out}");
    // --remove: a copy that is now the kept file under another name is
    // refused (removing a name frees nothing); nothing is removed.
    let (code, _, err) = script(&work, "--remove");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("0 copies handled (remove), 0 already done, 3 refused")
            && err.contains("refused (the kept file and the copy are one file): "),
        "{err}"
    );
    assert!(repo.join("d/two.txt").exists() && repo.join("d/one.txt").exists());
    assert!(repo.join("b/copy.txt").exists());
    let (code, _, err) = script(&work, "--now");
    assert_eq!(code, 2);
    assert!(err.contains("usage:"), "{err}");
}

#[test]
fn identical_trees_are_one_action_checked_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    // keep/ and its copy copy/ (two levels, an empty file); other/ holds
    // one of the same files and an edited version of another.
    let (x, y, z) = (text(21, 40), text(22, 50), text(23, 30));
    for top in ["keep", "copy"] {
        write(&repo.join(format!("{top}/x.txt")), &x);
        write(&repo.join(format!("{top}/sub/y.txt")), &y);
        write(&repo.join(format!("{top}/sub/deeper/z.txt")), &z);
        write(&repo.join(format!("{top}/empty")), "");
    }
    write(&repo.join("other/x.txt"), &x);
    write(&repo.join("other/y.txt"), &y.replace("line 4 ", "LINE 4 "));
    let work = dir.path().join("work");
    run_ok(
        make_report_cmd(&repo, &work, &["FORMATS=sh json txt"]),
        None,
    );
    let j: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    let f = &j["folders"][0];
    assert_eq!(
        (tail(f, "a"), tail(f, "b")),
        ("copy".into(), "keep".into()),
        "{f}"
    );
    assert_eq!(f["identical_trees"], true, "{f}");
    // Its file lists, relative to the folders.
    // The empty file is the same in both: no file is only in one.
    assert_eq!(f["files"]["same"].as_array().unwrap().len(), 4, "{f}");
    assert_eq!(f["files"]["same"][0][0], "empty", "{f}");
    assert_eq!(f["files"]["only_a"], serde_json::json!([]), "{f}");
    let sh = read(&work, "report.sh");
    assert_eq!(sh.matches("\ntree '").count(), 1, "{sh}");
    // Dry run: one line for the tree, one for other/x.txt; nothing touched.
    let (code, out, _) = script(&work, "--dry-run");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("would replace by links or remove the whole tree: ")
            && out.contains("(a copy of ")
            && out.contains(", 4 files)"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 2, "{out}");
    // A file added to the copy since the run: the whole tree is refused.
    let gone = if out.contains("/keep (a copy of") {
        "keep"
    } else {
        "copy"
    };
    let kept = if gone == "keep" { "copy" } else { "keep" };
    write(&repo.join(format!("{gone}/sub/new.txt")), "new");
    // (the dry run checks as the others do.)
    let (code, out, err) = script(&work, "--dry-run");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused (files added or removed since the run)"),
        "{err}"
    );
    assert!(!out.contains("whole tree"), "{out}");
    assert!(repo.join(format!("{gone}/x.txt")).exists());
    // Back as it was: the copy goes as one, the kept tree stays whole.
    std::fs::remove_file(repo.join(format!("{gone}/sub/new.txt"))).unwrap();
    let (code, _, err) = script(&work, "--remove");
    assert_eq!(code, 0, "{err}");
    assert!(!repo.join(gone).exists(), "{err}");
    for f in ["x.txt", "sub/y.txt", "sub/deeper/z.txt", "empty"] {
        assert!(repo.join(kept).join(f).exists(), "{f}");
    }
    // other/x.txt, a copy of a file of the kept tree, is handled as before.
    assert!(!repo.join("other/x.txt").exists(), "{err}");
    assert!(
        err.contains("5 copies handled (remove), 0 already done, 0 refused"),
        "{err}"
    );
    // Run again: the copies are gone, the kept files as recorded.
    let (code, out, err) = script(&work, "--remove");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("0 copies handled (remove), 5 already done, 0 refused"),
        "{err}"
    );
    assert_eq!(out.matches("already removed: ").count(), 2, "{out}");
}

/// Three releases of a project with six translation catalogs each: the
/// catalogs of one release share their msgids (sibling folders at ~55 %),
/// each release is a version of the others. The releases are read first;
/// the 45 sibling locale pairs are one family, 3 of them listed under its
/// line; json, html and text list the families in one order.
#[test]
fn sibling_locale_folders_are_one_family_read_after_the_releases() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    write_releases_with_catalogs(&repo);
    let work = dir.path().join("work");
    run_ok(
        make_report_cmd(&repo, &work, &["FORMATS=txt json html"]),
        None,
    );
    let j: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    let pairs = j["folders"].as_array().unwrap();
    let fams = j["folder_families"].as_array().unwrap();
    // The releases first: one family of 3 pairs.
    let pattern = |f: &Value| f["pattern"].as_str().unwrap().to_string();
    assert!(pattern(&fams[0]).ends_with("/repo/*"), "{fams:?}");
    assert_eq!(fams[0]["pairs"], 3);
    for p in &pairs[..3] {
        assert!(
            tail(p, "a").starts_with("rel-") && tail(p, "b").starts_with("rel-"),
            "{p}"
        );
    }
    // The sibling locale folders: one family.
    let loc = fams
        .iter()
        .find(|f| pattern(f).contains("locale/*"))
        .unwrap();
    assert_eq!(loc["pairs"], 45, "{fams:?}");
    assert_eq!(loc["folders"], 18, "{fams:?}");
    assert_eq!(pattern(loc), ".../locale/*", "{fams:?}");
    // Each pair names its family; a family's pairs are one run from its
    // `first`, in the families' order.
    let mut at = 0;
    for (k, f) in fams.iter().enumerate() {
        assert_eq!(f["first"].as_u64().unwrap(), at, "{f}");
        let n = f["pairs"].as_u64().unwrap();
        for p in &pairs[at as usize..(at + n) as usize] {
            assert_eq!(p["family"].as_u64().unwrap(), k as u64, "{p}");
        }
        at += n;
    }
    assert_eq!(at as usize, pairs.len());
    text_lists_the_families(&work, fams);
    // The html: the same families, in the same order, and each pair's.
    let html = read(&work, "report.html");
    let mut from = 0;
    for p in fams.iter().map(pattern) {
        let at = html[from..].find(&format!("\"pattern\":\"{p}\"")).unwrap();
        from += at + 1;
    }
    assert!(html.contains("\"family\":0,"), "each pair's family");
    // It opens with the best pairs, as the text: each with its place in
    // the json's pairs, the releases first.
    let data = page_data(&html);
    let best = data["folders_best"].as_array().unwrap();
    let want = j["folders_best"].as_array().unwrap();
    assert_eq!(best.len(), 20);
    for (b, k) in best.iter().zip(want) {
        assert_eq!(&b["index"], k);
        let p = &pairs[k.as_u64().unwrap() as usize];
        assert_eq!(
            (&b["a"], &b["b"], &b["percent"]),
            (&p["a"], &p["b"], &p["percent"])
        );
    }
    assert!(tail(&best[0], "a").starts_with("rel-"), "{}", best[0]);
}

/// The JSON data block of the html page, parsed.
fn page_data(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"fsim-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).expect("data block is JSON")
}

/// Three releases of a project of six code files and six translation
/// catalogs sharing the release's msgids.
fn write_releases_with_catalogs(repo: &Path) {
    let locales = ["de", "fr", "it", "es", "nl", "pt"];
    for r in 1..=3u64 {
        for i in 0..6u64 {
            // The code: a few lines edited in each release.
            let body =
                text(300 + i, 120).replacen("line 9 ", &format!("line nine, release {r} "), 1);
            write(&repo.join(format!("rel-{r}/app/code/m{i}.txt")), &body);
        }
        for (k, l) in locales.iter().enumerate() {
            // The msgids of the release's template, a translation each.
            let mut po = String::new();
            for (i, id) in text(400, 60).lines().enumerate() {
                po.push_str(&format!("msgid \"{id}\"\n"));
                let t = format!("{l} {k} {i} {r}");
                po.push_str(&format!(
                    "msgstr \"{t} {:x}\"\n\n",
                    (k as u64 + 7) * (i as u64 + 3) * 0x9e37_79b9
                ));
            }
            write(
                &repo.join(format!("rel-{r}/app/locale/{l}/LC_MESSAGES/django.po")),
                &po,
            );
        }
    }
}

/// The text: the best pairs first, the releases leading (most bytes);
/// then the family lines in the json's order, the crowd of sibling locale
/// folders in its line alone, none of its pairs listed after the best.
fn text_lists_the_families(work: &Path, fams: &[Value]) {
    let pattern = |f: &Value| f["pattern"].as_str().unwrap().to_string();
    let txt = read(work, "report.txt");
    let (best, rest) = txt
        .split_once("  the others, family by family")
        .expect("the families after the best pairs");
    let first: Vec<&str> = best
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains("  <->  ") && !l.starts_with("    "))
        .collect();
    assert_eq!(first.len(), 20, "{txt}");
    for l in &first[..3] {
        assert!(
            l.matches("/rel-").count() == 2 && !l.contains("/app/"),
            "{l}"
        );
    }
    let lines: Vec<&str> = rest
        .lines()
        .filter_map(|l| l.strip_prefix("  family "))
        .collect();
    let mut order = fams.iter().map(pattern);
    for l in &lines {
        assert!(
            order.any(|p| l.starts_with(&format!("{p}: "))),
            "{l} is not in the json's order of families"
        );
    }
    let locale = lines
        .iter()
        .find(|l| l.starts_with(".../locale/*: 45 pairs of 18 folders, "))
        .unwrap_or_else(|| panic!("{txt}"));
    assert!(
        locale.ends_with("in report.json and report.tsv"),
        "{locale}"
    );
    let listed_after = rest
        .lines()
        .filter(|l| l.contains("/locale/") && l.contains("  <->  ") && !l.starts_with("    "))
        .count();
    assert_eq!(listed_after, 0, "{txt}");
}

/// The files under `dir` by relative path, with their bytes.
fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// What `diff -r a b` counts, from the trees themselves: (same, changed,
/// only in a, only in b) by relative path.
fn diff_r(a: &Path, b: &Path) -> [u64; 4] {
    let (ta, tb) = (tree(a), tree(b));
    let mut n = [0; 4];
    for (p, x) in &ta {
        match tb.get(p) {
            Some(y) if y == x => n[0] += 1,
            Some(_) => n[1] += 1,
            None => n[2] += 1,
        }
    }
    n[3] = tb.keys().filter(|p| !ta.contains_key(*p)).count() as u64;
    n
}

/// The pair of the folders named `a` and `b` (either way round).
fn pair_of<'v>(j: &'v Value, a: &str, b: &str) -> Option<&'v Value> {
    j["folders"].as_array().unwrap().iter().find(|f| {
        let (x, y) = (tail(f, "a"), tail(f, "b"));
        (x == a && y == b) || (x == b && y == a)
    })
}

/// Every file counts: a licence in 70 folders, two identical trees of
/// nothing but that licence and an empty file, 100 copies of one folder
/// (every set wider than 64 files) and two releases whose files are mostly
/// in such sets; the counts by relative path checked against the trees.
#[test]
fn every_file_counts_in_the_folder_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let license = text(30, 25);
    for k in 0..70 {
        write(&repo.join(format!("lic/f{k:02}/LICENSE")), &license);
        write(
            &repo.join(format!("lic/f{k:02}/own.txt")),
            &text(100 + k, 90),
        );
    }
    for top in ["X", "Y"] {
        write(&repo.join(format!("{top}/LICENSE")), &license);
        write(&repo.join(format!("{top}/empty")), "");
    }
    let parts: Vec<String> = (0..3).map(|i| text(40 + i, 30)).collect();
    for k in 0..100 {
        for (i, body) in parts.iter().enumerate() {
            write(&repo.join(format!("many/copy-{k:03}/part-{i}.txt")), body);
        }
    }
    // Two releases: empty __init__.py files, the licence, modules the same
    // or edited, and 32 files added in the second.
    for (r, edit) in [("4.2", false), ("4.2.16", true)] {
        let root = repo.join("rel").join(r);
        write(&root.join("LICENSE"), &license);
        for m in 0..12u64 {
            write(&root.join(format!("pkg{m}/__init__.py")), "");
            let body = text(200 + m, 60);
            let body = if edit && m % 4 == 0 {
                body.replace("line 7 ", "LINE 7 ")
            } else {
                body
            };
            write(&root.join(format!("pkg{m}/mod.py")), &body);
        }
        if edit {
            for n in 0..32u64 {
                write(
                    &root.join(format!("docs/releases/new-{n}.txt")),
                    &text(300 + n, 20),
                );
            }
        }
    }
    let work = dir.path().join("work");
    let j = report(&repo, &work);
    // X = Y: listed, an identical tree, each pair of files counted once.
    let xy = pair_of(&j, "X", "Y").expect("X and Y are a folder pair");
    assert_eq!(xy["identical_trees"], true, "{xy}");
    assert_eq!(
        [&xy["same"], &xy["changed"], &xy["only_a"], &xy["only_b"]],
        [2, 0, 0, 0],
        "{xy}"
    );
    // The 100 copies: one family of every two of them.
    let fams = j["folder_families"].as_array().unwrap();
    let many = fams
        .iter()
        .find(|f| f["pattern"].as_str().unwrap().ends_with("many/*"))
        .expect("the copies are a family");
    let counts = (many["pairs"].as_u64(), many["folders"].as_u64());
    assert_eq!(counts, (Some(100 * 99 / 2), Some(100)));
    // The 70 licence folders are no pair (their own files differ).
    assert!(pair_of(&j, "f00", "f01").is_none());
    // The releases: counts by relative path, as the trees give them.
    let (r1, r2) = (repo.join("rel/4.2"), repo.join("rel/4.2.16"));
    let want = diff_r(&r1, &r2);
    assert_eq!(want, [22, 3, 0, 32]);
    let p = pair_of(&j, "4.2", "4.2.16").expect("the releases are a pair");
    let flip = tail(p, "a") != "4.2";
    let got = [&p["same"], &p["changed"], &p["only_a"], &p["only_b"]].map(|v| v.as_u64().unwrap());
    let got = if flip {
        [got[0], got[1], got[3], got[2]]
    } else {
        got
    };
    assert_eq!(got, want, "{p}");
    // The lists name no file present on both sides.
    let (ta, tb) = (tree(&r1), tree(&r2));
    let (only_1, only_2) = if flip {
        ("only_b", "only_a")
    } else {
        ("only_a", "only_b")
    };
    assert_eq!(p["files"][only_1], serde_json::json!([]), "{p}");
    let listed = p["files"][only_2].as_array().unwrap();
    assert_eq!(listed.len(), 20, "{p}");
    assert!(listed
        .iter()
        .all(|x| tb.contains_key(x.as_str().unwrap()) && !ta.contains_key(x.as_str().unwrap())));
    assert_eq!(p["files"]["same_more"], 22 - 20, "{p}");
    // The text says what it counts, and no wide set is left out.
    let txt = read(&work, "report.txt");
    assert!(
        txt.contains("by relative path 22 files the same, 3 changed, "),
        "{txt}"
    );
    assert!(!txt.contains("proposed no folder pairs"), "{txt}");
}

/// A version that reaches the threshold with its licence alone: `P` and
/// `Q` share a licence that is also in 300 other folders (more than
/// SET_FOLDERS, so it proposes no pairs) and a document edited in `Q`;
/// P's largest file is gone from `Q`, which has one of its own. Without
/// the licence the pair is under 50 %, with it over: the licence counts
/// before the threshold.
#[test]
fn a_licence_in_every_folder_counts_before_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let license = text(30, 45);
    for k in 0..300 {
        write(&repo.join(format!("other/o{k:03}/LICENSE")), &license);
    }
    let doc = text(1, 70);
    let edited: String = doc
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i % 10 == 0 {
                format!("edited {i}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let removed = text(2, 70);
    let added = text(3, 22);
    for (side, doc, own) in [("P", &doc, &removed), ("Q", &edited, &added)] {
        write(&repo.join(format!("{side}/LICENSE")), &license);
        write(&repo.join(format!("{side}/doc.txt")), doc);
        write(&repo.join(format!("{side}/own.txt")), own);
    }
    let work = dir.path().join("work");
    let j = report(&repo, &work);
    assert_eq!(j["folders_wide_identical_sets"], 1);
    let p = pair_of(&j, "P", "Q").expect("P and Q are a folder pair");
    let link = &j["clusters"][0]["links"][0];
    let common = link["bytes_in_common"].as_u64().unwrap();
    let lic = license.len() as u64;
    assert_eq!(p["a_in_b"].as_u64(), Some(lic + common), "{p}");
    assert_eq!(p["b_in_a"].as_u64(), Some(lic + common), "{p}");
    let total = (p["bytes_a"].as_u64().unwrap() + p["bytes_b"].as_u64().unwrap()) as f64;
    // Under 50 % without the licence, over with it.
    assert!(200.0 * (common as f64) / total < 50.0, "{p}");
    assert!(p["percent"].as_f64().unwrap() >= 50.0, "{p}");
    // The licence alone pairs none of the other folders.
    assert_eq!(j["folders"].as_array().unwrap().len(), 1, "{j}");
}

/// `projects/{alpha,beta,gamma,delta}` of four distinct text files each
/// and `backup/{alpha-2023 (a copy of alpha), beta-old (beta with one
/// file edited)}`; the length in bytes
/// of beta's edited file before and after.
fn backups_of_projects(repo: &Path) -> (usize, usize) {
    let names = ["alpha", "beta", "gamma", "delta"];
    let mut edit = (0, 0);
    for (p, name) in names.iter().enumerate() {
        for i in 0..4u64 {
            let body = text(500 + p as u64 * 10 + i, 40 + 10 * i as usize);
            write(&repo.join(format!("projects/{name}/f{i}.txt")), &body);
            if *name == "alpha" {
                write(&repo.join(format!("backup/alpha-2023/f{i}.txt")), &body);
            } else if *name == "beta" {
                let old = if i == 1 {
                    let edited = body.replacen("line 3 ", "line three, edited ", 1);
                    edit = (body.len(), edited.len());
                    edited
                } else {
                    body
                };
                write(&repo.join(format!("backup/beta-old/f{i}.txt")), &old);
            }
        }
    }
    edit
}

#[test]
fn the_copies_inside_a_pair_of_parents_are_listed_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    backups_of_projects(&repo);
    let work = dir.path().join("work");
    let j = report(&repo, &work);
    let folders = j["folders"].as_array().unwrap();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let top = &folders[0];
    assert_eq!(
        (tail(top, "a"), tail(top, "b")),
        ("backup".into(), "projects".into())
    );
    let kids = top["children"].as_array().unwrap();
    let named: Vec<(String, String)> = kids.iter().map(|c| (tail(c, "a"), tail(c, "b"))).collect();
    assert_eq!(
        named,
        [
            ("alpha-2023".to_string(), "alpha".to_string()),
            ("beta-old".into(), "beta".into())
        ]
    );
    assert_eq!(kids[0]["percent"].as_f64(), Some(100.0));
    assert_eq!(kids[0]["identical_trees"], true);
    // beta-old: three files the same, one changed (by relative path, as
    // top pairs count them); its figure is the
    // pair's bytes in common over both folders' bytes.
    let beta = &kids[1];
    let common = beta["a_in_b"].as_u64().unwrap() + beta["b_in_a"].as_u64().unwrap();
    let total = beta["bytes_a"].as_u64().unwrap() + beta["bytes_b"].as_u64().unwrap();
    let want = (1000.0 * common as f64 / total as f64).round() / 10.0;
    assert_eq!(beta["percent"].as_f64(), Some(want));
    assert!(want > 90.0 && want < 100.0, "{beta}");
    assert_eq!(
        (beta["same"].as_u64(), beta["changed"].as_u64()),
        (Some(3), Some(1))
    );
    assert!(top["percent"].as_f64().unwrap() < want, "{top}");
    assert_eq!(top["children_left_out"], 0);
    assert!(kids
        .iter()
        .all(|c| c["children"].as_array().unwrap().is_empty()));
    let txt = read(&work, "report.txt");
    let lines: Vec<&str> = txt.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("/backup  <->  "))
        .unwrap();
    let alpha = format!(
        "    = {}/backup/alpha-2023  =  {}/projects/alpha  100.0%",
        repo.display(),
        repo.display()
    );
    assert!(lines[at + 2].starts_with(&alpha), "{txt}");
    let beta_line = format!(
        "    ~ {}/backup/beta-old  <->  {}/projects/beta  {want:.1}%",
        repo.display(),
        repo.display()
    );
    assert!(lines[at + 3].starts_with(&beta_line), "{txt}");
    let tsv = read(&work, "report.tsv");
    let kinds: Vec<&str> = tsv
        .lines()
        .skip(1)
        .take(3)
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["folder-pair", "folder-child-1", "folder-child-1"],
        "{tsv}"
    );
}

#[test]
fn a_pair_inside_two_identical_folders_is_not_listed_again() {
    // backup/alpha-2023 is a copy of projects/alpha, with a sub-folder:
    // the pair of sub-folders is inside it and adds nothing.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    backups_of_projects(&repo);
    for i in 0..3u64 {
        let body = text(900 + i, 30);
        write(&repo.join(format!("projects/alpha/lib/g{i}.txt")), &body);
        write(&repo.join(format!("backup/alpha-2023/lib/g{i}.txt")), &body);
    }
    let work = dir.path().join("work");
    let j = report(&repo, &work);
    let top = &j["folders"][0];
    let kids = top["children"].as_array().unwrap();
    assert_eq!(kids.len(), 2, "{top}");
    assert_eq!(kids[0]["percent"].as_f64(), Some(100.0));
    assert_eq!(kids[0]["children"].as_array().unwrap().len(), 0, "{top}");
    let txt = read(&work, "report.txt");
    assert!(!txt.contains("/lib  "), "{txt}");
}

#[test]
fn every_child_pair_is_in_json_and_tsv_twenty_in_the_text() {
    // 25 identical sub-folders under backup/ and projects/, and one
    // folder of its own on each side: the pair is not identical.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    for k in 0..25u64 {
        let body = text(2000 + k, 20 + k as usize);
        for side in ["projects", "backup"] {
            write(&repo.join(format!("{side}/s{k:02}/f.txt")), &body);
        }
    }
    write(&repo.join("projects/own/x.txt"), &text(3000, 40));
    write(&repo.join("backup/mine/y.txt"), &text(3001, 40));
    let work = dir.path().join("work");
    let j = report(&repo, &work);
    let folders = j["folders"].as_array().unwrap();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let top = &folders[0];
    assert_eq!(top["children"].as_array().unwrap().len(), 25, "{top}");
    assert_eq!(top["children_left_out"], 0);
    let tsv = read(&work, "report.tsv");
    let rows = tsv
        .lines()
        .filter(|l| l.split('\t').nth(1) == Some("folder-child-1"))
        .count();
    assert_eq!(rows, 25, "{tsv}");
    let txt = read(&work, "report.txt");
    let listed = txt
        .lines()
        .filter(|l| l.starts_with("    = ") && l.contains("/s") && l.contains("  =  "))
        .count();
    assert_eq!(listed, 20, "{txt}");
    let more =
        "... and 5 more pairs inside (at most 20 a pair here): in report.json and report.tsv";
    assert!(txt.contains(more), "{txt}");
}
