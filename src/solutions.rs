//! Crash and hang triage: an input that crashes or hangs is saved to `crashes/` or `hangs/`
//! only when its coverage is new among the solutions of that kind (AFL-style dedup), so a
//! campaign stores one file per distinct bug path, not one per crashing execution.

use std::{borrow::Cow, fs, marker::PhantomData, path::PathBuf};

use libafl::{
    corpus::Testcase,
    executors::ExitKind,
    feedbacks::{Feedback, StateInitializer},
    inputs::HasTargetBytes,
    observers::MapObserver,
    Error, HasNamedMetadata,
};
use libafl_bolts::{
    tuples::{Handle, Handled, MatchName, MatchNameRef},
    Named,
};
use serde::{Deserialize, Serialize};

use crate::output;

/// Highest hit-count bucket seen per map entry among the saved solutions of one kind.
/// Kept in the fuzzer state, so it survives the client restart that follows every crash.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SolutionCoverage {
    max: Vec<u8>,
    saved_any: bool,
}
libafl_bolts::impl_serdeany!(SolutionCoverage);

impl SolutionCoverage {
    /// Merges `map` in; true when it has an entry above everything seen so far
    /// (or when nothing of this kind was saved yet).
    pub fn merge(&mut self, map: impl Iterator<Item = u8>) -> bool {
        let mut new = !self.saved_any;
        for (i, value) in map.enumerate() {
            if i >= self.max.len() {
                self.max.resize(i + 1, 0);
            }
            if value > self.max[i] {
                self.max[i] = value;
                new = true;
            }
        }
        self.saved_any = true;
        new
    }
}

/// What kind of solution the last interesting execution was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SolutionKind {
    Crash,
    Hang,
}

impl SolutionKind {
    fn of(exit: &ExitKind) -> Option<Self> {
        match exit {
            ExitKind::Crash | ExitKind::Oom => Some(Self::Crash),
            ExitKind::Timeout => Some(Self::Hang),
            _ => None,
        }
    }
    fn metadata_name(self) -> &'static str {
        match self {
            Self::Crash => "lafuzz_crash_coverage",
            Self::Hang => "lafuzz_hang_coverage",
        }
    }
}

/// The objective feedback: crashes and hangs with new coverage, written to disk.
#[derive(Debug)]
pub struct SaveNewSolutions<C, O> {
    map: Handle<C>,
    crashes: PathBuf,
    hangs: PathBuf,
    last: Option<SolutionKind>,
    phantom: PhantomData<O>,
}

impl<C, O> SaveNewSolutions<C, O>
where
    C: Named + Handled,
{
    pub fn new(map_observer: &C, out: &std::path::Path) -> Self {
        Self {
            map: map_observer.handle(),
            crashes: output::crashes_dir(out),
            hangs: output::hangs_dir(out),
            last: None,
            phantom: PhantomData,
        }
    }
}

impl<C, O> Named for SaveNewSolutions<C, O> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("SaveNewSolutions");
        &NAME
    }
}

impl<C, O, S> StateInitializer<S> for SaveNewSolutions<C, O> {}

impl<C, O, EM, I, OT, S> Feedback<EM, I, OT, S> for SaveNewSolutions<C, O>
where
    C: AsRef<O>,
    O: MapObserver<Entry = u8>,
    OT: MatchName,
    I: HasTargetBytes,
    S: HasNamedMetadata,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        _manager: &mut EM,
        _input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        self.last = None;
        let Some(kind) = SolutionKind::of(exit_kind) else {
            return Ok(false);
        };
        let observer = observers
            .get(&self.map)
            .ok_or_else(|| Error::illegal_state("coverage observer missing"))?
            .as_ref();
        let seen =
            state.named_metadata_or_insert_with(kind.metadata_name(), SolutionCoverage::default);
        let new = seen.merge((0..observer.usable_count()).map(|i| observer.get(i)));
        if new {
            self.last = Some(kind);
        }
        Ok(new)
    }

    fn append_metadata(
        &mut self,
        _state: &mut S,
        _manager: &mut EM,
        _observers: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        let Some(kind) = self.last.take() else {
            return Ok(());
        };
        let dir = match kind {
            SolutionKind::Crash => &self.crashes,
            SolutionKind::Hang => &self.hangs,
        };
        if let Some(input) = testcase.input() {
            let bytes = input.target_bytes();
            let path = dir.join(output::input_name(&bytes));
            fs::write(&path, &*bytes)
                .map_err(|e| Error::os_error(e, format!("cannot save {}", path.display())))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_solution_is_always_new_even_without_coverage() {
        let mut seen = SolutionCoverage::default();
        assert!(seen.merge([0u8, 0, 0].into_iter()));
        assert!(!seen.merge([0u8, 0, 0].into_iter()));
    }

    #[test]
    fn only_higher_buckets_are_new() {
        let mut seen = SolutionCoverage::default();
        assert!(seen.merge([1u8, 0, 2].into_iter()));
        assert!(!seen.merge([1u8, 0, 1].into_iter()));
        assert!(seen.merge([1u8, 4, 0].into_iter()));
        assert!(!seen.merge([1u8, 4, 2].into_iter()));
    }
}
