//! The havoc stage: LibAFL's power-scheduled mutational stage (`StdPowerMutationalStage`: as
//! many executions as the entry's power score), mutating one buffer that is reset to the entry
//! before each execution. LibAFL's stage clones the entry for every execution and drops the
//! copy after it: an allocation and a free per execution, and a reallocation whenever a
//! mutation grows the exact-sized copy, which on a fast target was a tenth of the fuzzer's time.

use std::borrow::Cow;

use libafl::{
    executors::{Executor, HasObservers},
    fuzzer::Evaluator,
    inputs::BytesInput,
    mutators::{MutationResult, Mutator},
    schedulers::{testcase_score::CorpusPowerTestcaseScore, TestcaseScore},
    stages::{Restartable, RetryCountRestartHelper, Stage},
    state::HasCurrentTestcase,
    Error,
};
use libafl_bolts::Named;

use crate::types::{ClientFuzzer, Mgr, Observers, State};

/// Power-scheduled mutations of the current entry, one execution each.
pub struct PowerHavocStage<M> {
    name: Cow<'static, str>,
    mutator: M,
}

impl<M> PowerHavocStage<M> {
    pub fn new(mutator: M) -> Self {
        Self {
            name: Cow::Borrowed("power_havoc"),
            mutator,
        }
    }
}

impl<M> Named for PowerHavocStage<M> {
    fn name(&self) -> &Cow<'static, str> {
        &self.name
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
            CorpusPowerTestcaseScore::compute(state, &mut entry)? as usize
        };
        let entry: BytesInput = state.current_input_cloned()?;
        let mut input = entry.clone();
        for _ in 0..executions {
            // Keeps the buffer's capacity: no allocation once it is as large as the mutations grow it.
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
        RetryCountRestartHelper::should_restart(state, &self.name, 3)
    }

    fn clear_progress(&mut self, state: &mut State) -> Result<(), Error> {
        RetryCountRestartHelper::clear_progress(state, &self.name)
    }
}
