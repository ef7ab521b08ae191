//! Deciding which crashes and hangs are new: the objective feedback.

use std::{borrow::Cow, marker::PhantomData};

use libafl::{
    corpus::Testcase,
    executors::ExitKind,
    feedbacks::{Feedback, StateInitializer},
    inputs::HasTargetBytes,
    observers::MapObserver,
    Error, HasMetadata, HasNamedMetadata,
};
use libafl_bolts::{
    tuples::{Handle, Handled, MatchName, MatchNameRef},
    Named,
};
use serde::{Deserialize, Serialize};

use super::{KnownSolutions, SolutionKind};

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

/// The objective: a crash or hang whose coverage is new among the solutions of its kind. It
/// remembers every crashing or hanging input (for the input filter) and tags new solutions
/// with their [`SolutionKind`]; saving them is the solutions corpus's job.
#[derive(Debug)]
pub struct NewSolutions<C, O> {
    map: Handle<C>,
    last: Option<SolutionKind>,
    phantom: PhantomData<O>,
}

impl<C, O> NewSolutions<C, O>
where
    C: Named + Handled,
{
    pub fn new(map_observer: &C) -> Self {
        Self {
            map: map_observer.handle(),
            last: None,
            phantom: PhantomData,
        }
    }
}

impl<C, O> Named for NewSolutions<C, O> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("NewSolutions");
        &NAME
    }
}

impl<C, O, S> StateInitializer<S> for NewSolutions<C, O> {}

impl<C, O, EM, I, OT, S> Feedback<EM, I, OT, S> for NewSolutions<C, O>
where
    C: AsRef<O>,
    O: MapObserver<Entry = u8>,
    OT: MatchName,
    I: HasTargetBytes,
    S: HasNamedMetadata + HasMetadata,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        _manager: &mut EM,
        input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        self.last = None;
        let Some(kind) = SolutionKind::of(exit_kind) else {
            return Ok(false);
        };
        state
            .metadata_or_insert_with(KnownSolutions::default)
            .insert(&input.target_bytes());
        // The comparison-tracing executor runs without the coverage observer: a crash there
        // has no coverage to compare, and is new only if it is the first of its kind.
        let coverage: Vec<u8> = observers.get(&self.map).map_or_else(Vec::new, |observer| {
            let map = observer.as_ref();
            (0..map.usable_count()).map(|i| map.get(i)).collect()
        });
        let seen = state.named_metadata_or_insert_with(
            kind.coverage_metadata_name(),
            SolutionCoverage::default,
        );
        let new = seen.merge(coverage.into_iter());
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
        if let Some(kind) = self.last.take() {
            testcase.add_metadata(kind);
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
