//! The integration tests, one test binary (`autotests = false` in
//! Cargo.toml): one module per area, one file per subject in the area's
//! folder (tests/stages/sort_cli.rs is `stages::sort_cli`), and the shared
//! harness, tests/common/. `cargo test --test tests stages::` runs an
//! area, `cargo test --test tests stages::sort_cli::` one file; `make
//! test-fast` skips `heavy::`. A new file is declared here, in its area.

mod common;

/// Each stage's program end to end (fsim-chunk ... fsim-verify, fsim-join, fsim-index, fsim-eval), the feature methods and the summaries.
mod stages {
    mod analyze_cli;
    mod binpack_cli;
    mod chunk_cli;
    mod eval_cli;
    mod file_table_digest;
    mod index_cli;
    mod join_cli;
    mod line_source;
    mod long_lines;
    mod methods;
    mod partition_cli;
    mod reformatted;
    mod sort_cli;
    mod summaries;
    mod verify_cli;
    mod verify_previous;
}

/// fsim-report's formats, filters, templates, sites and the actions script.
mod report {
    mod chained;
    mod one_set_of_figures;
    mod plan_safety;
    mod report_cli;
    mod report_filters;
    mod report_formats;
    mod report_waste;
    mod sites;
    mod template_memory;
    mod templates;
    mod tiny_links;
}

/// Documents and archives through the real binaries (docs/documents.md).
mod documents {
    mod archives;
    mod cross_format;
    // documents::documents: the views of documents, in the area of documents.
    #[allow(clippy::module_inception)]
    mod documents;
    mod office_variants;
    mod pdfs;
    mod text_prose;
}

/// `make report` and the installed `fsim`: whole runs, re-runs, resume, faults, collections and folders.
mod driver {
    mod collections;
    mod faults;
    mod folders;
    mod install;
    mod one_file_once;
    mod one_pipeline;
    mod pipeline;
    mod rerun_generated;
    mod rerun_settings;
    mod resume;
    mod scratch;
}

/// Rules read from the tree: the import layering, the function length, the names the docs use, `make quality`'s ground truth and the out-of-core benchmark's cgroup machinery.
mod rules {
    mod bench_cgroup;
    mod doc_names;
    mod function_length;
    mod layers;
    mod one_job;
    mod quality_truth;
}

/// The slow ones, left out of `make test-fast` (`--skip heavy::`): 4 GiB and hostile files, the memory bounds, 10^5-file families, the browser, Spark and the pseudo-terminal.
mod heavy {
    mod families;
    mod hostile;
    mod html_browser;
    mod progress;
    mod report_memory;
    mod spark;
    mod verify_memory;
}
