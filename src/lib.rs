//! lafuzz: a coverage-guided fuzzer assembled from LibAFL's parts.
//!
//! This crate is a static library that `libafl_cc` links into every target: the target's
//! `main` (a weak one from `libafl_targets`) calls [`libafl_main`], which runs the command line.
//! The `fuzzer` binary is the same command line with no harness linked: it fuzzes standalone
//! targets (`--mode forkserver` / `persistent`).
//!
//! Modules in layers, each using only those below it:
//! - the command line and what it runs: `options` (clap types), `libfuzzer` (libFuzzer's
//!   command line), `campaign` (the launcher), `prepare` (checks before start), `replay`,
//!   `minimize`;
//! - the broker and the monitor: `broker`, `monitor`;
//! - one client: `client` (the wiring shared by all modes), `modes` (one `ExecutionMode`
//!   each), `engine` (stages and the fuzzing loop), `havoc_stage`, `cmplog`, `solutions`;
//! - the concrete LibAFL types: `types`;
//! - the platform: `harness` (the linked target), `isolated` (one input in a forked child), `shmem`, `supervisor`, `output`,
//!   `reproduce`, `errors`.

mod broker;
mod buckets;
mod campaign;
mod client;
mod cmplog;
mod comparison_log;
mod corpus_weight;
mod engine;
mod errors;
mod harness;
mod havoc_stage;
mod hitcounts;
mod i2s;
mod inflight;
mod isolated;
mod learned_tokens;
mod libfuzzer;
mod memory;
mod minimize;
mod modes;
mod monitor;
mod novelty;
mod only_ascii;
mod options;
pub mod output;
mod prepare;
mod replay;
mod reproduce;
mod restarter;
mod runtime_abi;
mod saved_state;
mod scheduler;
mod shmem;
mod solutions;
pub mod supervisor;
mod types;
mod window_search;

use mimalloc::MiMalloc;

use options::{Cli, Command};

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// Runs the command line (ours, or libFuzzer's: see `libfuzzer/`); returns the exit code.
pub fn run_command_line() -> i32 {
    let args: Vec<String> = std::env::args().collect();
    if let Some((program, rest)) = args.split_first() {
        if libfuzzer::is_libfuzzer_call(rest) {
            return libfuzzer::run(program, rest);
        }
    }
    let cli = match Cli::from_args() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Fuzz(opts) => campaign::run(*opts),
        Command::Replay(opts) => replay::run(&opts),
        Command::Minimize(opts) => minimize::run_minimize(&opts),
        Command::MinimizeCorpus(opts) => minimize::run_minimize_corpus(&opts),
    };
    result.unwrap_or_else(|msg| {
        eprintln!("lafuzz: error: {msg}");
        1
    })
}

/// Entry point called by the target's `main`.
#[unsafe(no_mangle)]
pub extern "C" fn libafl_main() {
    std::process::exit(run_command_line());
}
