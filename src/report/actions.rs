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
//! in place. Folder pairs that are identical trees are named in comments
//! above their files' sets.
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

/// Write the script of `report`'s identical sets to `out`.
pub(crate) fn write(report: &Report, out: &mut Buffered) -> Result<()> {
    out.push(HEAD)?;
    for p in &report.folders.pairs {
        if p.only_a == 0 && p.only_b == 0 && p.changed == 0 {
            // Escaped paths: a comment line holds no newline.
            out.push(&format!(
                "# identical trees: {} and {}\n",
                crate::formats::escape_path_string(&p.a),
                crate::formats::escape_path_string(&p.b)
            ))?;
        }
    }
    let mut line = Vec::new();
    for set in &report.identical {
        let kept = report.files.at(set.files[0]);
        out.push(&format!(
            "# set {}: {} files of {} bytes\n",
            set.id,
            set.files.len(),
            set.size
        ))?;
        for &f in &set.files[1..] {
            let copy = report.files.at(f);
            line.clear();
            line.extend_from_slice(b"dup ");
            line.extend_from_slice(&quote(kept.path));
            line.extend_from_slice(
                format!(" {} {} ", kept.size, report.files.mtime(set.files[0])).as_bytes(),
            );
            line.extend_from_slice(&quote(copy.path));
            line.extend_from_slice(format!(" {}\n", report.files.mtime(f)).as_bytes());
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
