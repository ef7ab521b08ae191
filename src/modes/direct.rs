//! `direct`: the harness runs in the client's own process (`InProcessExecutor`). The fastest
//! mode; a crash or hang is saved from the signal handler and the client restarts.

use std::time::Duration;

use libafl::{
    executors::{ExitKind, InProcessExecutor},
    inputs::BytesInput,
    Error,
};

use crate::client::{run_input, ClientFuzzer, Mgr, Observers, State};

pub type DirectExecutor =
    InProcessExecutor<Mgr, fn(&BytesInput) -> ExitKind, BytesInput, Observers, State, ClientFuzzer>;

pub fn executor(
    observers: Observers,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    timeout: Duration,
) -> Result<DirectExecutor, Error> {
    InProcessExecutor::builder()
        .harness(run_input as fn(&BytesInput) -> ExitKind)
        .observers(observers)
        .timeout(timeout)
        .fuzzer(fuzzer)
        .state(state)
        .event_mgr(mgr)
        .build()
}
