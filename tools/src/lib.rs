//! Developer tools of fsim, not installed: the generators of the test and
//! benchmark trees ([`corpus`], `fsim-gen`) and the HP paper's controlled
//! experiment ([`eval`], `fsim-eval`, docs/evaluation.md).

pub mod corpus;
pub mod eval;
pub mod folders;
