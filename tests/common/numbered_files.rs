//! A file table of numbered text files for the report tests that write
//! their pairs by hand (tests/heavy/report_memory.rs, tests/heavy/html_browser.rs).

use fsim::formats::{FileEntry, FileType};

/// Files 0..n, `docs/partNN/fileNNNNNN.txt`, of the sizes `size` gives,
/// with distinct content hashes (so distinct cluster ids).
pub fn numbered_files(n: u32, size: impl Fn(u32) -> u64) -> Vec<FileEntry> {
    (0..n)
        .map(|id| FileEntry {
            id,
            size: size(id),
            mtime_s: 1,
            mtime_ns: 0,
            content: (id as u128 + 1) * 0x9e37_79b9_7f4a_7c15,
            ftype: FileType::Text,
            view: fsim::formats::FileView::raw(size(id)),
            path: format!("docs/part{:02}/file{id:06}.txt", id % 100).into_bytes(),
        })
        .collect()
}
