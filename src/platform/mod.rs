//! What the campaign needs from the operating system, whatever it fuzzes: shared memory that
//! cannot outlive the campaign (`shmem.rs`), the process group and its cleanup
//! (`supervisor.rs`), the output directory's layout and writes (`output.rs`), errors as one
//! line each (`errors.rs`), the CPUs a client may run on (`affinity.rs`), a flag forked
//! processes share (`fork_shared.rs`), the `log` crate's messages on stderr (`logger.rs`) and
//! the numbers a client sends the monitor (`user_stats.rs`).
//!
//! The bottom layer: uses nothing else of this crate. `output` and `supervisor` are public for
//! the bench and the tests.

pub(crate) mod affinity;
pub(crate) mod errors;
pub(crate) mod fork_shared;
pub(crate) mod logger;
pub mod output;
pub(crate) mod shmem;
pub mod supervisor;
pub(crate) mod user_stats;
