//! `reset`: in-process like `direct`, but the harness's `LLVMFuzzerReset` runs after every
//! input, and the client restarts from a clean process every `--restart-every` inputs (as
//! AFL++'s `__AFL_LOOP(N)`). What state still leaks shows up in `crashes-flaky/`.

use libafl::{executors::ExitKind, inputs::BytesInput};

use crate::harness;

pub fn harness(input: &BytesInput) -> ExitKind {
    let exit = super::direct::harness(input);
    harness::reset();
    exit
}
