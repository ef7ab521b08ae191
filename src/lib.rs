//! lafuzz: a coverage-guided fuzzer assembled from LibAFL's parts.
//!
//! This crate is a static library that `libafl_cc` links into every target: the target's
//! `main` (a weak one from `libafl_targets`) calls [`libafl_main`], which runs the command line.
//! The `fuzzer` binary is the same command line with no harness linked: it fuzzes standalone
//! targets (`--mode forkserver` / `persistent`).
//!
//! Folders in layers, each using only those below it (each folder's `mod.rs` says what it
//! holds):
//! - the commands: `libfuzzer/` (libFuzzer's command line), `replay.rs`, `minimize/`,
//!   `coverage_report/` (the `coverage` command's source-based coverage reports);
//! - `campaign/` (the `fuzz` command: checks before start, launcher, broker, restarter, one
//!   client's wiring) and `monitor/` (status lines, `fuzzer_stats`, `plot_data`);
//! - `modes/`: one `ExecutionMode` per `--mode`, its executors, and who traces comparisons;
//! - `engine/`: the stages and the fuzzing loop every mode runs, and what a client saves;
//! - `cmplog/` (comparison logging and solving) over `mutators/`;
//! - `types.rs`: the concrete LibAFL types;
//! - `solutions/`: crashes, hangs, out-of-memory inputs and leaks, saved and described by
//!   `triage/` (which also holds the `triage` command);
//! - `target/`: the linked harness, one input in a forked child, memory, the standalone
//!   runtime's ABI, how a finding is reproduced;
//! - `coverage/`: hit counts and buckets, novelty, corpus weight, scheduler;
//! - `config.rs` (the campaign as a client sees it) over `options/` (the command line's types);
//! - `platform/`: shared memory, the process group, the output directory, errors.

mod campaign;
mod cmplog;
mod config;
mod coverage;
mod coverage_report;
mod engine;
mod libfuzzer;
mod minimize;
mod modes;
mod monitor;
pub mod mutators;
mod options;
pub mod platform;
mod replay;
mod solutions;
mod target;
mod triage;
mod types;

use mimalloc::MiMalloc;

use options::{Cli, Command};

/// The execution modes, as `fuzz --mode` names them (the bench runs each).
pub use options::Mode;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// Runs the command line (ours, or libFuzzer's: see `libfuzzer/`); returns the exit code.
pub fn run_command_line() -> i32 {
    platform::logger::install();
    target::profile::no_default_file();
    let args: Vec<String> = std::env::args().collect();
    if let Some((program, rest)) = args.split_first() {
        if let Some(flag) = options::afl_style_start(rest) {
            eprintln!(
                "lafuzz: error: {flag} is an AFL++-style option, and this is no subcommand: \
                 run `{program} fuzz {}` (libFuzzer's flags are -name=value)",
                rest.join(" ")
            );
            return 2;
        }
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
        Command::Triage(opts) => triage::run(&opts),
        Command::Coverage(opts) => coverage_report::run(&opts),
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
