//! The havoc stage: LibAFL's power-scheduled mutational stage (`StdPowerMutationalStage`: as
//! many executions as the entry's power score, here [`BoundedSpeedPower`]), mutating one buffer
//! that is reset to the entry before each execution, with [`StackedMutations`]. LibAFL's stage
//! clones the entry for every execution and drops the copy after it: an allocation and a free per
//! execution, and a reallocation whenever a mutation grows the exact-sized copy, which on a fast
//! target was a tenth of the fuzzer's time.

use std::{borrow::Cow, num::NonZero};

use libafl::{
    corpus::CorpusId,
    executors::{Executor, HasObservers},
    fuzzer::Evaluator,
    inputs::BytesInput,
    mutators::{MutationResult, Mutator, MutatorsTuple},
    schedulers::TestcaseScore,
    stages::{Restartable, RetryCountRestartHelper, Stage},
    state::{HasCurrentTestcase, HasRand},
    Error,
};
use libafl_bolts::{rands::Rand, tuples::HasConstLen, Named};

use crate::{
    coverage::corpus_weight::BoundedSpeedPower,
    types::{ClientFuzzer, Mgr, Observers, State},
};

/// Power-scheduled mutations of the current entry, one execution each.
pub struct PowerHavocStage<M> {
    mutator: M,
}

/// The stage's name, which also keys its restart count in the state.
static STAGE_NAME: Cow<'static, str> = Cow::Borrowed("power_havoc");

impl<M> PowerHavocStage<M> {
    pub fn new(mutator: M) -> Self {
        Self { mutator }
    }
}

impl<M> Named for PowerHavocStage<M> {
    fn name(&self) -> &Cow<'static, str> {
        &STAGE_NAME
    }
}

impl<E, M> Stage<E, Mgr, State, ClientFuzzer> for PowerHavocStage<M>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
    M: Mutator<BytesInput, State>,
{
    fn perform(
        &mut self,
        fuzzer: &mut ClientFuzzer,
        executor: &mut E,
        state: &mut State,
        mgr: &mut Mgr,
    ) -> Result<(), Error> {
        let executions = {
            let mut entry = state.current_testcase_mut()?;
            BoundedSpeedPower::compute(state, &mut entry)? as usize
        };
        let entry: BytesInput = state.current_input_cloned()?;
        let mut input = entry.clone();
        for _ in 0..executions {
            // Keeps the buffer's capacity: no allocation once mutations have grown it.
            input.as_mut().clone_from(entry.as_ref());
            if self.mutator.mutate(state, &mut input)? == MutationResult::Skipped {
                continue;
            }
            let (_, added) = fuzzer.evaluate_filtered(state, executor, mgr, &input)?;
            self.mutator.post_exec(state, added)?;
        }
        Ok(())
    }
}

/// As LibAFL's stage: an entry whose havoc made the client restart three times is skipped.
impl<M> Restartable<State> for PowerHavocStage<M> {
    fn should_restart(&mut self, state: &mut State) -> Result<bool, Error> {
        RetryCountRestartHelper::should_restart(state, &STAGE_NAME, 3)
    }

    fn clear_progress(&mut self, state: &mut State) -> Result<(), Error> {
        RetryCountRestartHelper::clear_progress(state, &STAGE_NAME)
    }
}

/// Havoc on binary inputs stacks 2^1 ... 2^this mutations per execution. LibAFL's default, 7
/// (up to 128), spent the time of large inputs moving their bytes (each insertion or deletion
/// shifts the tail) and mutated them past what the target accepts; 5 covered more on four of
/// the suite's five targets and the same on zlib (side by side, 60 s, two seeds); 4 was no
/// better than 5, and again on seven binary targets (2026-12-05, medians of 3): zstd +18.5%,
/// oniguruma -1.7%, zlib -1.0%.
const MAX_STACK_POW: usize = 5;

/// Havoc on text inputs stacks 2^0 ... 2^this mutations. Side by side on sqlite (SQL seeds),
/// 60 s, our edges summed: up to 8 instead of 32, +2.5% (seeds 1-3 x 2 core orders, 6 of 6
/// pairs higher) and +0.4% (seeds 4-5, 3 of 4); up to 4 instead of 8, -1.0% (3 of 6).
const MAX_TEXT_STACK_POW: usize = 3;

/// LibAFL's havoc scheduling (`HavocScheduledMutator`: 2, 4, ... 2^[`MAX_STACK_POW`]
/// mutations, each count as likely, each mutation picked at random), and for text inputs
/// 1, 2, 4, 8. A query language accepts few inputs two random mutations away from a valid one;
/// single mutations, libFuzzer's step, keep more of them valid. Side by side, 60 s, seeds 1-3 x
/// 2 core orders, sqlite: from one mutation up, +4.3% edges, 6 of 6 pairs higher; on the binary
/// inputs of harfbuzz (-2.5%, 1 of 4 pairs higher), lcms (-0.9%, 1 of 4), libpng (+0.1%) and
/// zlib (+0.2%) single mutations did not help, so binary inputs keep LibAFL's stacks.
pub struct StackedMutations<MT> {
    mutations: MT,
    /// The fewest mutations stacked is 2^this.
    min_stack_pow: usize,
    /// The most mutations stacked is 2^this.
    max_stack_pow: usize,
}

impl<MT> StackedMutations<MT> {
    /// `text`: the campaign treats its inputs as text (Grimoire on, see `prepare.rs`): stacks
    /// of 1 to 8 mutations.
    pub fn new(mutations: MT, text: bool) -> Self {
        let (min_stack_pow, max_stack_pow) = if text {
            (0, MAX_TEXT_STACK_POW)
        } else {
            (1, MAX_STACK_POW)
        };
        Self {
            mutations,
            min_stack_pow,
            max_stack_pow,
        }
    }

    /// The stack sizes it picks from, each as likely (for the bench's `--mutation-costs`).
    pub fn stack_sizes(&self) -> impl Iterator<Item = u64> {
        (self.min_stack_pow..=self.max_stack_pow).map(|pow| 1u64 << pow)
    }
}

impl<I, S, MT> Mutator<I, S> for StackedMutations<MT>
where
    MT: MutatorsTuple<I, S> + HasConstLen,
    S: HasRand,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let Some(choices) = NonZero::new(MT::LEN) else {
            return Ok(MutationResult::Skipped);
        };
        let stack_pow = self.min_stack_pow
            + state
                .rand_mut()
                .below_or_zero(self.max_stack_pow + 1 - self.min_stack_pow);
        let mut result = MutationResult::Skipped;
        for _ in 0..1u64 << stack_pow {
            let which = state.rand_mut().below(choices).into();
            if self.mutations.get_and_mutate(which, state, input)? == MutationResult::Mutated {
                result = MutationResult::Mutated;
            }
        }
        Ok(result)
    }

    fn post_exec(&mut self, state: &mut S, added: Option<CorpusId>) -> Result<(), Error> {
        self.mutations.post_exec_all(state, added)
    }
}

impl<MT> Named for StackedMutations<MT> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("StackedMutations");
        &NAME
    }
}

#[cfg(test)]
mod tests {
    use libafl::{inputs::BytesInput, mutators::MutationResult, state::NopState};
    use libafl_bolts::tuples::tuple_list;

    use super::*;

    /// Counts its calls.
    struct Counting(u64);

    impl<I, S> Mutator<I, S> for Counting {
        fn mutate(&mut self, _: &mut S, _: &mut I) -> Result<MutationResult, Error> {
            self.0 += 1;
            Ok(MutationResult::Mutated)
        }
        fn post_exec(&mut self, _: &mut S, _: Option<CorpusId>) -> Result<(), Error> {
            Ok(())
        }
    }

    impl Named for Counting {
        fn name(&self) -> &Cow<'static, str> {
            static NAME: Cow<'static, str> = Cow::Borrowed("Counting");
            &NAME
        }
    }

    /// The stack sizes seen over many calls.
    fn stack_sizes(text: bool) -> std::collections::BTreeSet<u64> {
        let mut state: NopState<BytesInput> = NopState::new();
        let mut stacked = StackedMutations::new(tuple_list!(Counting(0)), text);
        let mut input = BytesInput::new(vec![0]);
        (0..2000)
            .map(|_| {
                let before = stacked.mutations.0 .0;
                stacked.mutate(&mut state, &mut input).unwrap();
                stacked.mutations.0 .0 - before
            })
            .collect()
    }

    #[test]
    fn text_stacks_one_to_eight_mutations_binary_two_to_thirty_two() {
        let text: Vec<u64> = stack_sizes(true).into_iter().collect();
        assert_eq!(text, [1, 2, 4, 8]);
        let binary: Vec<u64> = stack_sizes(false).into_iter().collect();
        assert_eq!(binary, [2, 4, 8, 16, 32]);
    }
}
