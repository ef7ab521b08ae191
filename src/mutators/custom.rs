//! libFuzzer's custom mutators (structure-aware fuzzing): a harness that defines
//! `LLVMFuzzerCustomMutator` mutates its inputs itself, and calls `LLVMFuzzerMutate` (exported
//! by libafl_targets) for our mutations on the bytes it chooses: havoc and dictionary tokens,
//! the tokens learned from comparisons included. As in libFuzzer, every mutation then goes
//! through it, and a harness's `LLVMFuzzerCustomCrossOver` is one more choice beside the
//! others. Only where the harness is linked into this process (`direct`, `reset`, `fork`).

use std::borrow::Cow;

use libafl::{
    corpus::CorpusId,
    inputs::BytesInput,
    mutators::{
        havoc_mutations_no_crossover, tokens_mutations, HavocMutationsNoCrossoverType,
        MutationResult, Mutator, SingleChoiceScheduledMutator, TokenInsert, TokenReplace,
    },
    state::{HasMaxSize, HasRand},
    Error,
};
use libafl_bolts::{
    rands::Rand,
    tuples::{merge_tuple_list_type, tuple_list_type, Merge},
    Named,
};
use libafl_targets::{has_custom_crossover, has_custom_mutator, LLVMCustomMutator};

use crate::types::State;

/// What `LLVMFuzzerMutate` applies: one of havoc's mutations (without crossover: another entry's
/// bytes are not in the harness's inner format) or dictionary tokens per call, as libFuzzer's.
/// Stacks of them (LibAFL's havoc, up to 128) undid what the harness kept valid: on
/// `harnesses/compressed`, no crash in 15 s on three seeds, where one mutation found it.
type Inner = SingleChoiceScheduledMutator<
    merge_tuple_list_type!(
        HavocMutationsNoCrossoverType,
        tuple_list_type!(TokenInsert, TokenReplace)
    ),
>;

fn inner() -> Inner {
    SingleChoiceScheduledMutator::new(havoc_mutations_no_crossover().merge(tokens_mutations()))
}

/// Whether the linked harness mutates its own inputs.
pub fn harness_mutates() -> bool {
    has_custom_mutator()
}

/// The harness's crossover beside our own mutations is one choice in this many: libFuzzer
/// picks it as one more among its 13 default mutations. Beside the harness's own mutator it is
/// one in two, as there.
const CROSSOVER_AMONG_OURS: usize = 14;

/// The least room the harness's mutator gets (libFuzzer's default `-max_len`); twice the
/// entry's length when that is more, and never more than `--max-len`.
const CUSTOM_MUTATOR_ROOM: usize = 4096;

/// Our mutations `M`, or the harness's mutator when it has one; the harness's crossover, when
/// it has one, as one more choice.
pub struct HarnessMutators<M> {
    ours: M,
    custom: Option<LLVMCustomMutator<State, Inner, false>>,
    crossover: Option<LLVMCustomMutator<State, Inner, true>>,
}

impl<M> HarnessMutators<M> {
    pub fn new(ours: M) -> Self {
        // SAFETY: the harness's functions follow libFuzzer's contract (their output fits in
        // the size they are given); `LLVMFuzzerMutate` works only while they run.
        let custom =
            harness_mutates().then(|| unsafe { LLVMCustomMutator::mutate_unchecked(inner()) });
        // SAFETY: as above.
        let crossover = has_custom_crossover()
            .then(|| unsafe { LLVMCustomMutator::crossover_unchecked(inner()) });
        Self {
            ours,
            custom,
            crossover,
        }
    }
}

impl<M: Mutator<BytesInput, State>> Mutator<BytesInput, State> for HarnessMutators<M> {
    fn mutate(
        &mut self,
        state: &mut State,
        input: &mut BytesInput,
    ) -> Result<MutationResult, Error> {
        if let Some(crossover) = &mut self.crossover {
            let among = if self.custom.is_some() {
                2
            } else {
                CROSSOVER_AMONG_OURS
            };
            if state.rand_mut().below_or_zero(among) == 0 {
                return crossover.mutate(state, input);
            }
        }
        match &mut self.custom {
            Some(custom) => {
                // The harness's mutator gets a buffer of the room it may fill, zeroed first:
                // all of `--max-len` (1 MiB by default) cost a sixth of the speed on a small
                // target. libFuzzer gives it 4096 bytes unless `-max_len` or the seeds ask more.
                let max_size = state.max_size();
                let room = (2 * input.as_ref().len())
                    .max(CUSTOM_MUTATOR_ROOM)
                    .min(max_size);
                state.set_max_size(room);
                let mutated = custom.mutate(state, input);
                state.set_max_size(max_size);
                mutated
            }
            None => self.ours.mutate(state, input),
        }
    }

    fn post_exec(&mut self, state: &mut State, added: Option<CorpusId>) -> Result<(), Error> {
        match &mut self.custom {
            Some(custom) => custom.post_exec(state, added),
            None => self.ours.post_exec(state, added),
        }
    }
}

impl<M> Named for HarnessMutators<M> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("HarnessMutators");
        &NAME
    }
}
