//! Out-of-memory executions in the out-of-process modes: the child that goes over the memory
//! limit raises a flag in memory it shares with the client before it is killed (`fork.rs`
//! watches its children; the standalone runtime watches itself), and the client reports the
//! execution as `ExitKind::Oom` (saved to `ooms/`) instead of the crash it looks like.

use std::sync::atomic::{AtomicBool, Ordering};

use libafl::{
    executors::{Executor, ExitKind, HasObservers, SetTimeout},
    Error,
};
use libafl_bolts::tuples::RefIndexable;

/// An executor whose executions that raised `flag` are out-of-memory.
pub struct OomAware<'a, E> {
    inner: E,
    flag: &'a AtomicBool,
}

impl<'a, E> OomAware<'a, E> {
    pub fn new(inner: E, flag: &'a AtomicBool) -> Self {
        Self { inner, flag }
    }
}

impl<E, EM, I, S, Z> Executor<EM, I, S, Z> for OomAware<'_, E>
where
    E: Executor<EM, I, S, Z>,
{
    fn run_target(
        &mut self,
        fuzzer: &mut Z,
        state: &mut S,
        mgr: &mut EM,
        input: &I,
    ) -> Result<ExitKind, Error> {
        let exit = self.inner.run_target(fuzzer, state, mgr, input)?;
        Ok(if self.flag.swap(false, Ordering::SeqCst) {
            ExitKind::Oom
        } else {
            exit
        })
    }
}

impl<E: HasObservers> HasObservers for OomAware<'_, E> {
    type Observers = E::Observers;
    fn observers(&self) -> RefIndexable<&Self::Observers, Self::Observers> {
        self.inner.observers()
    }
    fn observers_mut(&mut self) -> RefIndexable<&mut Self::Observers, Self::Observers> {
        self.inner.observers_mut()
    }
}

impl<E: SetTimeout> SetTimeout for OomAware<'_, E> {
    fn set_timeout(&mut self, timeout: std::time::Duration) {
        self.inner.set_timeout(timeout);
    }
}
