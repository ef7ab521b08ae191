//! Comparison solving for the in-process modes (input-to-state, as CmpLog / RedQueen):
//! `libafl_cc` compiles with SanitizerCoverage `trace-cmp` and keeps `memcmp`/`strcmp` calls
//! (which libafl_targets' interceptors log); a tracing stage runs the current input with
//! comparison logging on, input-to-state replacement ([`I2SReplace`]) puts the
//! compared-against values into the input, and the values that cannot come from the input
//! become dictionary tokens ([`learned_tokens`]).
//!
//! Files: the comparison log observer (`comparison_log.rs`), input-to-state replacement
//! (`i2s/`, with the search of `window_search.rs`), tokens learned from comparisons
//! (`learned_tokens.rs`). Uses `mutators/` (`--only-ascii`), `types.rs`, `target/` (when the
//! comparison hooks run) and `platform/`.

pub mod comparison_log;
mod i2s;
pub mod learned_tokens;
mod window_search;

use std::mem::size_of;

use libafl::{
    executors::{Executor, HasObservers},
    inputs::BytesInput,
    stages::{MutationalStage, Restartable, Stage, StdMutationalStage},
    Error,
};
use libafl_bolts::shmem::ShMemProvider;
use libafl_targets::{cmps::CmpLogMap, CmpLogObserver, CMPLOG_MAP_PTR};

use comparison_log::ComparisonLog;
use i2s::{I2SReplace, SkipRepeats};

use crate::{
    mutators::only_ascii::OnlyAscii,
    platform::shmem::SelfCleaningShMemProvider,
    types::{ClientFuzzer, Mgr, Observers, SharedMemory, State},
};

/// The comparison log observer, in this process's memory.
pub fn observer() -> ComparisonLog {
    ComparisonLog::new(CmpLogObserver::new("cmplog", true))
}

/// For fork mode: the comparison log moved to shared memory, so the parent reads what a
/// child logged. Keep the returned segment as long as the observer.
pub fn shared_observer() -> Result<(ComparisonLog, SharedMemory), Error> {
    let mut shmem = SelfCleaningShMemProvider::new()?.new_shmem(size_of::<CmpLogMap>())?;
    // SAFETY: the logging hooks write through this pointer; the segment is as large as the
    // map and the caller keeps it as long as the client runs. The client is single-threaded,
    // and no hook runs while the pointer is swapped (before the first execution).
    unsafe {
        CMPLOG_MAP_PTR = shmem.as_mut_ptr().cast();
    }
    Ok((observer(), shmem))
}

/// Input-to-state replacement: puts the compared-against values into the input.
pub fn i2s_stage<E>(
    only_ascii: bool,
) -> impl Stage<E, Mgr, State, ClientFuzzer> + Restartable<State>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    I2SStage(StdMutationalStage::new(SkipRepeats::new(OnlyAscii::new(
        I2SReplace::default(),
        only_ascii,
    ))))
}

/// LibAFL's mutational stage with [`I2SReplace`] (each input run once, [`SkipRepeats`]), which
/// forgets what it knew of the last base input, comparisons and inputs before each run.
struct I2SStage<E>(
    StdMutationalStage<
        E,
        Mgr,
        BytesInput,
        BytesInput,
        SkipRepeats<OnlyAscii<I2SReplace>>,
        State,
        ClientFuzzer,
    >,
);

impl<E> Stage<E, Mgr, State, ClientFuzzer> for I2SStage<E>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    fn perform(
        &mut self,
        fuzzer: &mut ClientFuzzer,
        executor: &mut E,
        state: &mut State,
        manager: &mut Mgr,
    ) -> Result<(), Error> {
        let mutator = self.0.mutator_mut();
        mutator.forget();
        mutator.inner_mut().inner_mut().forget();
        self.0.perform(fuzzer, executor, state, manager)
    }
}

impl<E> Restartable<State> for I2SStage<E> {
    fn should_restart(&mut self, state: &mut State) -> Result<bool, Error> {
        self.0.should_restart(state)
    }

    fn clear_progress(&mut self, state: &mut State) -> Result<(), Error> {
        self.0.clear_progress(state)
    }
}
