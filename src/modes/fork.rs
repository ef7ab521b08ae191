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
use libafl_bolts::{shmem::ShMemProvider, tuples::tuple_list};

use super::{
    direct::{self, HarnessFn},
    Coverage, ExecutionMode,
};
use crate::{
    cmplog,
    engine::{self, Client, FuzzConfig},
    harness,
    options::FuzzOptions,
    runtime_abi,
    shmem::SelfCleaningShMemProvider,
    types::{ClientFuzzer, Mgr, State},
};

pub struct Fork;

impl ExecutionMode for Fork {
    fn check(&self, opts: &FuzzOptions) -> Result<usize, String> {
        direct::linked_harness_map_size(opts)
    }
    fn coverage(&self, _config: &FuzzConfig) -> Result<Coverage, Error> {
        let counters = harness::take_coverage_counters()?;
        share_with_children(counters)?;
        Ok((direct::counters_observer(counters), None))
    }
    fn fuzz(&self, client: Client<'_>) -> Result<(), Error> {
        let Client {
            fuzzer,
            state,
            mgr,
            observers,
            calibration,
            config,
        } = client;
        harness::initialize();
        let timeout = config.opts.timeout;
        let mut executor = forking(observers, fuzzer, state, mgr, timeout)?;
        // The comparison log too must be shared memory for the parent to read it.
        let (cmplog_observer, _cmplog_map) = cmplog::shared_observer()?;
        let tracer = forking(tuple_list!(cmplog_observer), fuzzer, state, mgr, timeout)?;
        let mut stages = engine::with_comparison_solving(calibration, tracer);
        engine::fuzz(&mut executor, &mut stages, fuzzer, state, mgr, config, None)
    }
}

fn run(input: &BytesInput) -> ExitKind {
    harness::run(&input.target_bytes());
    ExitKind::Ok
}

/// Remaps the pages holding the target's counters as shared anonymous memory, keeping their
/// contents. Once per client process, before the first fork.
fn share_with_children(counters: &mut [u8]) -> Result<(), Error> {
    let page = runtime_abi::page_size();
    let start = counters.as_mut_ptr();
    if !(start as usize).is_multiple_of(page) {
        return Err(Error::illegal_state(
            "fork mode needs the coverage counters on pages of their own: \
             rebuild the target with this version of libafl_cc/libafl_cxx",
        ));
    }
    let len = counters.len().next_multiple_of(page);
    let saved = counters.to_vec();
    // SAFETY: the range is the counters' own pages (page-aligned start, padded end, see the
    // wrapper's linker script), so no other data is replaced; MAP_FIXED maps over them in
    // place, and `counters` stays valid (same addresses, now shared).
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

type Forking<OT> = InProcessForkExecutor<
    Mgr,
    HarnessFn,
    BytesInput,
    OT,
    State,
    SelfCleaningShMemProvider,
    ClientFuzzer,
>;

/// A fork-per-input executor with `observers`; their maps must be shared memory.
fn forking<OT>(
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
        run as HarnessFn,
        observers,
        fuzzer,
        state,
        mgr,
        timeout,
        SelfCleaningShMemProvider::new()?,
    )
}
