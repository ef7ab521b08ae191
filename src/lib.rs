//! lafuzz: a coverage-guided fuzzer assembled from LibAFL's parts.
//!
//! This crate is a static library that `libafl_cc` links into every target: the target's
//! `main` (a weak one from `libafl_targets`) calls [`libafl_main`], which runs the command line.
//! The `fuzzer` binary is the same command line with no harness linked: it fuzzes standalone
//! targets (`--mode forkserver` / `persistent`).

mod broker;
mod campaign;
mod client;
mod cmplog;
mod harness;
mod modes;
mod monitor;
mod options;
pub mod output;
mod replay;
mod shmem;
mod solutions;
pub mod supervisor;

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// Runs the command line; returns the exit code.
pub fn run_command_line() -> i32 {
    options::main()
}

/// Entry point called by the target's `main`.
#[unsafe(no_mangle)]
pub extern "C" fn libafl_main() {
    std::process::exit(run_command_line());
}
