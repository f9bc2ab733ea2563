//! Actions for identical files (issue 28): a shell script a person reviews
//! and runs, never run by fsim (`fsim-report --format sh`, make's
//! `FORMATS=sh`: `report.sh`), as rmlint and fclones offer.
//!
//! Each identical set keeps its first file (file id order: the walk's,
//! paths in byte order) and lists the others as extra copies. Run as it
//! is, the script only says what it would do (`--dry-run`, the default);
//! `--link` replaces each extra copy by a hard link to the kept file,
//! `--remove` removes it. Before acting on a copy it checks, for the copy
//! and the kept file, that the size and the modification time (in
//! seconds) are still those the run recorded, and that the two files are
//! still equal byte for byte (`cmp`): a file that changed since the run is
//! refused and left as it is. A hard link is made beside the copy and
//! renamed over it, so a failed link (another file system) leaves the copy
//! in place.
//!
//! A folder pair that is an identical tree (the same relative paths, each
//! file equal: [`crate::report::folders::TreeCopy`]) is one block, `tree
//! KEPT COPY FILES FUNCTION`: every file of the copy is checked as above
//! against its counterpart, and the copy must still hold exactly the files
//! the run recorded (`find`, anything not a folder); only then is the
//! whole copy replaced by links (`--link`, file by file, each re-checked)
//! or removed (`--remove`, `rm -r` of the copy's folder); anything changed
//! refuses the whole tree. Trees are chosen in report order so that no
//! kept folder is inside, or holds, a removed one (a pair that would is
//! left to its files' sets, with a comment); the identical sets then skip
//! the files of removed trees and keep a file outside them.
//!
//! Members of archives (`a.zip!/m.txt`, issue 27) are never acted on:
//! their paths name no file. A set lists them in a comment and acts only
//! on its files on disk, keeping the first of those; an identical tree
//! inside an archive is left to the sets.
//!
//! Paths are those of the file table (the root as given): run the script
//! from the folder fsim ran in. They are single-quoted byte for byte, so
//! any name (spaces, quotes, newlines, non-UTF-8 bytes) reaches the
//! commands unchanged.

use crate::error::Result;
use crate::report::model::Report;
use crate::report::stream::Buffered;

/// The script's fixed part: options, the check and the action.
const HEAD: &str = r#"#!/bin/sh
# fsim: actions for identical files. fsim never runs this script: review it.
#   sh report.sh            say what would be done (the same as --dry-run)
#   sh report.sh --link     replace each extra copy by a hard link to the kept file
#   sh report.sh --remove   remove each extra copy
# Run it from the folder fsim ran in (paths are as fsim recorded them).
# Before acting on a copy, both files are checked: size and modification
# time as recorded, and equal bytes (cmp). A file that changed is refused.
set -u
mode=dry
case "${1:---dry-run}" in
  --dry-run) ;;
  --link) mode=link ;;
  --remove) mode=remove ;;
  *) echo "usage: sh $0 [--dry-run|--link|--remove]" >&2; exit 2 ;;
esac
acted=0; refused=0
same() { # path size mtime: the file is as recorded
  [ -f "$1" ] && [ ! -L "$1" ] && [ "$(stat -c '%s %Y' -- "$1")" = "$2 $3" ]
}
dup() { # kept size mtime copy mtime
  if ! same "$1" "$2" "$3" || ! same "$4" "$2" "$5" || ! cmp -s -- "$1" "$4"; then
    echo "refused (changed since the run): $4" >&2; refused=$((refused + 1)); return
  fi
  case $mode in
    dry) echo "would replace by a link or remove: $4 (a copy of $1)" ;;
    link) if ln -- "$1" "$4.fsim-link" && mv -f -- "$4.fsim-link" "$4"; then
            acted=$((acted + 1)); else rm -f -- "$4.fsim-link"; refused=$((refused + 1)); fi ;;
    remove) if rm -- "$4"; then acted=$((acted + 1)); else refused=$((refused + 1)); fi ;;
  esac
}
tfile() { # check|link kept size mtime copy mtime: a file of a copied tree
  if ! same "$2" "$3" "$4" || ! same "$5" "$3" "$6" || ! cmp -s -- "$2" "$5"; then
    echo "refused (changed since the run): $5" >&2; tok=1; return
  fi
  [ "$1" = link ] || return 0
  if ln -- "$2" "$5.fsim-link" && mv -f -- "$5.fsim-link" "$5"; then :; else rm -f -- "$5.fsim-link"; tok=1; fi
}
tree() { # kept copy files function: a copy of a whole tree
  tok=0; "$4" check
  case $2 in -*) d=./$2 ;; *) d=$2 ;; esac
  if [ "$(find "$d" ! -type d -exec printf x \; | wc -c)" -ne "$3" ]; then
    echo "refused (files added or removed since the run): $2" >&2; tok=1
  fi
  if [ "$tok" -ne 0 ]; then
    echo "refused (tree changed since the run): $2" >&2; refused=$((refused + $3)); return
  fi
  case $mode in
    dry) echo "would replace by links or remove the whole tree: $2 (a copy of $1, $3 files)" ;;
    link) "$4" link; if [ "$tok" -eq 0 ]; then acted=$((acted + $3)); else refused=$((refused + $3)); fi ;;
    remove) if rm -r -- "$d"; then acted=$((acted + $3)); else refused=$((refused + $3)); fi ;;
  esac
}
"#;

/// The script's last lines: what was done.
const TAIL: &str = r#"echo "fsim: $acted copies handled ($mode), $refused refused" >&2
[ "$refused" -eq 0 ]
"#;

/// `s` single-quoted for the shell, byte for byte.
fn quote(s: &[u8]) -> Vec<u8> {
    let mut q = Vec::with_capacity(s.len() + 2);
    q.push(b'\'');
    for &c in s {
        if c == b'\'' {
            q.extend_from_slice(b"'\\''");
        } else {
            q.push(c);
        }
    }
    q.push(b'\'');
    q
}

/// Whether folder paths `x` and `y` are one, or one holds the other.
fn related(x: &[u8], y: &[u8]) -> bool {
    let (s, l) = if x.len() <= y.len() { (x, y) } else { (y, x) };
    l.starts_with(s) && (l.len() == s.len() || l[s.len()] == b'/')
}

/// An identical tree acted on as a whole: (kept folder, removed folder,
/// kept's first file, copy's first file, files).
type Tree<'r> = (&'r [u8], &'r [u8], u32, u32, u32);

/// The identical trees acted on as wholes (module doc), in report order.
fn trees(report: &Report) -> Vec<Tree<'_>> {
    let mut chosen: Vec<Tree> = Vec::new();
    for p in &report.folders.pairs {
        let Some(t) = p.tree else { continue };
        // A folder inside an archive is no folder on disk: left to the
        // identical sets, which list its members without acting on them.
        let member = |f: u32| report.files.at(f).archive.is_some();
        if member(t.first_a) || member(t.first_b) {
            continue;
        }
        let sides = [
            (&p.a[..], &p.b[..], t.first_a, t.first_b),
            (&p.b[..], &p.a[..], t.first_b, t.first_a),
        ];
        let fits = |kept: &[u8], gone: &[u8]| {
            chosen
                .iter()
                .all(|c| !related(gone, c.0) && !related(gone, c.1) && !related(kept, c.1))
        };
        if let Some(&(k, g, fk, fg)) = sides.iter().find(|s| fits(s.0, s.1)) {
            chosen.push((k, g, fk, fg, t.files));
        }
    }
    chosen
}

/// `kind` and the quoted kept file, its size and mtime, the quoted copy and
/// its mtime, as a line of the script.
fn file_line(report: &Report, kind: &[u8], kept: u32, copy: u32, line: &mut Vec<u8>) {
    let (k, c) = (report.files.at(kept), report.files.at(copy));
    line.extend_from_slice(kind);
    line.extend_from_slice(&quote(k.path));
    line.extend_from_slice(format!(" {} {} ", k.size, report.files.mtime(kept)).as_bytes());
    line.extend_from_slice(&quote(c.path));
    line.extend_from_slice(format!(" {}\n", report.files.mtime(copy)).as_bytes());
}

/// Write the script of `report`'s identical trees and sets to `out`.
pub(crate) fn write(report: &Report, out: &mut Buffered) -> Result<()> {
    out.push(HEAD)?;
    let trees = trees(report);
    let mut line = Vec::new();
    for (n, &(kept, gone, fk, fg, files)) in trees.iter().enumerate() {
        // Escaped paths: a comment line holds no newline.
        out.push(&format!(
            "# identical trees: {} is a copy of {} ({files} files)\ntree_{}() {{\n",
            crate::formats::escape_path_string(gone),
            crate::formats::escape_path_string(kept),
            n + 1
        ))?;
        for i in 0..files {
            line.clear();
            file_line(report, b"  tfile \"$1\" ", fk + i, fg + i, &mut line);
            out.push_bytes(&line)?;
        }
        line.clear();
        line.extend_from_slice(b"}\ntree ");
        line.extend_from_slice(&quote(kept));
        line.push(b' ');
        line.extend_from_slice(&quote(gone));
        line.extend_from_slice(format!(" {files} tree_{}\n", n + 1).as_bytes());
        out.push_bytes(&line)?;
    }
    for p in report.folders.pairs.iter().filter(|p| p.tree.is_some()) {
        if !trees
            .iter()
            .any(|t| (t.0, t.1) == (&p.a[..], &p.b[..]) || (t.1, t.0) == (&p.a[..], &p.b[..]))
        {
            out.push(&format!(
                "# identical trees, left to their files' sets (a folder of another tree): {} and {}\n",
                crate::formats::escape_path_string(&p.a),
                crate::formats::escape_path_string(&p.b)
            ))?;
        }
    }
    let mut gone: Vec<(u32, u32)> = trees.iter().map(|t| (t.3, t.3 + t.4)).collect();
    gone.sort_unstable();
    let removed = |f: u32| {
        let i = gone.partition_point(|r| r.0 <= f);
        i > 0 && f < gone[i - 1].1
    };
    for set in &report.identical {
        let left: Vec<u32> = set.files.iter().copied().filter(|&f| !removed(f)).collect();
        // Members of archives are listed, never linked or removed (their
        // paths name no file), nor kept: the kept file is a file on disk.
        let (inside, left): (Vec<u32>, Vec<u32>) = left
            .into_iter()
            .partition(|&f| report.files.at(f).archive.is_some());
        if left.len() + inside.len() < 2 {
            continue;
        }
        out.push(&format!(
            "# set {}: {} files of {} bytes{}\n",
            set.id,
            set.files.len(),
            set.size,
            if left.len() + inside.len() < set.files.len() {
                format!(
                    " ({} in the trees above)",
                    set.files.len() - left.len() - inside.len()
                )
            } else {
                String::new()
            }
        ))?;
        for &f in &inside {
            out.push(&format!(
                "# inside an archive, not acted on: {}\n",
                crate::formats::escape_path_string(report.files.at(f).path)
            ))?;
        }
        for &f in left.iter().skip(1) {
            line.clear();
            file_line(report, b"dup ", left[0], f, &mut line);
            out.push_bytes(&line)?;
        }
    }
    out.push(TAIL)
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quoting_keeps_every_byte() {
        assert_eq!(quote(b"a b"), b"'a b'");
        assert_eq!(quote(b"it's"), b"'it'\\''s'");
        assert_eq!(quote(b"x\ny\xff"), b"'x\ny\xff'");
    }
}
