//! `forkserver` and `persistent`: fuzz a standalone executable out of process with LibAFL's
//! `ForkserverExecutor`, as AFL++ does. The target is built with `libafl_cc --standalone` (or
//! AFL++'s `afl-clang-fast`); its coverage map is shared memory created here, sized to what the
//! target reports, and testcases go through shared memory when the target offers it.

pub mod fork_server;
pub mod high_fds;
pub mod probe;

use std::sync::atomic::AtomicBool;

use libafl::{
    mutators::Tokens,
    observers::{CanTrack, StdMapObserver},
    Error,
};
use libafl_bolts::shmem::{ShMem, ShMemProvider};

use super::{oom::OomAware, tracer::Tracer, Coverage, ExecutionMode};
use crate::{
    config::{FuzzConfig, TracerTarget},
    coverage::hitcounts::HitcountsObserver,
    engine::{self, Client},
    options::FuzzOptions,
    platform::shmem::SelfCleaningShMemProvider,
    target::{reproduce::Reproduce, runtime_abi},
    types::{EdgesObserver, Observers, SharedMemory},
};
use fork_server::{fork_server, COVERAGE_SHM_ENV};

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

    fn solves_comparisons(&self, config: &FuzzConfig) -> bool {
        config.cmplog_target.is_some() || probe::logs_comparisons(&config.opts.target[0])
    }

    fn coverage(&self, config: &FuzzConfig) -> Result<Coverage, Error> {
        sanitizers_report_as_crashes();
        let (edges, map) = coverage_map(config.map_size)?;
        Ok((edges, Some(map)))
    }

    fn fuzz(&self, client: Client<'_>, (edges, others): Observers) -> Result<(), Error> {
        let config = client.config;
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
        engine::add_tokens(client.state, &autotokens);
        // The target traces itself when it is a build of ours (AFL++'s builds do not log
        // comparisons our way), through a fork server of its own.
        let tracer = Tracer::choose(config, Some(oom), || {
            if !probe::logs_comparisons(&opts.target[0]) {
                return Ok(None);
            }
            let target = TracerTarget {
                command: opts.target.clone(),
                map_size: config.map_size,
            };
            Tracer::fork_server(config, &target, Some(oom)).map(Some)
        })?;
        engine::fuzz(client, &mut executor, tracer, None)
    }
}

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
