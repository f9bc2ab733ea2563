//! A module run through a formatter (Django 3.2 → 4.0 ran `black` on its
//! tests: its `modeladmin/test_checks.py` keeps 67 % of its lines and
//! no chunk): a 20 KB Python file and its version with one line in three
//! re-quoted or re-indented share no chunk the analysis keeps, and are
//! over 4 KiB. With the line source on files of any size (the default,
//! `--line-pairs-below any`) the pair is a candidate, also when the
//! contents are joined in groups to stay within a small `--capacity`, and
//! fsim-verify gives it the exact bytes of the lines kept; at
//! `--line-pairs-below 4K` it is not.

use crate::common;

use common::*;
use std::collections::HashMap;
use std::path::Path;

/// The module before and after, and the bytes of the lines the second
/// keeps of the first.
fn module() -> (String, String, u64) {
    let (mut before, mut after, mut kept) = (String::new(), String::new(), 0u64);
    let mut j = 0;
    for i in 0..130 {
        for line in [
            format!("    def test_fieldsets_{i}(self):\n"),
            format!("        class Admin{i}(ModelAdmin):\n"),
            format!("            fieldsets = ('General {i}', {{'fields': ('name_{i}',)}})\n"),
            format!("        self.assertIsInvalid(Admin{i}, Model, 'admin.E{i:03}')\n"),
            "\n".to_string(),
        ] {
            let changed = if j % 3 != 1 {
                kept += line.len() as u64;
                line.clone()
            } else if line.contains('\'') {
                line.replace('\'', "\"")
            } else {
                format!("    {line}")
            };
            before.push_str(&line);
            after.push_str(&changed);
            j += 1;
        }
    }
    (before, after, kept)
}

fn analyze(work: &Path, out: &str, extra: &[&str]) -> HashMap<(u32, u32), Vec<String>> {
    let mut c = fsim("fsim-analyze");
    c.arg("-q")
        .arg("--files")
        .arg(work.join("files.tsv"))
        .args(extra)
        .arg("-o")
        .arg(work.join(out))
        .arg(work.join("bins.tsv"));
    run_ok(c, None);
    pair_fields(&work.join(out))
}

#[test]
fn a_reformatted_module_of_any_size_is_a_candidate() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let work = t.path().join("work");
    let (before, after, kept) = module();
    assert!(before.len() > 20_000, "{}", before.len());
    let share = kept as f64 / before.len().min(after.len()) as f64;
    assert!((0.6..0.72).contains(&share), "{share}");
    for (dir, text) in [("django-3.2", &before), ("django-4.0", &after)] {
        std::fs::create_dir_all(repo.join(dir).join("tests")).unwrap();
        std::fs::write(repo.join(dir).join("tests/test_checks.py"), text).unwrap();
        // A copy the chunks find, so that the analysis has a bin.
        let copy: String = (0..60)
            .map(|i| format!("a copied line {i} of a module\n"))
            .collect();
        std::fs::write(repo.join(dir).join("copy.py"), format!("{copy}# {dir}\n")).unwrap();
    }
    chunk_and_sort(&repo, &work, &[]);
    partition_and_binpack(&work, &[]);
    let table = file_ids(&work.join("files.tsv"));
    let id = |p: &str| table.iter().find(|(k, _)| k.ends_with(p)).unwrap().1;
    let (a, b) = (
        id("django-3.2/tests/test_checks.py"),
        id("django-4.0/tests/test_checks.py"),
    );
    let key = (a.min(b), a.max(b));
    let copies = id("django-3.2/copy.py").min(id("django-4.0/copy.py"));

    let chunks = analyze(&work, "chunks.tsv", &["--no-line-source"]);
    assert!(chunks.keys().any(|&(x, _)| x == copies), "{chunks:?}");
    assert!(!chunks.contains_key(&key), "the chunks find it: {chunks:?}");
    let small = analyze(&work, "small.tsv", &["--line-pairs-below", "4K"]);
    assert!(!small.contains_key(&key), "{small:?}");

    let any = analyze(&work, "pairs.tsv", &["--line-pairs-below", "any"]);
    assert_eq!(any[&key][2], "0", "no chunk evidence: {:?}", any[&key]);
    let head = String::from_utf8(crate::common::read_records(&work.join("pairs.tsv"))).unwrap();
    assert!(
        head.lines()
            .next()
            .unwrap()
            .contains("\tline-pairs-below=any\t"),
        "{head}"
    );
    // The default settings are these.
    analyze(&work, "default.tsv", &[]);
    assert_eq!(
        std::fs::read(work.join("default.tsv")).unwrap(),
        crate::common::read_records(&work.join("pairs.tsv")),
        "the default finds it"
    );
    // In groups of contents (a 16 KiB budget): the same pairs file.
    analyze(
        &work,
        "pairs-groups.tsv",
        &["--line-pairs-below", "any", "--capacity", "16K"],
    );
    assert_eq!(
        std::fs::read(work.join("pairs-groups.tsv")).unwrap(),
        crate::common::read_records(&work.join("pairs.tsv"))
    );

    let mut c = fsim("fsim-verify");
    c.args(["-q", "--files"])
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(work.join("verified.tsv"))
        .arg(work.join("pairs.tsv"));
    run_ok(c, None);
    let v = pair_fields(&work.join("verified.tsv"));
    assert_eq!(v[&key][4], kept.to_string(), "{:?}", v[&key]);
    assert_eq!(v[&key][5], "exact");
}
