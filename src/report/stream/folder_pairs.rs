//! The folder pairs of the report: the kept links and identical sets fed
//! to [`crate::report::folders`] within what `--memory` leaves the links.

use super::source::Source;
use crate::error::Result;
use crate::io::sorter::SortOptions;
use crate::report::folders::{FolderReport, Folders, SetRef};
use crate::report::model::Report;

/// The folder pairs of the kept links and the identical sets, their
/// credits sorted within what `--memory` leaves the links.
pub(super) fn folder_pairs(report: &Report, source: &mut Source) -> Result<FolderReport> {
    // No link is held meanwhile: what the links may hold is the folder
    // pairs' (`Folders::new` shares it).
    let mut sort = SortOptions::with_memory(report.link_budget());
    sort.tmpdir = report.config.tmpdir.clone();
    let sets: Vec<SetRef> = report
        .identical
        .iter()
        .map(|s| SetRef {
            // The folder figures are in the sizes the links use (a
            // view's), as the folders' bytes are.
            size: report.files.size(s.files[0]),
            files: &s.files,
        })
        .collect();
    let mut folders = Folders::new(&report.files, &sets, &report.set_of, sort)?;
    let mut feed = |folders: &mut Folders| {
        let mut failed = None;
        source.kept(&mut |p| {
            if failed.is_none() {
                failed = folders.link(p.a, p.b, p.common).err();
            }
        })?;
        failed.map_or(Ok(()), Err)
    };
    let groups: Vec<&[u32]> = report
        .clusters
        .iter()
        .map(|c| &c.files[..])
        .chain(report.identical.iter().map(|s| &s.files[..]))
        .collect();
    let mut found = folders.figure(report.config.min_percent, &groups, &mut feed)?;
    if !found.pairs.is_empty() {
        // Another pass for the file lists of the first pairs.
        folders.start_details(&found)?;
        feed(&mut folders)?;
        folders.finish_details(&mut found)?;
    }
    Ok(found)
}
