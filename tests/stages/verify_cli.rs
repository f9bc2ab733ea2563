//! fsim-verify end to end: fsim-chunk makes a real file table of a temp
//! dir, pairs are written by hand (fsim-analyze is another stage), and the
//! exact figures are checked against a plain O(n·m) dynamic-programming LCS
//! of lines. Also: vanished and modified files, the size-ratio filter,
//! byte-identical output for any -j, regions, binary files, and the report
//! reading verified pairs.

use fsim::formats::{hex128, mix128};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin(name: &str) -> Command {
    Command::new(match name {
        "fsim-chunk" => env!("CARGO_BIN_EXE_fsim-chunk"),
        "fsim-verify" => env!("CARGO_BIN_EXE_fsim-verify"),
        "fsim-report" => env!("CARGO_BIN_EXE_fsim-report"),
        other => panic!("unknown binary {other}"),
    })
}

fn run(mut c: Command) -> Output {
    let dbg = format!("{c:?}");
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("cannot run {dbg}: {e}"));
    assert!(
        out.status.success(),
        "command failed: {dbg}\nstatus: {}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Deterministic pseudo-random numbers.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A text of `n` lines: unique lines of varying length, some blank lines.
fn base_text(rng: &mut Rng, n: usize, tag: &str) -> Vec<String> {
    (0..n)
        .map(|i| {
            if i % 9 == 8 {
                "\n".to_string()
            } else {
                let words = 1 + rng.next(12) as usize;
                let mut l = format!("{tag} line {i}:");
                for _ in 0..words {
                    l.push_str(&format!(" w{}", rng.next(10_000)));
                }
                l.push('\n');
                l
            }
        })
        .collect()
}

/// Delete, insert and modify a few lines (no moves).
fn edit(rng: &mut Rng, lines: &[String], edits: usize, tag: &str) -> Vec<String> {
    let mut v = lines.to_vec();
    for e in 0..edits {
        let at = rng.next(v.len().max(1) as u64) as usize;
        match rng.next(3) {
            0 if !v.is_empty() => {
                v.remove(at);
            }
            1 if !v.is_empty() => v[at] = format!("{tag} modified {e} {}\n", rng.next(1 << 30)),
            _ => v.insert(at, format!("{tag} inserted {e} {}\n", rng.next(1 << 30))),
        }
    }
    v
}

/// Reference: bytes of a longest common subsequence of lines, by DP.
fn dp_lcs_bytes(a: &[u8], b: &[u8]) -> u64 {
    let la: Vec<&[u8]> = a.split_inclusive(|&c| c == b'\n').collect();
    let lb: Vec<&[u8]> = b.split_inclusive(|&c| c == b'\n').collect();
    let mut prev = vec![0u64; lb.len() + 1];
    let mut cur = vec![0u64; lb.len() + 1];
    for x in &la {
        for j in 1..=lb.len() {
            cur[j] = if *x == lb[j - 1] {
                prev[j - 1] + x.len() as u64
            } else {
                prev[j].max(cur[j - 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[lb.len()]
}

/// The repository: files written, chunked; returns (dir, file table, paths by id).
struct Repo {
    dir: tempfile::TempDir,
    files: PathBuf,
    paths: Vec<PathBuf>,
    sizes: Vec<u64>,
    header_params: String,
}

fn make_repo(contents: &[(&str, Vec<u8>)]) -> Repo {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    for (name, data) in contents {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, data).unwrap();
    }
    chunk_repo(dir, &root)
}

/// Chunk the files under `root` (inside `dir`).
fn chunk_repo(dir: tempfile::TempDir, root: &Path) -> Repo {
    let files = dir.path().join("files.tsv");
    let mut c = bin("fsim-chunk");
    c.args(["-q", "--avg-size", "100", "--files-out"])
        .arg(&files)
        .arg("-o")
        .arg(dir.path().join("chunks.tsv"))
        .arg(root);
    run(c);
    let table = std::fs::read_to_string(&files).unwrap();
    let mut paths = Vec::new();
    let mut sizes = Vec::new();
    let mut header_params = String::new();
    for l in table.lines() {
        if let Some(h) = l.strip_prefix("#fsim files v4") {
            header_params = h.to_string();
        } else if !l.starts_with('#') {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f[0].parse::<usize>().unwrap(), paths.len());
            sizes.push(f[1].parse().unwrap());
            paths.push(PathBuf::from(f[f.len() - 1]));
        }
    }
    Repo {
        dir,
        files,
        paths,
        sizes,
        header_params,
    }
}

impl Repo {
    fn id(&self, name: &str) -> u32 {
        self.paths
            .iter()
            .position(|p| p.ends_with(name))
            .unwrap_or_else(|| panic!("{name} not in the file table")) as u32
    }

    /// Write a pairs file (sorted by (a, b)) with a fake chunk lower bound.
    fn pairs(&self, pairs: &[(&str, &str)]) -> PathBuf {
        let mut v: Vec<(u32, u32)> = pairs
            .iter()
            .map(|(x, y)| {
                let (a, b) = (self.id(x), self.id(y));
                (a.min(b), a.max(b))
            })
            .collect();
        v.sort();
        let mut s = format!(
            "#fsim pairs v1{}\tmin-bytes=0\tmin-percent=0\tpercent-of=smaller\n",
            self.header_params
        );
        let mut digest: u128 = 0;
        for &(a, b) in &v {
            let common = 7u64; // a lower bound, as fsim-analyze would give
            s.push_str(&format!(
                "{a:010}\t{b:010}\t{}\t{}\t{common}\t1\n",
                self.sizes[a as usize], self.sizes[b as usize]
            ));
            digest = digest.wrapping_add(mix128(
                ((a as u128) << 96) | ((b as u128) << 64) | common as u128,
            ));
        }
        s.push_str(&format!(
            "#end pairs\tpairs={}\tdigest={}\n",
            v.len(),
            hex128(digest)
        ));
        let p = self.dir.path().join("pairs.tsv");
        std::fs::write(&p, s).unwrap();
        p
    }

    /// fsim-verify on `pairs`; every pair is verified (`--min-percent 0`)
    /// unless `args` set a threshold (the binary's default is the report's).
    fn verify(&self, pairs: &Path, args: &[&str]) -> (String, String) {
        let mut c = bin("fsim-verify");
        c.arg("--files").arg(&self.files);
        if !args.contains(&"--min-percent") {
            c.args(["--min-percent", "0"]);
        }
        c.args(args).arg(pairs);
        let out = run(c);
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }
}

/// Data lines of a verified pairs file, split into fields.
fn records(out: &str) -> Vec<Vec<String>> {
    assert!(out.starts_with("#fsim pairs v1\t"), "{out}");
    assert!(out.lines().next().unwrap().contains("\tverified=1"));
    assert!(out
        .lines()
        .last()
        .unwrap()
        .starts_with("#end pairs\tpairs="));
    out.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

fn text_corpus() -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng(2024);
    let base = base_text(&mut rng, 300, "alpha");
    let other = base_text(&mut rng, 120, "beta");
    let join = |v: &[String]| v.concat().into_bytes();
    let mut rng2 = Rng(7);
    vec![
        ("a/base.txt", join(&base)),
        ("a/few-edits.txt", join(&edit(&mut rng2, &base, 5, "x"))),
        ("a/many-edits.txt", join(&edit(&mut rng2, &base, 80, "y"))),
        ("b/half.txt", join(&base[..150])),
        ("b/other.txt", join(&other)),
        ("b/mixed.txt", {
            let mut v = other[..60].to_vec();
            v.extend_from_slice(&base[100..200]);
            join(&v)
        }),
        ("c/no-newline.txt", {
            let mut v = join(&base[..40]);
            v.pop();
            v
        }),
    ]
}

const ALL_PAIRS: &[(&str, &str)] = &[
    ("a/base.txt", "a/few-edits.txt"),
    ("a/base.txt", "a/many-edits.txt"),
    ("a/base.txt", "b/half.txt"),
    ("a/base.txt", "b/mixed.txt"),
    ("a/base.txt", "c/no-newline.txt"),
    ("a/few-edits.txt", "a/many-edits.txt"),
    ("b/half.txt", "b/mixed.txt"),
    ("b/other.txt", "b/mixed.txt"),
    ("a/base.txt", "b/other.txt"),
];

#[test]
fn exact_figures_match_a_dp_lcs_of_lines() {
    let corpus = text_corpus();
    let repo = make_repo(&corpus);
    let pairs = repo.pairs(ALL_PAIRS);
    let regions = repo.dir.path().join("regions.tsv");
    let (out, err) = repo.verify(&pairs, &["-j2", "--regions", regions.to_str().unwrap()]);
    assert!(
        err.contains("9 pairs read, 0 dropped by size ratio, 9 verified"),
        "{err}"
    );
    let recs = records(&out);
    assert_eq!(recs.len(), ALL_PAIRS.len());
    let content = |id: &str| std::fs::read(&repo.paths[id.parse::<usize>().unwrap()]).unwrap();
    let mut exact_by_pair = std::collections::HashMap::new();
    for r in &recs {
        assert_eq!(r.len(), 8, "{r:?}");
        assert_eq!(r[4], "7", "field 5 keeps the chunk lower bound");
        assert_eq!(r[7], "exact");
        let (a, b) = (content(&r[0]), content(&r[1]));
        let want = dp_lcs_bytes(&a, &b);
        assert_eq!(r[6].parse::<u64>().unwrap(), want, "pair {} {}", r[0], r[1]);
        exact_by_pair.insert((r[0].clone(), r[1].clone()), want);
    }
    // Known relations: half is wholly inside base.
    let key = |x: &str, y: &str| {
        let (a, b) = (repo.id(x), repo.id(y));
        (format!("{:010}", a.min(b)), format!("{:010}", a.max(b)))
    };
    let half = repo.sizes[repo.id("b/half.txt") as usize];
    assert_eq!(exact_by_pair[&key("a/base.txt", "b/half.txt")], half);
    // Only blank lines are shared by unrelated texts.
    assert!(exact_by_pair[&key("a/base.txt", "b/other.txt")] < 20);

    // Regions: the bytes agree, they add up to the exact figure.
    let rtext = std::fs::read_to_string(&regions).unwrap();
    assert!(rtext.starts_with("#fsim regions v1\t"));
    assert!(rtext
        .lines()
        .last()
        .unwrap()
        .starts_with("#end regions\tregions="));
    let mut sums = std::collections::HashMap::new();
    for l in rtext.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = l.split('\t').collect();
        let (a, b) = (content(f[0]), content(f[1]));
        let (oa, ob, len): (usize, usize, usize) = (
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
        );
        assert!(len > 0);
        assert_eq!(a[oa..oa + len], b[ob..ob + len], "region {l}");
        *sums
            .entry((f[0].to_string(), f[1].to_string()))
            .or_insert(0u64) += len as u64;
    }
    for (k, v) in &exact_by_pair {
        assert_eq!(sums.get(k).copied().unwrap_or(0), *v, "regions of {k:?}");
    }
}

#[test]
fn output_is_identical_for_any_jobs() {
    let repo = make_repo(&text_corpus());
    let pairs = repo.pairs(ALL_PAIRS);
    let r1 = repo.dir.path().join("r1.tsv");
    let r4 = repo.dir.path().join("r4.tsv");
    let (o1, _) = repo.verify(&pairs, &["-j1", "-q", "--regions", r1.to_str().unwrap()]);
    let (o4, _) = repo.verify(
        &pairs,
        &[
            "-j4",
            "-q",
            "--memory",
            "1k",
            "--regions",
            r4.to_str().unwrap(),
        ],
    );
    assert_eq!(o1, o4);
    assert_eq!(std::fs::read(&r1).unwrap(), std::fs::read(&r4).unwrap());
}

/// The benchmark's corpus (`fsim-gen --versions`): each document with its
/// two versions, the three pairs of each. Enough pairs for several units of
/// work, so a version read as b in one group and needed as a in the next
/// may sit in the other worker's cache, or in none (`--memory 1k`): the
/// figures agree with the DP and the output does not change.
#[test]
fn versions_corpus_every_pair_exact_for_any_jobs_and_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let spec = fsim_tools::corpus::Bulk {
        docs: 70,
        avg_size: 2000,
        dirs: 7,
        seed: 11,
    };
    fsim_tools::corpus::generate_versions(&root, &spec).unwrap();
    let repo = chunk_repo(dir, &root);
    assert_eq!(repo.paths.len(), 210);
    let names: Vec<[String; 3]> = (0..70)
        .map(|i| [0, 1, 2].map(|v| format!("d{:03}/v{i:07}-{v}.txt", i % 7)))
        .collect();
    let pairs: Vec<(&str, &str)> = names
        .iter()
        .flat_map(|[d, v1, v2]| [(d.as_str(), v1.as_str()), (d, v2), (v1, v2)])
        .collect();
    let pairs = repo.pairs(&pairs);
    let (o2, err) = repo.verify(&pairs, &["-j2"]);
    assert!(
        err.contains("210 pairs read, 0 dropped by size ratio, 210 verified"),
        "{err}"
    );
    for r in records(&o2) {
        assert_eq!(r[7], "exact");
        // The bytes fsim-verify compares: the view (prose as sentences).
        let content = |id: &str| {
            let raw = std::fs::read(&repo.paths[id.parse::<usize>().unwrap()]).unwrap();
            fsim::content::view(&raw, &fsim::content::Limits::default()).bytes
        };
        let (a, b) = (content(&r[0]), content(&r[1]));
        assert_ne!(a, b, "versions differ from their document");
        assert_eq!(
            r[6].parse::<u64>().unwrap(),
            dp_lcs_bytes(&a, &b),
            "pair {} {}",
            r[0],
            r[1]
        );
    }
    for args in [&["-j1", "-q"][..], &["-j3", "-q", "--memory", "1k"]] {
        assert_eq!(repo.verify(&pairs, args).0, o2, "{args:?}");
    }
}

#[test]
fn vanished_file_keeps_the_lower_bound_with_a_warning() {
    let repo = make_repo(&text_corpus());
    let pairs = repo.pairs(&[
        ("a/base.txt", "a/few-edits.txt"),
        ("a/base.txt", "b/half.txt"),
        ("b/half.txt", "b/mixed.txt"),
    ]);
    let gone = &repo.paths[repo.id("b/half.txt") as usize];
    std::fs::remove_file(gone).unwrap();
    let (out, err) = repo.verify(&pairs, &["-j2"]);
    let warning = format!(
        "fsim-verify: warning: {}: vanished or unreadable since chunking",
        gone.display()
    );
    assert!(err.contains(&warning), "{err}");
    assert!(err.contains("pair kept as a lower bound"), "{err}");
    assert_eq!(
        err.matches(&warning).count(),
        1,
        "one warning per file: {err}"
    );
    assert!(
        err.contains("1 verified") && err.contains("2 lower-bound only"),
        "{err}"
    );
    let half = format!("{:010}", repo.id("b/half.txt"));
    for r in records(&out) {
        if r[0] == half || r[1] == half {
            assert_eq!(r[7], "lower-bound");
            assert_eq!(r[6], r[4], "no exact figure: the chunk lower bound stays");
        } else {
            assert_eq!(r[7], "exact");
        }
    }
}

#[test]
fn modified_file_keeps_the_lower_bound_with_a_warning() {
    let repo = make_repo(&text_corpus());
    let pairs = repo.pairs(&[("a/base.txt", "a/few-edits.txt")]);
    let p = &repo.paths[repo.id("a/few-edits.txt") as usize];
    let before = repo.sizes[repo.id("a/few-edits.txt") as usize];
    let mut data = std::fs::read(p).unwrap();
    data.extend_from_slice(b"one more line\n");
    std::fs::write(p, &data).unwrap();
    let (out, err) = repo.verify(&pairs, &[]);
    let warning = format!(
        "fsim-verify: warning: {}: changed since chunking (size {before} -> {}); pair kept as a lower bound",
        p.display(),
        data.len()
    );
    assert!(err.contains(&warning), "{err}");
    let r = &records(&out)[0];
    assert_eq!((r[6].as_str(), r[7].as_str()), ("7", "lower-bound"));
}

#[test]
fn size_ratio_filter_drops_pairs_unread() {
    let repo = make_repo(&text_corpus());
    // half.txt is ~50% of base; no-newline.txt ~13%: cannot reach 40% of the larger.
    let pairs = repo.pairs(&[
        ("a/base.txt", "b/half.txt"),
        ("a/base.txt", "c/no-newline.txt"),
    ]);
    // Deleted, yet no warning: the pair is dropped before anything is read.
    std::fs::remove_file(&repo.paths[repo.id("c/no-newline.txt") as usize]).unwrap();
    let (out, err) = repo.verify(&pairs, &["--min-percent", "40", "--percent-of", "larger"]);
    assert!(!err.contains("warning"), "{err}");
    assert!(
        err.contains("2 pairs read, 1 dropped by size ratio, 1 verified"),
        "{err}"
    );
    let recs = records(&out);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0][1], format!("{:010}", repo.id("b/half.txt")));
}

#[test]
fn binary_and_hostile_files() {
    let mut rng = Rng(5);
    let bin_a: Vec<u8> = (0..50_000).map(|_| rng.next(256) as u8).collect();
    let mut bin_b = bin_a[..20_000].to_vec();
    bin_b.extend_from_slice(b"\0\0inserted\0");
    bin_b.extend_from_slice(&bin_a[20_000..]);
    // A 2 MB text file that is one line, and a copy with one byte changed.
    let long: Vec<u8> = (0..2_000_000).map(|_| b'a' + rng.next(26) as u8).collect();
    let mut long2 = long.clone();
    long2[1_000_000] = b'#';
    let repo = make_repo(&[
        ("bin/a.bin", bin_a.clone()),
        ("bin/b.bin", bin_b.clone()),
        ("long/one-line.txt", long.clone()),
        ("long/one-line-edited.txt", long2.clone()),
    ]);
    let pairs = repo.pairs(&[
        ("bin/a.bin", "bin/b.bin"),
        ("long/one-line.txt", "long/one-line-edited.txt"),
    ]);
    let (out, _) = repo.verify(&pairs, &["-q"]);
    for r in records(&out) {
        assert_eq!(r[7], "exact");
        let common: u64 = r[6].parse().unwrap();
        let (sa, sb): (u64, u64) = (r[2].parse().unwrap(), r[3].parse().unwrap());
        // Only the pieces around the edit are lost.
        assert!(common <= sa.min(sb), "{r:?}");
        assert!(common + 2_000 >= sa.min(sb), "{r:?}");
    }
}

#[test]
fn report_shows_exact_figures() {
    let repo = make_repo(&text_corpus());
    let pairs = repo.pairs(&[("a/base.txt", "a/few-edits.txt")]);
    let verified = repo.dir.path().join("verified.tsv");
    repo.verify(&pairs, &["-q", "-o", verified.to_str().unwrap()]);
    let mut c = bin("fsim-report");
    c.arg("--files")
        .arg(&repo.files)
        .args(["-q", "--format", "json"])
        .arg(&verified);
    let json: serde_json::Value = serde_json::from_slice(&run(c).stdout).unwrap();
    let link = &json["clusters"][0]["links"][0];
    assert_eq!(link["exact"], true);
    let recs = records(&std::fs::read_to_string(&verified).unwrap());
    assert_eq!(link["bytes_in_common"].to_string(), recs[0][6]);
    let mut c = bin("fsim-report");
    c.arg("--files").arg(&repo.files).arg("-q").arg(&verified);
    let text = String::from_utf8(run(c).stdout).unwrap();
    assert!(text.contains("), exact"), "{text}");
}

/// Two 100 MB text files (a million lines each) differing by a few lines:
/// verified exactly, in bounded memory, each line of difference costing
/// exactly its bytes.
#[test]
fn hundred_megabyte_files() {
    let mut rng = Rng(11);
    let mut a = Vec::with_capacity(101 << 20);
    let mut n = 0u64;
    while a.len() < 100 << 20 {
        let len = 20 + rng.next(160) as usize;
        a.extend((0..len).map(|_| b'a' + rng.next(26) as u8));
        a.extend_from_slice(format!(" {n}\n").as_bytes());
        n += 1;
    }
    // b: three lines replaced (each by a line of the same length).
    let mut b = a.clone();
    let mut removed = 0u64;
    for frac in [0.1, 0.5, 0.9] {
        let at = (a.len() as f64 * frac) as usize;
        let start = a[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let end = start + a[start..].iter().position(|&c| c == b'\n').unwrap() + 1;
        for c in &mut b[start..end - 1] {
            *c = b'#';
        }
        removed += (end - start) as u64;
    }
    let size = a.len() as u64;
    let repo = make_repo(&[("big/a.txt", a), ("big/b.txt", b)]);
    let pairs = repo.pairs(&[("big/a.txt", "big/b.txt")]);
    let (out, _) = repo.verify(&pairs, &["-q", "--memory", "64M"]);
    let r = &records(&out)[0];
    assert_eq!(r[7], "exact", "{r:?}");
    assert_eq!(r[6].parse::<u64>().unwrap(), size - removed, "{r:?}");
}

/// Files read: the number in the summary line.
fn files_read(err: &str) -> u64 {
    let i = err.find(" files read").expect(err);
    err[..i].rsplit(' ').next().unwrap().parse().unwrap()
}

/// Reads proportional to the files, not to the pairs: 400 overlapping
/// extracts, every pair of them (79,800 pairs, more than one batch of
/// work), each file in ~400 pairs. A named pairs file is read twice (the
/// first time for the whole input's plan), so every file is read once
/// however far apart its pairs are; from standard input the plan is per
/// batch. The output is the same in every case.
#[test]
fn each_file_read_about_once_across_batches() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let spec = fsim_tools::corpus::Overlap {
        files: 400,
        body: 20_000,
        extract: 600,
        edits: 1,
        dirs: 5,
        seed: 3,
    };
    fsim_tools::corpus::generate_overlap(&root, &spec).unwrap();
    let repo = chunk_repo(dir, &root);
    let n = repo.paths.len();
    assert_eq!(n, 400);
    let names: Vec<String> = repo
        .paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let mut all = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            all.push((names[i].as_str(), names[j].as_str()));
        }
    }
    let pairs = repo.pairs(&all);
    let (o1, err) = repo.verify(&pairs, &["-j1"]);
    assert_eq!(files_read(&err), n as u64, "{err}");
    let (o2, err) = repo.verify(&pairs, &["-j2"]);
    assert_eq!(o2, o1);
    // Two workers that miss the same file at the same moment both read it:
    // here both start on groups that go through the same files in the same
    // order, so at most once per worker (0.1% more reads on 100,000 files).
    assert!(files_read(&err) <= 2 * n as u64, "{err}");
    let (o3, _) = repo.verify(&pairs, &["-j3", "-q", "--memory", "1k"]);
    assert_eq!(o3, o1);
    // A threshold: pairs whose upper bound (the bytes of the tokens of each
    // file found in the other) is below it stop before the diff; the pairs
    // written are exactly those of the full run at or above it.
    let (o60, err) = repo.verify(&pairs, &["-j2", "--min-percent", "60"]);
    let want: Vec<Vec<String>> = records(&o1)
        .into_iter()
        .filter(|r| {
            let n = |i: usize| r[i].parse::<u64>().unwrap();
            100.0 * n(6) as f64 / n(2).min(n(3)) as f64 >= 60.0
        })
        .collect();
    assert!(!want.is_empty() && want.len() < records(&o1).len());
    assert_eq!(records(&o60), want);
    assert!(
        err.contains(" stopped early (an upper bound below the threshold)"),
        "{err}"
    );
    // Standard input: one plan per batch, more reads, same output.
    let mut c = bin("fsim-verify");
    c.arg("--files")
        .arg(&repo.files)
        .args(["--min-percent", "0", "-j2", "-"])
        .stdin(std::fs::File::open(&pairs).unwrap());
    let out = run(c);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), o1);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(files_read(&err) > n as u64, "{err}");
}

/// Binary bytes: a quarter NULs, the rest random.
fn binary_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| match rng.next(256) as u8 {
            v if v < 64 => 0,
            v => v,
        })
        .collect()
}

/// Binary pairs get the byte measure, with known answers: a
/// byte inserted every 200 bytes costs nothing of a (a is a subsequence of
/// b), a replaced 1 KB block costs its 1,024 bytes (what `cmp -l | wc -l`
/// counts); every region a reviewer checks holds equal bytes, in order,
/// and they add up to the figure. An earlier output measured by pieces
/// (no `verify-binary`) is not reused.
#[test]
fn binary_pairs_measured_in_bytes() {
    let mut rng = Rng(17);
    let a = binary_bytes(&mut rng, 100_000);
    let mut inserted = Vec::new();
    for (k, part) in a.chunks(200).enumerate() {
        if k > 0 {
            let (before, after) = (*inserted.last().unwrap(), part[0]);
            inserted.push((1u8..=255).find(|x| *x != before && *x != after).unwrap());
        }
        inserted.extend_from_slice(part);
    }
    let mut replaced = a.clone();
    for x in &mut replaced[40_000..41_024] {
        *x ^= 0xff;
    }
    let repo = make_repo(&[
        ("bin/a.bin", a.clone()),
        ("bin/inserted.bin", inserted.clone()),
        ("bin/replaced.bin", replaced.clone()),
    ]);
    let pairs = repo.pairs(&[
        ("bin/a.bin", "bin/inserted.bin"),
        ("bin/a.bin", "bin/replaced.bin"),
    ]);
    let regions = repo.dir.path().join("regions.tsv");
    let (out, _) = repo.verify(&pairs, &["-q", "--regions", regions.to_str().unwrap()]);
    assert!(out
        .lines()
        .next()
        .unwrap()
        .contains("\tverify-binary=byte-runs"));
    let data = |id: usize| std::fs::read(&repo.paths[id]).unwrap();
    let mut want = std::collections::HashMap::new();
    want.insert(repo.id("bin/inserted.bin"), 100_000u64);
    want.insert(repo.id("bin/replaced.bin"), 100_000 - 1_024);
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    let regions = std::fs::read_to_string(&regions).unwrap();
    assert!(regions
        .lines()
        .next()
        .unwrap()
        .contains("\tverify-binary=byte-runs"));
    for r in &recs {
        assert_eq!(r[7], "exact", "{r:?}");
        let (ia, ib): (usize, usize) = (r[0].parse().unwrap(), r[1].parse().unwrap());
        let figure: u64 = r[6].parse().unwrap();
        assert_eq!(figure, want[&(ib.max(ia) as u32)], "{r:?}");
        // The reviewer's check of the regions.
        let (da, db) = (data(ia), data(ib));
        let (mut end_a, mut end_b, mut sum) = (0usize, 0usize, 0u64);
        for l in regions.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<usize> = l.split('\t').map(|x| x.parse().unwrap()).collect();
            if (f[0], f[1]) != (ia, ib) {
                continue;
            }
            let (oa, ob, n) = (f[2], f[3], f[4]);
            assert!(oa >= end_a && ob >= end_b, "{l}: out of order");
            assert_eq!(da[oa..oa + n], db[ob..ob + n], "{l}: bytes differ");
            (end_a, end_b) = (oa + n, ob + n);
            sum += n as u64;
        }
        assert_eq!(sum, figure, "{r:?}");
    }

    // An earlier output without `verify-binary`: verified again, warned.
    let old_files = repo.dir.path().join("old-files.tsv");
    std::fs::copy(&repo.files, &old_files).unwrap();
    let old = repo.dir.path().join("old-verified.tsv");
    std::fs::write(&old, out.replace("\tverify-binary=byte-runs", "")).unwrap();
    let (again, err) = repo.verify(
        &pairs,
        &[
            "--previous",
            old.to_str().unwrap(),
            "--previous-files",
            old_files.to_str().unwrap(),
        ],
    );
    assert_eq!(again, out);
    assert!(
        err.contains("verified before binary pairs were measured in bytes"),
        "{err}"
    );
    assert!(!err.contains("reused from the earlier run"), "{err}");
    // The same output with the key: reused.
    let cur = repo.dir.path().join("verified.tsv");
    std::fs::write(&cur, &out).unwrap();
    let (again, err) = repo.verify(
        &pairs,
        &[
            "--previous",
            cur.to_str().unwrap(),
            "--previous-files",
            old_files.to_str().unwrap(),
        ],
    );
    assert_eq!(again, out);
    assert!(err.contains("2 reused from the earlier run"), "{err}");
}
