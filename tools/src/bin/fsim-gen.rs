//! fsim-gen: write a deterministic sample repository with planted relationships.
use clap::Parser;
use fsim::error::{Context, Error};
use fsim_tools::corpus::{self, CorpusSpec};
use std::path::PathBuf;
use std::process::ExitCode;

/// Write a sample repository (unrelated documents, near-duplicates, a
/// contained document, successive versions, identical copies, a shared
/// template) and, optionally, the manifest of what was planted.
#[derive(Parser)]
#[command(name = "fsim-gen", version)]
struct Args {
    /// Folder to create (must not exist, or be empty).
    dir: PathBuf,
    /// Seed of the generator: the same seed gives the same bytes.
    #[arg(long, default_value = "2005")]
    seed: u64,
    /// Number of unrelated documents.
    #[arg(long, default_value = "40")]
    unique: usize,
    /// Number of near-duplicate pairs.
    #[arg(long, default_value = "4")]
    near_pairs: usize,
    /// Number of identical sets.
    #[arg(long, default_value = "3")]
    identical_sets: usize,
    /// Number of files sharing a template preamble (0: none).
    #[arg(long, default_value = "5")]
    template_files: usize,
    /// Write the manifest of planted relations here (TSV: kind, paths...).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Instead of the sample, write N benchmark documents (one in ten an
    /// edited version of another, one in twenty an identical copy).
    #[arg(long, value_name = "N")]
    bulk: Option<usize>,
    /// Instead of the sample, write N documents of about --bulk-size bytes,
    /// each with two versions of 1-5 line edits (`-0` the document, `-1`
    /// and `-2` its versions): the fsim-verify benchmark (3N files; the
    /// analysis finds 3N pairs).
    #[arg(long, value_name = "N", conflicts_with = "bulk")]
    versions: Option<usize>,
    /// Instead of the sample, write N files that are overlapping extracts
    /// (about --bulk-size bytes, a few line edits each) of one body of
    /// --overlap-body bytes: one large family with millions of links, the
    /// stress case of fsim-verify and fsim-report.
    #[arg(long, value_name = "N", conflicts_with_all = ["bulk", "versions"])]
    overlap: Option<usize>,
    /// Size of the body the --overlap files are taken from: the smaller,
    /// the more each file overlaps the others. Default: N × --bulk-size / 20,
    /// about 40 files overlapping each file (2 M candidate pairs for 100,000
    /// files).
    #[arg(long, value_name = "BYTES")]
    overlap_body: Option<usize>,
    /// Line edits per --overlap file.
    #[arg(long, value_name = "N", default_value = "3")]
    overlap_edits: usize,
    /// Instead of the sample, write the GNU gettext catalogs of N locales
    /// (de, fr, ..., pt_BR, zh_Hans, ...) in each of --catalog-releases
    /// releases, `release-V/locale/L/LC_MESSAGES/django.po`, all of a
    /// release filled in from one template: two locales share ~60% of
    /// their bytes (references, msgids), every translation differs; the
    /// hard case of fsim-verify.
    #[arg(long, value_name = "N", conflicts_with_all = ["bulk", "versions", "overlap"])]
    catalogs: Option<usize>,
    /// Releases of the --catalogs repository (references renumbered, a few
    /// entries added, removed or retranslated at each).
    #[arg(long, value_name = "R", default_value = "3", requires = "catalogs")]
    catalog_releases: usize,
    /// Target bytes per --catalogs catalog (the average; each locale within
    /// about ±25%).
    #[arg(
        long,
        value_name = "BYTES",
        default_value = "100000",
        requires = "catalogs"
    )]
    catalog_size: usize,
    /// Instead of the sample, write N source-like files `dNNN/sNNNNNNN.c`,
    /// each a slice of one body of C-like code (lengths lognormal, median
    /// 8 KB, at most 200 KB; starts uniform), one in five a near-copy of
    /// another with 1-4 lines inserted or deleted: most pairs overlap only
    /// in part, at different offsets (the adversarial input of an O(N·D)
    /// diff). Folders: --bulk-dirs.
    #[arg(long, value_name = "N", conflicts_with_all = ["bulk", "versions", "overlap", "catalogs"])]
    slices: Option<usize>,
    /// Size of the body the --slices files are cut from. Default: N × 1,250
    /// (N × 10 KB / 8): the mean slice is ~13 KB, so each line of the body
    /// is in ~10 files and a median file meets ~17 others.
    #[arg(long, value_name = "BYTES", requires = "slices")]
    slice_body: Option<usize>,
    /// Average size of the benchmark documents (--bulk, --versions, --overlap).
    #[arg(long, default_value = "10000")]
    bulk_size: usize,
    /// Instead of the sample, a tree of N projects and their copies,
    /// versions, renamed and nested backups, and --folder-copies copies of
    /// one folder (tools/src/folders.rs); --manifest writes the relations
    /// planted (`folder-identical`, `folder-version`, ...).
    #[arg(long, value_name = "N", conflicts_with_all = ["bulk", "versions", "overlap", "catalogs", "slices"])]
    folders: Option<usize>,
    /// Copies of one folder in a --folders tree (one family of identical
    /// folders).
    #[arg(long, value_name = "K", default_value = "100", requires = "folders")]
    folder_copies: usize,
    /// The largest document of a --folders project in bytes (the smallest
    /// is a sixth of it).
    #[arg(long, value_name = "BYTES", default_value = "6000", requires = "folders", value_parser = clap::value_parser!(u64).range(60..))]
    folder_doc_size: u64,
    /// Number of folders of the benchmark documents (--bulk, --versions,
    /// --overlap, --slices).
    #[arg(long, default_value = "300")]
    bulk_dirs: usize,
}

fn main() -> ExitCode {
    let a = Args::parse();
    fsim::cli::run("fsim-gen", || {
        if a.dir.exists()
            && std::fs::read_dir(&a.dir)
                .ctx(|| format!("cannot read {}", a.dir.display()))?
                .next()
                .is_some()
        {
            return Err(Error::msg(format!(
                "{} exists and is not empty",
                a.dir.display()
            )));
        }
        if let Some(n) = a.folders {
            let spec = fsim_tools::folders::Folders {
                projects: n,
                copies: a.folder_copies,
                doc_size: a.folder_doc_size as usize,
                seed: a.seed,
            };
            let planted = fsim_tools::folders::generate_folders(&a.dir, &spec)?;
            if let Some(m) = &a.manifest {
                let mut out = fsim::io::Output::create(Some(m))?;
                out.write_all(fsim_tools::folders::manifest(&planted).as_bytes())?;
                out.finish()?;
            }
            eprintln!(
                "fsim-gen: {n} projects, {} folder relations planted in {}",
                planted.len(),
                a.dir.display()
            );
            return Ok(());
        }
        if let Some(line) = benchmark(&a)? {
            eprintln!("fsim-gen: {line}");
            return Ok(());
        }
        let spec = CorpusSpec {
            seed: a.seed,
            unique: a.unique,
            near_pairs: a.near_pairs,
            identical_sets: a.identical_sets,
            template_files: a.template_files,
            ..CorpusSpec::default()
        };
        let planted = corpus::generate(&a.dir, &spec)?;
        if let Some(m) = a.manifest {
            let mut out = fsim::io::Output::create(Some(&m))?;
            out.write_all(corpus::manifest(&planted).as_bytes())?;
            out.finish()?;
        }
        Ok(())
    })
}

/// The benchmark corpus asked for, if any (--bulk, --overlap, --slices,
/// --catalogs, --versions, in that order): what was written.
fn benchmark(a: &Args) -> fsim::Result<Option<String>> {
    let bulk = |docs| corpus::Bulk {
        docs,
        avg_size: a.bulk_size,
        dirs: a.bulk_dirs,
        seed: a.seed,
    };
    let dir = a.dir.display();
    if let Some(n) = a.bulk {
        let bytes = corpus::generate_bulk(&a.dir, &bulk(n))?;
        return Ok(Some(format!("{n} files, {bytes} bytes in {dir}")));
    }
    if let Some(n) = a.overlap {
        let spec = corpus::Overlap {
            files: n,
            body: a.overlap_body.unwrap_or(n * a.bulk_size / 20),
            extract: a.bulk_size,
            edits: a.overlap_edits,
            dirs: a.bulk_dirs,
            seed: a.seed,
        };
        let bytes = corpus::generate_overlap(&a.dir, &spec)?;
        return Ok(Some(format!(
            "{n} overlapping files, {bytes} bytes in {dir}"
        )));
    }
    if let Some(n) = a.slices {
        let spec = corpus::Slices {
            files: n,
            body: a
                .slice_body
                .unwrap_or(n.saturating_mul(corpus::SLICE_BODY_PER_FILE)),
            median: corpus::SLICE_MEDIAN,
            max: corpus::SLICE_MAX,
            dirs: a.bulk_dirs,
            seed: a.seed,
        };
        let bytes = corpus::generate_slices(&a.dir, &spec)?;
        return Ok(Some(format!(
            "{n} slices of a {}-byte body, {bytes} bytes in {dir}",
            spec.body
        )));
    }
    if let Some(n) = a.catalogs {
        let spec = corpus::Catalogs {
            locales: n,
            releases: a.catalog_releases,
            size: a.catalog_size,
            seed: a.seed,
        };
        let bytes = corpus::generate_catalogs(&a.dir, &spec)?;
        return Ok(Some(format!(
            "{} catalogs ({n} locales × {} releases), {bytes} bytes in {dir}",
            n * a.catalog_releases,
            a.catalog_releases
        )));
    }
    if let Some(n) = a.versions {
        let bytes = corpus::generate_versions(&a.dir, &bulk(n))?;
        return Ok(Some(format!(
            "{} files ({n} documents, two versions of each), {bytes} bytes in {dir}",
            3 * n
        )));
    }
    Ok(None)
}
