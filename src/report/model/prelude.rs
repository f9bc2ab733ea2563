//! What is read before the pairs ([`Prelude`]): the file table, its
//! collections, the path filters, and the groups found from the table
//! alone (identical sets, names of one file, same content).

use super::{Config, HardLinks, IdenticalSet, OnDisk, SameContent};
use crate::error::{Error, Result};
use crate::formats::files::{read_compact_table, CompactTable};
use crate::formats::headers::FilesTrailer;
use crate::formats::{escape_path_string, hex128, Params};
use std::collections::HashMap;

/// What both ways of building a report read before the pairs: the file
/// table, its collections, the identical sets and the path filters.
pub(crate) struct Prelude {
    pub files: CompactTable,
    pub table_params: Params,
    pub files_name: String,
    pub collections: Vec<crate::formats::collections::Collection>,
    pub coll: Vec<usize>,
    pub sizes: Vec<u64>,
    pub path_ok: Vec<bool>,
    pub identical: Vec<IdenticalSet>,
    pub hard_links: Vec<HardLinks>,
    pub set_of: HashMap<u32, usize>,
    pub same_content: Vec<SameContent>,
    /// The file table's trailer: the walk's counts.
    pub walk: FilesTrailer,
}

pub(crate) fn prelude(config: &Config) -> Result<Prelude> {
    let (files, table_params, trailer) = read_compact_table(&config.files)?;
    // Only the walk's counts: the scan checked the keys it needs, and a
    // table written by a test may give the others loosely.
    let walk = FilesTrailer {
        repeated: trailer.get_u64("repeated"),
        work_folders: trailer.get_u64("work-folders"),
        excluded: trailer.get_u64("excluded"),
        left_out_by: trailer.get("left-out-by").map(str::to_string),
        ..FilesTrailer::default()
    };
    let files_name = config.files.display().to_string();
    let collections = crate::formats::collections::read(&config.files)?;
    let coll = crate::formats::collections::of_files(&collections, files.len())
        .map_err(|m| Error::msg(format!("{files_name}: {m}")))?;
    let sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
    let filters = &config.filters;
    let path_filtered = !filters.include.is_empty() || !filters.exclude.is_empty();
    let path_ok: Vec<bool> = files
        .iter()
        .map(|f| !path_filtered || filters.file_ok(&escape_path_string(f.path)))
        .collect();

    let (identical, hard_links) = identical_sets(&files, &path_ok);
    let mut set_of = HashMap::new();
    for (i, s) in identical.iter().enumerate() {
        set_of.insert(s.files[0], i);
    }
    let same_content = same_content(&files, &path_ok);
    Ok(Prelude {
        files,
        table_params,
        files_name,
        collections,
        coll,
        sizes,
        path_ok,
        identical,
        hard_links,
        set_of,
        same_content,
        walk,
    })
}

/// The identical sets (2.4) of the files `path_ok` keeps, and the names
/// of one file with no other file of their content: equal content hash
/// (raw bytes), not empty on disk (a document with no text is a file like
/// any other). Sets by overhead (largest first), hard links by size, then
/// by first file. The ids are sorted by content: 4 bytes a file, where a
/// map from content to ids cost ~80 (80 MB at a million files, over the
/// report's budget).
pub(crate) fn identical_sets(
    files: &CompactTable,
    path_ok: &[bool],
) -> (Vec<IdenticalSet>, Vec<HardLinks>) {
    let mut ids: Vec<u32> = files
        .iter()
        .filter(|f| f.raw_size > 0 && path_ok[f.id as usize])
        .map(|f| f.id)
        .collect();
    ids.sort_unstable_by_key(|&i| (files.content(i), i));
    let groups = || {
        ids.chunk_by(|&x, &y| files.content(x) == files.content(y))
            .filter(|v| v.len() >= 2)
    };
    // Sized once: grown by doubling, the sets of a million files held
    // half again their bytes while moving (50 MB at the peak).
    let mut identical = Vec::with_capacity(groups().count());
    let mut hard_links = Vec::new();
    for v in groups() {
        let id = hex128(files.content(v[0]))[..10].to_string();
        let (size, disk) = (files.raw_size(v[0]), OnDisk::of(files, v));
        // One file, or one member of an archive, under several names.
        if disk.files + disk.in_archives == 1 {
            let files = v.to_vec();
            hard_links.push(HardLinks { id, size, files });
            continue;
        }
        identical.push(IdenticalSet {
            id,
            size,
            files: v.to_vec(),
            disk,
            folder_pair: None,
        });
    }
    identical.sort_by(|x, y| {
        y.overhead()
            .cmp(&x.overhead())
            .then(x.files[0].cmp(&y.files[0]))
    });
    hard_links.sort_by(|x, y| y.size.cmp(&x.size).then(x.files[0].cmp(&y.files[0])));
    identical.shrink_to_fit();
    (identical, hard_links)
}

/// The "same content, different file" groups of `files` (those `path_ok`
/// keeps): files of one view hash (a raw file's is its content hash, a
/// content view's the file table's view hash) with at least two raw
/// contents. Only the content views' hashes are looked up, so this costs
/// little when few files are documents. Largest content first, then by
/// first file.
pub(crate) fn same_content(files: &CompactTable, path_ok: &[bool]) -> Vec<SameContent> {
    let wanted: std::collections::HashSet<u128> = files
        .view_hashes()
        .iter()
        .filter(|&&(i, _)| path_ok[i as usize])
        .map(|&(_, h)| h)
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut ids: Vec<(u128, u32)> = files
        .iter()
        .filter(|f| f.size > 0 && path_ok[f.id as usize])
        .filter_map(|f| files.view_hash(f.id).map(|h| (h, f.id)))
        .filter(|(h, _)| wanted.contains(h))
        .collect();
    ids.sort_unstable();
    let mut groups: Vec<SameContent> = ids
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|g| {
            g.iter()
                .any(|&(_, i)| files.content(i) != files.content(g[0].1))
        })
        .map(|g| SameContent {
            id: hex128(g[0].0)[..10].to_string(),
            size: files.size(g[0].1),
            files: g.iter().map(|&(_, i)| i).collect(),
        })
        .collect();
    groups.sort_by(|x, y| y.size.cmp(&x.size).then(x.files[0].cmp(&y.files[0])));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::files::FileEntry;
    use crate::formats::views::{FileType, FileView, ViewKind};

    /// A file of `content` and `size` on disk, with a view of `view`
    /// bytes, a hard-link mark and an archive prefix when given.
    fn entry(
        id: u32,
        content: u128,
        size: u64,
        view: u64,
        link: Option<u64>,
        member: bool,
    ) -> FileEntry {
        let mut v = FileView::raw(size);
        if view != size {
            v.kind = ViewKind::Gzip;
        }
        v.link = link.map(|ino| (1, ino));
        v.archive = member.then_some(6);
        FileEntry {
            id,
            size: view,
            mtime_s: 0,
            mtime_ns: 0,
            content,
            ftype: FileType::Text,
            view: v,
            path: format!("a.zip!/f{id}").into_bytes(),
        }
    }

    /// The overhead is the bytes on disk a plan could free: names of one
    /// file count once, archive members and empty views nothing apart.
    #[test]
    fn overhead_counts_each_file_on_disk_once() {
        let mut t = CompactTable::default();
        let files = [
            // One file, three names: no set.
            entry(0, 1, 100, 100, Some(7), false),
            entry(1, 1, 100, 100, Some(7), false),
            entry(2, 1, 100, 100, Some(7), false),
            // A gzip (view 900 bytes), its hard link, a copy, a member.
            entry(3, 2, 300, 900, Some(8), false),
            entry(4, 2, 300, 900, Some(8), false),
            entry(5, 2, 300, 900, None, false),
            entry(6, 2, 300, 900, None, true),
            // A loose file and its copy in an archive: nothing to free.
            entry(7, 3, 50, 50, None, false),
            entry(8, 3, 50, 50, None, true),
            // Documents without text (view empty), byte for byte alike.
            entry(9, 4, 40, 0, None, false),
            entry(10, 4, 40, 0, None, false),
        ];
        for f in &files {
            t.push(f);
        }
        let (sets, links) = identical_sets(&t, &[true; 11]);
        assert_eq!(links.len(), 1);
        assert_eq!((links[0].size, &links[0].files[..]), (100, &[0, 1, 2][..]));
        let figures: Vec<(u64, u64, u32, u32)> = sets
            .iter()
            .map(|s| (s.size, s.overhead(), s.disk.files, s.disk.in_archives))
            .collect();
        assert_eq!(figures, [(300, 300, 2, 1), (40, 40, 2, 0), (50, 0, 1, 1)]);
        assert_eq!(sets[0].disk.other_names, [(4, 3)]);
        assert_eq!(sets[0].disk.name_of(4), Some(3));
        assert_eq!(sets[0].disk.name_of(5), None);
    }
}
