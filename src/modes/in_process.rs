//! What the in-process modes (`direct`, `reset`) share: the harness runs in the client's own
//! process under the watched executor (`watchdog/`), over the target's own counters, and
//! traces its comparisons in process too unless a `--cmplog` build does.

use libafl::{
    executors::ExitKind,
    inputs::{BytesInput, HasTargetBytes},
    observers::{CanTrack, StdMapObserver},
    Error,
};

use super::{
    tracer::Tracer,
    watchdog::{HarnessFn, WatchedExecutor},
};
use crate::{
    coverage::hitcounts::HitcountsObserver,
    engine::{self, Client},
    options::FuzzOptions,
    target::{
        harness::{self, CounterRegion},
        leaks, profile,
    },
    types::{EdgesObserver, Observers},
};

/// The in-process modes' check: a harness is linked, and no standalone target was given.
pub fn linked_harness_map_size(opts: &FuzzOptions) -> Result<usize, String> {
    if !opts.target.is_empty() {
        return Err(format!(
            "a target after `--` needs --mode forkserver or persistent (not {:?})",
            opts.mode
        ));
    }
    if profile::linked() && harness::coverage_counter_count().is_none() {
        return Err(
            "this binary was built with `libafl_cc --coverage` for coverage reports \
                    (`coverage -i DIR --html OUT`): build it without --coverage to fuzz"
                .into(),
        );
    }
    harness::coverage_counter_count().ok_or_else(|| {
        "this binary has no instrumented harness linked: fuzz a standalone target with \
         --mode forkserver -- ./target @@"
            .to_string()
    })
}

/// An observer over the target's inline 8-bit counters, bucketed into AFL hit counts.
pub fn counters_observer(counters: CounterRegion) -> EdgesObserver {
    let (start, len) = (counters.as_mut_ptr(), counters.len());
    // SAFETY: the counters are static, so they stay valid and in place while the observer
    // points at them; they are handed out once per process, so this observer is the only one;
    // the instrumented code writes them only while an input runs, when the observer does not
    // read them.
    let map = unsafe { StdMapObserver::from_mut_ptr("edges", start, len) };
    HitcountsObserver::new(map)
        .track_indices()
        .track_novelties()
}

/// Runs the input, remembering it among the recent inputs (for flaky-crash sequences). An
/// input that leaked ends as a crash, which the solutions file as a leak; the harness returned,
/// so the client goes on (and is replaced soon after, see `target/leaks.rs`).
pub fn run_recorded(input: &BytesInput) -> ExitKind {
    let bytes = input.target_bytes();
    if leaks::run_checked(|| harness::run_recorded(&bytes)) {
        ExitKind::Crash
    } else {
        ExitKind::Ok
    }
}

/// The in-process modes: `harness` runs each input in this process under `observers`;
/// `restart_every`: hand the state to a fresh process after that many executions.
pub fn fuzz_in_process(
    client: Client<'_>,
    observers: Observers,
    harness: HarnessFn,
    restart_every: Option<u64>,
) -> Result<(), Error> {
    let opts = &client.config.opts;
    harness::set_up(
        opts.malloc_limit_mb.unwrap_or(opts.rss_limit_mb),
        !opts.no_detect_leaks,
    );
    let timeout = opts.hang_timeout();
    let mut executor = WatchedExecutor::new(
        harness,
        observers,
        client.fuzzer,
        client.state,
        client.mgr,
        timeout,
    )?;
    let tracer = Tracer::choose(client.config, None, || {
        Tracer::in_process(harness, client.fuzzer, client.state, client.mgr, timeout).map(Some)
    })?;
    engine::fuzz(client, &mut executor, tracer, restart_every)
}
