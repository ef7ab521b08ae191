//! `fork`: every input runs in a fresh child forked from the client (`InProcessForkExecutor`),
//! so a crash, hang or leaked state never reaches the next input, and the client's own timer
//! stops slow children. Setup (`LLVMFuzzerInitialize`) runs once, before the first fork.
//!
//! The 8-bit counters live in the target's memory, which a child does not share with its
//! parent. `libafl_cc` links the counters into whole pages of their own; here those pages are
//! remapped as shared memory before forking, so the parent sees every counter a child hits,
//! crashing and hanging children included, and no other global is shared.

use std::time::Duration;

use libafl::{
    executors::{ExitKind, InProcessForkExecutor},
    inputs::{BytesInput, HasTargetBytes},
    observers::ObserversTuple,
    Error,
};
use libafl_bolts::shmem::ShMemProvider;

use crate::{
    client::{ClientFuzzer, Mgr, Observers, State},
    harness,
    modes::direct::HarnessFn,
    shmem::SelfCleaningShMemProvider,
};

pub type Forking<OT = Observers> = InProcessForkExecutor<
    Mgr,
    HarnessFn,
    BytesInput,
    OT,
    State,
    SelfCleaningShMemProvider,
    ClientFuzzer,
>;

fn harness(input: &BytesInput) -> ExitKind {
    harness::run(&input.target_bytes());
    ExitKind::Ok
}

const PAGE: usize = 4096;

/// Remaps the pages holding the target's counters as shared anonymous memory, keeping their
/// contents. Once per client process, before the first fork.
pub fn share_counters_with_children() -> Result<(), Error> {
    let counters = harness::coverage_counters()?;
    let start = counters.as_mut_ptr();
    if !(start as usize).is_multiple_of(PAGE) {
        return Err(Error::illegal_state(
            "fork mode needs the coverage counters on pages of their own: \
             rebuild the target with this version of libafl_cc/libafl_cxx",
        ));
    }
    let len = counters.len().div_ceil(PAGE) * PAGE;
    let saved = counters.to_vec();
    // SAFETY: the range is the counters' own pages (page-aligned start, padded end, see the
    // wrapper's linker script); MAP_FIXED replaces them in place.
    let mapped = unsafe {
        libc::mmap(
            start.cast(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if mapped == libc::MAP_FAILED {
        return Err(Error::illegal_state(format!(
            "cannot share the coverage counters: {}",
            std::io::Error::last_os_error()
        )));
    }
    counters.copy_from_slice(&saved);
    Ok(())
}

/// A fork-per-input executor with `observers`; their maps must be shared memory (see
/// [`share_counters_with_children`]).
pub fn executor<OT>(
    observers: OT,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    timeout: Duration,
) -> Result<Forking<OT>, Error>
where
    OT: ObserversTuple<BytesInput, State>,
{
    InProcessForkExecutor::new(
        harness as HarnessFn,
        observers,
        fuzzer,
        state,
        mgr,
        timeout,
        SelfCleaningShMemProvider::new()?,
    )
}
