//! `forkserver` and `persistent`: fuzz a standalone executable out of process with LibAFL's
//! `ForkserverExecutor`, as AFL++ does. The target is built with `libafl_cc --standalone` (or
//! AFL++'s `afl-clang-fast`); its coverage map is shared memory created here, sized to what the
//! target reports, and testcases go through shared memory when the target offers it.

mod high_fds;
mod probe;

use std::{mem::size_of, sync::atomic::AtomicBool};

use libafl::{
    executors::{
        forkserver::{ForkserverExecutor, ForkserverExecutorBuilder},
        StdChildArgs,
    },
    inputs::BytesInput,
    mutators::Tokens,
    observers::{CanTrack, StdMapObserver},
    Error,
};
use libafl_bolts::{
    shmem::{ShMem, ShMemProvider, UnixShMemProvider},
    tuples::tuple_list,
    StdTargetArgs,
};
use libafl_targets::{cmps::CmpLogMap, CmpLogObserver};
use nix::sys::signal::Signal;

use super::{oom::OomAware, Coverage, ExecutionMode};
use crate::{
    engine::{self, Client, FuzzConfig, TracerTarget},
    hitcounts::HitcountsObserver,
    options::FuzzOptions,
    reproduce::Reproduce,
    runtime_abi,
    shmem::SelfCleaningShMemProvider,
    types::{EdgesObserver, SharedMemory, State},
};

/// Where a target finds its coverage map's segment (AFL++'s name).
const COVERAGE_SHM_ENV: &str = "__AFL_SHM_ID";

/// `persistent`: the target's child runs many inputs; else one fork per input.
pub struct Standalone {
    pub persistent: bool,
}

impl ExecutionMode for Standalone {
    fn check(&self, opts: &FuzzOptions) -> Result<usize, String> {
        probe::map_size(&opts.target)
    }

    fn reproduce(&self, opts: &FuzzOptions) -> Reproduce {
        Reproduce::Target {
            command: opts.target.clone(),
        }
    }

    fn cmplog_command(&self, opts: &FuzzOptions) -> Option<Vec<String>> {
        let binary = opts.cmplog.as_ref()?.display().to_string();
        Some(
            [binary]
                .into_iter()
                .chain(opts.target[1..].iter().cloned())
                .collect(),
        )
    }

    fn coverage(&self, config: &FuzzConfig) -> Result<Coverage, Error> {
        sanitizers_report_as_crashes();
        let (edges, map) = coverage_map(config.map_size)?;
        Ok((edges, Some(map)))
    }

    fn fuzz(&self, client: Client<'_>) -> Result<(), Error> {
        let Client {
            fuzzer,
            state,
            mgr,
            observers: (edges, others),
            calibration,
            generalization,
            config,
        } = client;
        let opts = &config.opts;
        let mut oom_flag = memory_limit(opts.rss_limit_mb)?;
        // SAFETY: the segment is at least a byte long, zero-initialized, and lives until the
        // end of this function, after the executors; an AtomicBool is valid for 0 and the 1
        // the runtime writes.
        let oom = unsafe { &*oom_flag.as_mut_ptr().cast::<AtomicBool>() };
        let mut autotokens = Tokens::new();
        let executor = high_fds::build_with_high_fds(|| {
            fork_server(&opts.target, config.map_size, self.persistent, opts)
                .autotokens(&mut autotokens)
                .shmem_provider(&mut SelfCleaningShMemProvider::new()?)
                .build_dynamic_map(edges, others)
        })?;
        let mut executor = OomAware::new(executor, oom);
        engine::add_tokens(state, &autotokens);
        // Comparisons are traced by the `--cmplog` build, else by the target itself when
        // it is a build of ours (AFL++'s builds do not log comparisons our way).
        let own = || {
            probe::logs_comparisons(&opts.target[0]).then(|| TracerTarget {
                command: opts.target.clone(),
                map_size: config.map_size,
            })
        };
        let Some(traced_by) = config.cmplog_target.clone().or_else(own) else {
            let mut stages = engine::without_comparison_solving(
                calibration,
                generalization,
                config.opts.only_ascii,
            );
            return engine::fuzz(&mut executor, &mut stages, fuzzer, state, mgr, config, None);
        };
        let (tracer, _cmplog_map) = tracer(config, &traced_by)?;
        let tracer = OomAware::new(tracer, oom);
        let mut stages = engine::with_comparison_solving(
            calibration,
            generalization,
            tracer,
            config.opts.only_ascii,
        );
        engine::fuzz(&mut executor, &mut stages, fuzzer, state, mgr, config, None)
    }
}

/// The fork server of `command` (a target with `map_size` counters), as every executor of
/// this mode starts it: the campaign's timeout, a hung child killed outright, the child's
/// output shown only with `--show-output`.
fn fork_server<'a>(
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
        .timeout(opts.timeout)
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

/// Hands the target's children their memory limit (our standalone runtime watches itself, see
/// `runtime/memory.c`; AFL++'s builds do not) and the shared flag they raise when over it.
fn memory_limit(rss_limit_mb: u64) -> Result<SharedMemory, Error> {
    let flag = SelfCleaningShMemProvider::new()?.new_shmem(1)?;
    if rss_limit_mb > 0 {
        // SAFETY: the client is single-threaded while it sets up its target's environment.
        unsafe {
            std::env::set_var(runtime_abi::rss_limit_env(), rss_limit_mb.to_string());
            flag.write_to_env(runtime_abi::oom_shm_env())?;
        }
    }
    Ok(flag)
}

/// The map size LibAFL's fork server expects: rounded up to 64 entries.
fn aligned(map_size: usize) -> usize {
    map_size.next_multiple_of(runtime_abi::map_alignment())
}

/// Makes sanitizer findings in the target end in a crash signal: UBSan's signal handlers would
/// turn a SIGSEGV into a slow, symbolized report and `exit(1)`, which the fork server sees as a
/// clean exit or a hang. For targets that do not build our options in (AFL++'s builds; ours
/// do, from the same header); `UBSAN_OPTIONS` given by the user is kept.
fn sanitizers_report_as_crashes() {
    if std::env::var_os("UBSAN_OPTIONS").is_none() {
        // SAFETY: the client is single-threaded while it sets up its target's environment.
        unsafe { std::env::set_var("UBSAN_OPTIONS", runtime_abi::ubsan_options()) };
    }
}

/// The coverage map shared with the target: the observer, and the segment it lives in (keep
/// it as long as the executor).
fn coverage_map(map_size: usize) -> Result<(EdgesObserver, SharedMemory), Error> {
    let mut provider = SelfCleaningShMemProvider::new()?;
    // Whole pages: our runtime maps the segment over the target's counters' pages.
    let mut shmem = provider.new_shmem(map_size.next_multiple_of(runtime_abi::page_size()))?;
    // SAFETY: the client is single-threaded while it sets up its target's environment.
    unsafe {
        shmem.write_to_env(COVERAGE_SHM_ENV)?;
        std::env::set_var("AFL_MAP_SIZE", shmem.len().to_string());
    }
    // SAFETY: the segment is at least `map_size` bytes and the caller keeps it as long as
    // the observer.
    let map = unsafe { StdMapObserver::from_mut_ptr("edges", shmem.as_mut_ptr(), map_size) };
    Ok((
        HitcountsObserver::new(map)
            .track_indices()
            .track_novelties(),
        shmem,
    ))
}

/// Checks a `--cmplog` build (its command line): it reports its map size and logs comparisons.
pub fn check_tracer_target(command: Vec<String>) -> Result<TracerTarget, String> {
    let map_size = probe::map_size(&command).map_err(|e| format!("bad --cmplog: {e}"))?;
    if !probe::logs_comparisons(&command[0]) {
        return Err(format!(
            "bad --cmplog {}: not a build of ours with comparison logging \
             (build it with `libafl_cc --standalone`)",
            command[0]
        ));
    }
    Ok(TracerTarget { command, map_size })
}

/// The comparison log shared with the tracing fork server (in LibAFL's `CmpLogMap` layout,
/// which the standalone runtime writes when `__LAFUZZ_CMPLOG_SHM_ID` is set): the observer,
/// the segment (keep it), and its id for the tracer's environment.
fn cmplog_map() -> Result<(CmpLogObserver, SharedMemory, String), Error> {
    let size = size_of::<CmpLogMap>();
    if runtime_abi::cmplog_map_size() != size {
        return Err(Error::illegal_state(
            "the standalone runtime's comparison log does not have LibAFL's layout",
        ));
    }
    let mut shmem = SelfCleaningShMemProvider::new()?.new_shmem(size)?;
    let id = shmem.id().to_string();
    // SAFETY: the segment is as large as the map and the caller keeps it as long as the
    // observer.
    let observer =
        unsafe { CmpLogObserver::with_map_ptr("cmplog", shmem.as_mut_ptr().cast(), true) };
    Ok((observer, shmem, id))
}

pub type Tracer = ForkserverExecutor<BytesInput, (CmpLogObserver, ()), State, SharedMemory>;

/// A persistent fork server of `traced_by` (the target itself or the `--cmplog` build) that
/// logs comparisons: the comparison-tracing stage runs inputs through it. Keep the returned
/// segment (the comparison log) as long as the tracer.
pub fn tracer(
    config: &FuzzConfig,
    traced_by: &TracerTarget,
) -> Result<(Tracer, SharedMemory), Error> {
    let (cmplog, cmplog_map, cmplog_id) = cmplog_map()?;
    if std::env::var_os(COVERAGE_SHM_ENV).is_none() {
        // LibAFL's fork server refuses to start without it in this process's environment;
        // the in-process modes have no coverage segment to give (the tracer gets "" anyway).
        // SAFETY: the client is single-threaded while it sets up its executors.
        unsafe { std::env::set_var(COVERAGE_SHM_ENV, "") };
    }
    let command = &traced_by.command;
    let tracer = high_fds::build_with_high_fds(|| {
        fork_server(command, traced_by.map_size, true, &config.opts)
            .env(runtime_abi::cmplog_shm_env(), cmplog_id)
            // Not the fuzzing target's coverage map: the tracer's own counters do.
            .env(COVERAGE_SHM_ENV, "")
            .shmem_provider(&mut SelfCleaningShMemProvider::new()?)
            .build(tuple_list!(cmplog))
    })?;
    Ok((tracer, cmplog_map))
}
