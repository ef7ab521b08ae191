//! `direct`: the harness runs in the client's own process (`InProcessExecutor`). The fastest
//! mode; a crash or hang is saved from the signal handler and the client restarts.

use std::time::Duration;

use libafl::{
    executors::{ExitKind, InProcessExecutor},
    inputs::{BytesInput, HasTargetBytes},
    observers::ObserversTuple,
    Error,
};

use crate::{
    client::{ClientFuzzer, Mgr, Observers, State},
    harness,
};

/// How an in-process executor runs one input.
pub type HarnessFn = fn(&BytesInput) -> ExitKind;

pub type InProcess<OT = Observers> =
    InProcessExecutor<Mgr, HarnessFn, BytesInput, OT, State, ClientFuzzer>;

/// Runs the input, remembering it among the recent inputs (for flaky-crash sequences).
pub fn harness(input: &BytesInput) -> ExitKind {
    harness::run_recorded(&input.target_bytes());
    ExitKind::Ok
}

/// An in-process executor of `harness` with `observers` (the campaign's, or comparison
/// logging for the tracing stage).
pub fn executor<OT>(
    harness: HarnessFn,
    observers: OT,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    timeout: Duration,
) -> Result<InProcess<OT>, Error>
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
