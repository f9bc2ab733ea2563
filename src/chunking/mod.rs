//! Chunking: how a byte stream becomes chunk records. The content-defined
//! cut points ([`chunker`]: TTTD and BSW), the feature methods
//! ([`features`]: sif, hp, minhash), MD5 of many chunks at once
//! ([`md5batch`]), the hashing of one large file on several threads
//! ([`parhash`]), and the stream types they share ([`stream`]).
//!
//! Uses the formats and I/O layers; no stage is imported here.

pub mod chunker;
pub mod features;
pub mod md5batch;
pub mod members;
pub mod parhash;
pub mod reader;
pub mod stream;
