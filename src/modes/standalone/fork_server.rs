//! The fork servers of the standalone modes: how every executor of theirs (the fuzzing one, and
//! the comparison tracer of `modes/tracer.rs`) starts a target's fork server with LibAFL's
//! `ForkserverExecutor`.

use libafl::executors::{
    forkserver::{ForkserverExecutor, ForkserverExecutorBuilder},
    StdChildArgs,
};
use libafl_bolts::{shmem::UnixShMemProvider, StdTargetArgs};
use nix::sys::signal::Signal;

use super::probe;
use crate::{options::FuzzOptions, target::runtime_abi};

/// Where a target finds its coverage map's segment (AFL++'s name).
pub const COVERAGE_SHM_ENV: &str = "__AFL_SHM_ID";

/// The fork server of `command` (a target with `map_size` counters), as every executor of
/// this mode starts it: the campaign's timeout, a hung child killed outright, the child's
/// output shown only with `--show-output`.
pub fn fork_server<'a>(
    command: &[String],
    map_size: usize,
    persistent: bool,
    opts: &FuzzOptions,
) -> ForkserverExecutorBuilder<'a, UnixShMemProvider> {
    let builder = ForkserverExecutor::builder()
        .program(command[0].clone())
        .parse_afl_cmdline(&command[1..])
        .is_persistent(persistent)
        // LibAFL checks the target's size rounded up to 64 entries against this.
        .coverage_map_size(aligned(map_size))
        .timeout(opts.hang_timeout())
        .debug_child(opts.show_output);
    if persistent && probe::answers_directly(&command[0]) {
        let signal = PERSISTENT_TIMEOUT_SIGNAL;
        builder.kill_signal(signal).env(
            runtime_abi::timeout_signal_env(),
            (signal as i32).to_string(),
        )
    } else {
        builder.kill_signal(Signal::SIGKILL)
    }
}

/// What stops a timed-out persistent child of our runtime. Between inputs the child answers the
/// fuzzer itself (two context switches per input instead of four through the fork server's
/// stop and continue) and ignores this signal while it does, so that a timeout racing its
/// answer cannot end it halfway through; a signal no target handles (unused on x86), which
/// otherwise ends the process as SIGKILL does.
const PERSISTENT_TIMEOUT_SIGNAL: Signal = Signal::SIGSTKFLT;

/// The map size LibAFL's fork server expects: rounded up to 64 entries.
pub fn aligned(map_size: usize) -> usize {
    map_size.next_multiple_of(runtime_abi::map_alignment())
}
