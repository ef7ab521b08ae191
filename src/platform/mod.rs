//! What the campaign needs from the operating system, whatever it fuzzes: shared memory that
//! cannot outlive the campaign (`shmem.rs`), the process group and its cleanup
//! (`supervisor.rs`), the output directory's layout and writes (`output.rs`), and errors as one
//! line each (`errors.rs`).
//!
//! The bottom layer: uses nothing else of this crate. `output` and `supervisor` are public for
//! the bench and the tests.

pub(crate) mod errors;
pub mod output;
pub(crate) mod shmem;
pub mod supervisor;
