//! What the harness builder and the bench share: the real libraries of the benchmark suite
//! (where their sources come from, which files, which flags) and a parallel compile runner.

pub mod compile;
pub mod library;

pub use library::{Library, LIBRARIES};
