//! One module per pipeline stage: what each `fsim-*` program does, on top of
//! the formats, I/O and chunking layers. The binaries (src/bin) parse their
//! arguments and call these.

pub mod analyze;
pub mod binpack;
pub mod chunk;
pub mod collections;
pub mod index;
pub mod join;
pub mod members;
pub mod partition;
pub mod rerun;
pub mod reuse;
pub mod sort;
pub mod templates;
pub mod verify;
