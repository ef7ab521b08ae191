//! `direct`: the harness runs in the client's own process (`InProcessExecutor`). The fastest
//! mode; a crash or hang is saved from the signal handler and the client restarts.

use std::time::Duration;

use libafl::{
    executors::{ExitKind, InProcessExecutor},
    inputs::{BytesInput, HasTargetBytes},
    Error,
};

use crate::{
    client::{ClientFuzzer, Mgr, Observers, State},
    harness,
};

/// How an in-process executor runs one input.
pub type HarnessFn = fn(&BytesInput) -> ExitKind;

pub type InProcess = InProcessExecutor<Mgr, HarnessFn, BytesInput, Observers, State, ClientFuzzer>;

/// Runs the input, remembering it among the recent inputs (for flaky-crash sequences).
pub fn harness(input: &BytesInput) -> ExitKind {
    harness::run_recorded(&input.target_bytes());
    ExitKind::Ok
}

pub fn executor(
    harness: HarnessFn,
    observers: Observers,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    timeout: Duration,
) -> Result<InProcess, Error> {
    InProcessExecutor::builder()
        .harness(harness)
        .observers(observers)
        .timeout(timeout)
        .fuzzer(fuzzer)
        .state(state)
        .event_mgr(mgr)
        .build()
}
