//! Developer tools of fsim, not installed: the generators of the test and
//! benchmark trees ([`corpus`], `fsim-gen`) and the HP paper's controlled
//! experiment ([`eval`], `fsim-eval`, docs/evaluation.md); and the
//! generator of the installed man pages and completions ([`docs`],
//! `fsim-docs`, run by `make install`, itself not installed).

pub mod corpus;
pub mod docs;
pub mod eval;
pub mod folders;
