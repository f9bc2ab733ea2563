//! fsim-binpack: the paper's section 2.5 steps 5-6. Packs the connected
//! components written by fsim-partition into bins that each fit in
//! fsim-analyze's memory (`--capacity`), then routes every kept chunk record
//! to its bin, so that each bin can be analysed on its own.
//!
//! The partition file lists the records before the component table, so the
//! records are first spooled (24 bytes each, binary) to a private temp file
//! while the records and chunks of each file are counted; then the `F` lines
//! give the components. Each component's memory is estimated with
//! [`crate::formats::bins::estimate_memory`] (the real data structures of the
//! analysis), and components are packed with first-fit decreasing. A
//! component larger than the capacity gets a bin of its own marked
//! `oversized=1`, which fsim-analyze processes out of core: never a failure.
//!
//! A partition given as a regular file that is likely to fit one bin (the
//! usual case) is not spooled: pass 1 notes where its records are, and the
//! one bin's records are copied from it as they are (`pass1::Span`); a
//! file that needs more bins after all is spooled from it then.
//!
//! Memory: ~50 bytes per file (counts and the file table), independent of
//! the number of records. Disk: twice the records in binary (spool plus the
//! per-bin files of one routing pass), in `--tmpdir`; nothing for one bin
//! copied from the file.

mod components;
mod pack;
mod partition;
mod pass1;
mod seal;

pub use components::run_components;
pub use pack::{human_size, pack, plan_table, plan_tsv};
pub use seal::run_seal;

use crate::error::Result;
use std::path::PathBuf;

/// At most this many per-bin temp files are open at once; with more bins
/// the spool is read once per group of this many bins.
pub const MAX_OPEN_BINS: usize = 256;

/// The validated configuration of fsim-binpack.
#[derive(Debug, Clone)]
pub struct Config {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub capacity: u64,
    pub plan: Option<PathBuf>,
    pub tmpdir: Option<PathBuf>,
    pub quiet: bool,
    /// The output file kept zstd-compressed ([`crate::io::Output::compress`]).
    pub compress: bool,
    /// The input is a component table (see [`run_components`]), not a
    /// partition file.
    pub components: bool,
    /// The input is a slice of a bins file, to be made a bins file under
    /// the header of this plan or bins file (see [`run_seal`]).
    pub seal: Option<PathBuf>,
}

/// A connected component with what the analysis of it will need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component {
    /// Smallest file id of the component.
    pub id: u32,
    pub files: u64,
    pub records: u64,
    pub chunks: u64,
    /// [`crate::formats::bins::estimate_memory`] of the above.
    pub memory: u64,
}

/// One bin of the plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bin {
    /// Indices into the component slice given to [`pack()`].
    pub components: Vec<usize>,
    pub files: u64,
    pub records: u64,
    pub memory: u64,
    pub oversized: bool,
}

/// The whole stage.
pub fn run(cfg: &Config) -> Result<()> {
    if cfg.components {
        return run_components(cfg);
    }
    if let Some(plan) = &cfg.seal {
        return run_seal(plan, cfg);
    }
    partition::run(cfg)
}

#[cfg(test)]
mod tests {
    use crate::formats::bins::FileLine;

    #[test]
    fn f_line_round_trip() {
        let f = FileLine {
            id: 7,
            component: 3,
            size: 1234,
            content: 0xabc,
            features: None,
        };
        let mut v = Vec::new();
        f.write(&mut v);
        assert_eq!(
            v,
            b"F\t0000000007\t0000000003\t1234\t00000000000000000000000000000abc\n"
        );
        assert_eq!(FileLine::parse(&v[..v.len() - 1]), Ok(f));
        let g = FileLine {
            features: Some(42),
            ..f
        };
        v.clear();
        g.write(&mut v);
        assert!(v.ends_with(b"abc\t42\n"));
        assert_eq!(FileLine::parse(&v[..v.len() - 1]), Ok(g));
        assert!(FileLine::parse(
            b"G\t0000000007\t0000000003\t1234\t00000000000000000000000000000abc"
        )
        .is_err());
    }
}
