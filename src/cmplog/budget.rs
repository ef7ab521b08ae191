//! Comparison solving's share of a client's time: past [`MAX_SHARE`] an entry's comparison
//! solving waits for a later turn, so a target whose entries trace slowly or hold many
//! comparisons does not spend its campaign on them.
//!
//! Measured per stage on one core, 30 s: harfbuzz spent 20% of its time solving comparisons
//! (90% of it on entries fuzzed the first time: a tracing run of 0.5 ms, then replacements at
//! three times a havoc execution's cost), zstd 16.5% (most of it on revisits).

use std::{
    cell::Cell,
    rc::Rc,
    time::{Duration, Instant},
};

use libafl::{
    stages::{Restartable, Stage},
    Error,
};

/// The most of the client's time comparison solving may take.
const MAX_SHARE: f64 = 0.10;

/// The time comparison solving took in this client, shared by the stage that times it and the
/// check that gates it.
#[derive(Clone, Debug)]
pub struct ComparisonBudget(Rc<Clock>);

#[derive(Debug)]
struct Clock {
    started: Instant,
    spent: Cell<Duration>,
}

impl ComparisonBudget {
    pub fn new() -> Self {
        Self(Rc::new(Clock {
            started: Instant::now(),
            spent: Cell::new(Duration::ZERO),
        }))
    }

    /// Whether comparison solving is within its share of the time so far.
    pub fn allows(&self) -> bool {
        within(self.0.spent.get(), self.0.started.elapsed())
    }

    /// `stage`, with the time it takes counted against the budget.
    pub fn timing<S>(&self, stage: S) -> Timed<S> {
        Timed {
            stage,
            budget: self.clone(),
        }
    }
}

/// Whether `spent` out of `elapsed` is within [`MAX_SHARE`].
fn within(spent: Duration, elapsed: Duration) -> bool {
    spent.as_secs_f64() <= elapsed.as_secs_f64() * MAX_SHARE
}

/// A stage whose running time counts against a [`ComparisonBudget`].
pub struct Timed<S> {
    stage: S,
    budget: ComparisonBudget,
}

impl<S, E, M, St, Z> Stage<E, M, St, Z> for Timed<S>
where
    S: Stage<E, M, St, Z>,
{
    fn perform(
        &mut self,
        fuzzer: &mut Z,
        executor: &mut E,
        state: &mut St,
        manager: &mut M,
    ) -> Result<(), Error> {
        let started = Instant::now();
        let result = self.stage.perform(fuzzer, executor, state, manager);
        let clock = &self.budget.0;
        clock.spent.set(clock.spent.get() + started.elapsed());
        result
    }
}

impl<S: Restartable<St>, St> Restartable<St> for Timed<S> {
    fn should_restart(&mut self, state: &mut St) -> Result<bool, Error> {
        self.stage.should_restart(state)
    }

    fn clear_progress(&mut self, state: &mut St) -> Result<(), Error> {
        self.stage.clear_progress(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage that takes `0` of the client's time.
    struct Takes(Duration);

    impl Stage<(), (), (), ()> for Takes {
        fn perform(&mut self, _: &mut (), _: &mut (), _: &mut (), _: &mut ()) -> Result<(), Error> {
            std::thread::sleep(self.0);
            Ok(())
        }
    }

    #[test]
    fn a_timed_stage_spends_the_budget_and_the_rest_of_the_time_refills_it() {
        let budget = ComparisonBudget::new();
        assert!(budget.allows());
        let mut stage = budget.timing(Takes(Duration::from_millis(20)));
        stage.perform(&mut (), &mut (), &mut (), &mut ()).unwrap();
        assert!(!budget.allows());
        // Twenty times the stage's time spent elsewhere brings it back within its share.
        std::thread::sleep(Duration::from_millis(400));
        assert!(budget.allows());
    }

    #[test]
    fn comparison_solving_waits_once_past_its_share() {
        let s = Duration::from_secs;
        assert!(within(s(0), s(0)));
        assert!(within(s(1), s(10)));
        assert!(!within(s(2), s(10)));
        assert!(!within(Duration::from_millis(1), s(0)));
    }
}
