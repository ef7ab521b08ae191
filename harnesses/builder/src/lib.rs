//! What the harness builder and the bench share: the real libraries of the benchmark suite
//! (where their sources come from, which files, which flags), the bug benchmark's libraries
//! and bugs, our builds of the suite's libraries, and a parallel compile runner.

pub mod bugs;
pub mod compile;
pub mod library;
pub mod ours;
pub mod suite;

pub use library::Library;
pub use suite::{LIBRARIES, TESTS_LIBRARY};
