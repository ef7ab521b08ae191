//! `direct`: the harness runs in the client's own process (`InProcessExecutor`). The fastest
//! mode; a crash or hang is saved from the signal handler and the client restarts.

use std::time::Duration;

use libafl::{
    executors::{ExitKind, InProcessExecutor},
    inputs::{BytesInput, HasTargetBytes},
    observers::ObserversTuple,
    Error,
};
use libafl_bolts::tuples::tuple_list;

use super::{
    standalone,
    watchdog::{HandlersReleased, WatchedExecutor},
    Coverage, ExecutionMode,
};
use crate::{
    cmplog,
    engine::{self, Client, FuzzConfig},
    harness,
    options::FuzzOptions,
    types::{ClientFuzzer, EdgesObserver, Mgr, State},
};

pub struct Direct;

impl ExecutionMode for Direct {
    fn check(&self, opts: &FuzzOptions) -> Result<usize, String> {
        linked_harness_map_size(opts)
    }
    fn triages_crashes(&self) -> bool {
        true
    }
    fn coverage(&self, _config: &FuzzConfig) -> Result<Coverage, Error> {
        Ok((counters_observer(harness::take_coverage_counters()?), None))
    }
    fn fuzz(&self, client: Client<'_>) -> Result<(), Error> {
        fuzz_in_process(client, run_recorded, None)
    }
}

/// The in-process modes' check: a harness is linked, and no standalone target was given.
pub fn linked_harness_map_size(opts: &FuzzOptions) -> Result<usize, String> {
    if !opts.target.is_empty() {
        return Err(format!(
            "a target after `--` needs --mode forkserver or persistent (not {:?})",
            opts.mode
        ));
    }
    harness::coverage_counter_count().ok_or_else(|| {
        "this binary has no instrumented harness linked: fuzz a standalone target with \
         --mode forkserver -- ./target @@"
            .to_string()
    })
}

/// An observer over the target's inline 8-bit counters, bucketed into AFL hit counts.
pub fn counters_observer(counters: &'static mut [u8]) -> EdgesObserver {
    use libafl::observers::{CanTrack, StdMapObserver};

    use crate::hitcounts::HitcountsObserver;
    // SAFETY: the counters are static, so they never move while the observer points at them.
    let map = unsafe { StdMapObserver::new("edges", counters) };
    HitcountsObserver::new(map)
        .track_indices()
        .track_novelties()
}

/// How an in-process executor runs one input.
pub type HarnessFn = fn(&BytesInput) -> ExitKind;

/// Runs the input, remembering it among the recent inputs (for flaky-crash sequences).
pub fn run_recorded(input: &BytesInput) -> ExitKind {
    harness::run_recorded(&input.target_bytes());
    ExitKind::Ok
}

/// The in-process modes: `harness` runs each input in this process, under the campaign's
/// observers and, for comparison tracing, under comparison logging; `restart_every`: hand the
/// state to a fresh process after that many executions.
pub fn fuzz_in_process(
    client: Client<'_>,
    harness: HarnessFn,
    restart_every: Option<u64>,
) -> Result<(), Error> {
    let Client {
        fuzzer,
        state,
        mgr,
        observers,
        calibration,
        generalization,
        config,
    } = client;
    harness::initialize();
    let opts = &config.opts;
    harness::set_malloc_limit(opts.malloc_limit_mb.unwrap_or(opts.rss_limit_mb));
    let timeout = opts.timeout;
    let mut executor = WatchedExecutor::new(harness, observers, fuzzer, state, mgr, timeout)?;
    if let Some(traced_by) = &config.cmplog_target {
        let (tracer, _cmplog_map) = standalone::tracer(config, traced_by)?;
        let mut stages = engine::with_comparison_solving(
            calibration,
            generalization,
            tracer,
            config.opts.only_ascii,
        );
        return engine::fuzz(
            &mut executor,
            &mut stages,
            fuzzer,
            state,
            mgr,
            config,
            restart_every,
        );
    }
    // The tracer runs rarely and keeps LibAFL's exact timer.
    let tracer = in_process(
        harness,
        tuple_list!(cmplog::observer()),
        fuzzer,
        state,
        mgr,
        timeout,
    )?;
    let tracer = HandlersReleased::new(tracer);
    let mut stages = engine::with_comparison_solving(
        calibration,
        generalization,
        tracer,
        config.opts.only_ascii,
    );
    engine::fuzz(
        &mut executor,
        &mut stages,
        fuzzer,
        state,
        mgr,
        config,
        restart_every,
    )
}

fn in_process<OT>(
    harness: HarnessFn,
    observers: OT,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    timeout: Duration,
) -> Result<InProcessExecutor<Mgr, HarnessFn, BytesInput, OT, State, ClientFuzzer>, Error>
where
    OT: ObserversTuple<BytesInput, State>,
{
    InProcessExecutor::builder()
        .harness(harness)
        .observers(observers)
        .timeout(timeout)
        .fuzzer(fuzzer)
        .state(state)
        .event_mgr(mgr)
        .build()
}
