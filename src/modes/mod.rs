//! Execution modes. Each is one implementation of [`ExecutionMode`], chosen once per campaign
//! by [`of`]: what it checks before start, its coverage map, how it runs inputs (its
//! executors), whether its crashes are triaged, and how a finding is reproduced. Who traces
//! comparisons is decided once for all of them (`tracer.rs`); the stages and the fuzzing loop
//! are the engine's (`engine/`), the client's wiring the campaign's (`campaign/client.rs`).
//!
//! Files: one per mode (`direct.rs`, `reset.rs`, `fork.rs`, `standalone/`), what the
//! in-process modes share (`in_process.rs`, with the watched executor of `watchdog/`), fork
//! mode's template process (`template.rs`), out-of-memory executions (`oom.rs`). Uses
//! `engine/` and the layers below it, never `campaign/`.

mod direct;
mod fork;
mod in_process;
mod oom;
mod reset;
mod standalone;
mod template;
#[cfg(test)]
mod tests;
mod tracer;
mod watchdog;

use libafl::Error;

use crate::{
    config::{FuzzConfig, TracerTarget},
    engine::Client,
    options::{FuzzOptions, Mode},
    target::reproduce::{self, Reproduce},
    types::{EdgesObserver, Observers, SharedMemory},
};

/// The coverage observer, and the shared memory it reads when the map is not the process's
/// own counters (keep it as long as the observer).
pub type Coverage = (EdgesObserver, Option<SharedMemory>);

pub trait ExecutionMode: Sync {
    /// Checks, before anything starts, that the target is what this mode needs; returns the
    /// coverage map's size. No output is written and nothing is left running.
    fn check(&self, opts: &FuzzOptions) -> Result<usize, String>;

    /// A warning worth printing when the campaign starts.
    fn warning(&self, _opts: &FuzzOptions) -> Option<String> {
        None
    }

    /// Whether the campaign's processes should bind every dynamic symbol when loaded (see
    /// [`bind_symbols_at_load`]).
    fn binds_symbols_at_load(&self) -> bool {
        false
    }

    /// In-process modes run many inputs in one process, so state can leak from one input to
    /// the next: their crashes are run again alone in a fresh process before being reported.
    fn triages_crashes(&self) -> bool {
        false
    }

    /// How a user reproduces an input this mode saved.
    fn reproduce(&self, opts: &FuzzOptions) -> Reproduce {
        let memory_args = reproduce::replay_memory_args(opts.rss_limit_mb, opts.malloc_limit_mb);
        Reproduce::for_this_binary(memory_args)
    }

    /// The command line of the `--cmplog` build: the binary alone, its input in shared memory
    /// or on stdin (modes that run a standalone target give it the target's arguments).
    fn cmplog_command(&self, opts: &FuzzOptions) -> Option<Vec<String>> {
        opts.cmplog
            .as_ref()
            .map(|binary| vec![binary.display().to_string()])
    }

    /// Whether the comparison-solving stage has a tracer: the `--cmplog` build, or the target
    /// itself (every harness linked into this binary can log comparisons).
    fn solves_comparisons(&self, config: &FuzzConfig) -> bool {
        let _ = config;
        true
    }

    /// The coverage map's observer, once per client process.
    fn coverage(&self, config: &FuzzConfig) -> Result<Coverage, Error>;

    /// Builds the executors (the fuzzing one over `observers`) and fuzzes with them.
    fn fuzz(&self, client: Client<'_>, observers: Observers) -> Result<(), Error>;
}

/// Checks the `--cmplog` build before start: it runs, reports its map size and logs
/// comparisons.
pub fn check_cmplog_target(
    mode: &dyn ExecutionMode,
    opts: &FuzzOptions,
) -> Result<Option<TracerTarget>, String> {
    mode.cmplog_command(opts)
        .map(tracer::check_tracer_target)
        .transpose()
}

/// The implementation of `mode`.
pub fn of(mode: Mode) -> &'static dyn ExecutionMode {
    match mode {
        Mode::Direct => &direct::Direct,
        Mode::Reset => &reset::Reset,
        Mode::Fork => &fork::Fork,
        Mode::Forkserver => &standalone::Standalone { persistent: false },
        Mode::Persistent => &standalone::Standalone { persistent: true },
    }
}

/// Runs this command again with every dynamic symbol bound at load (`LD_BIND_NOW`, which AFL++
/// and LibAFL's fork server set for their targets too), unless it already is. A process forked
/// per input from a parent that never called most library functions resolved each of them
/// again, and copied the page it wrote the address to: a sixth of fork mode's time on libpng.
/// Nothing has started yet; should the `exec` fail, the campaign runs as it is.
pub fn bind_symbols_at_load() {
    use std::os::unix::process::CommandExt;

    // The dynamic loader takes any non-empty value as set.
    if std::env::var_os("LD_BIND_NOW").is_some_and(|v| !v.is_empty()) {
        return;
    }
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let error = std::process::Command::new("/proc/self/exe")
        .arg0(argv0)
        .args(args)
        .env("LD_BIND_NOW", "1")
        .exec();
    log::warn!("cannot run again with symbols bound at load: {error}");
}
