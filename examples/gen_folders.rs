//! A synthetic input for fsim-report's folder pairs at any scale:
//! projects of VERSIONS releases, each file linked to the same file
//! of every other release (tests/common/folder_projects.rs says the
//! shape): the stress case of the folder pairs, links × depth credits and
//! every sub-folder pair of two releases at the threshold.
//!
//!     cargo run --release --example gen_folders -- FILES VERSIONS OUT_DIR
//!
//! Writes OUT_DIR/files.tsv and OUT_DIR/verified.tsv.

#[path = "../tests/common/folder_projects.rs"]
mod folder_projects;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: gen_folders FILES VERSIONS OUT_DIR");
        std::process::exit(2);
    }
    let files: u32 = args[1].parse().expect("FILES");
    let versions: u32 = args[2].parse().expect("VERSIONS");
    let dir = std::path::PathBuf::from(&args[3]);
    let (files, links) = folder_projects::write(&dir, files, versions)?;
    eprintln!(
        "gen_folders: {files} files in {} projects of {versions} releases, {links} links",
        files / (versions * folder_projects::PER_RELEASE)
    );
    Ok(())
}
