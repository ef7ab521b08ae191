//! The stages of every mode, in the order they run on each scheduled entry: generalization of a
//! new entry (text inputs only), calibration, comparison solving (when something traces
//! comparisons, see [`COMPARISON_SOLVING_EVERY`]), havoc, then Grimoire (text inputs only).

use libafl::{
    executors::{Executor, HasObservers},
    inputs::{BytesInput, GeneralizedInputMetadata},
    mutators::{
        havoc_mutations, tokens_mutations, GrimoireExtensionMutator, GrimoireRandomDeleteMutator,
        GrimoireRecursiveReplacementMutator, GrimoireStringReplacementMutator,
        HavocScheduledMutator,
    },
    observers::ObserversTuple,
    stages::{
        IfStage, OptionalStage, Restartable, Stage, StagesTuple, StdMutationalStage, TracingStage,
    },
    state::HasCurrentTestcase,
};
use libafl_bolts::tuples::{tuple_list, Merge};

use crate::{
    cmplog::{self, learned_tokens},
    mutators::{
        custom::{self, HarnessMutators},
        havoc::{PowerHavocStage, StackedMutations},
        only_ascii::OnlyAscii,
    },
    types::{Calibration, ClientFuzzer, Generalization, Mgr, Observers, State},
};

/// How often an entry gets comparison solving: the first time it is fuzzed (as AFL++'s
/// CmpLog) and every this many times after, since random input-to-state replacement may need
/// several tries. Every time cost three quarters of libpng's executions. Text inputs (Grimoire
/// on) get it the first time only: on sqlite (SQL seeds), side by side 60 s, seeds 1-2 x 2 core
/// orders, edges 37868 -> 38880 (+2.7%, 3 of 4 pairs higher); the suite's bench had the default
/// build 0.6-3.6% behind the build without comparison logging there in three runs.
pub const COMPARISON_SOLVING_EVERY: usize = 4;

/// Whether an entry fuzzed `fuzzed` times before gets comparison solving now.
pub fn comparison_solving_due(fuzzed: usize, text: bool) -> bool {
    if text {
        fuzzed == 0
    } else {
        fuzzed.is_multiple_of(COMPARISON_SOLVING_EVERY)
    }
}

/// The stages: `tracer` runs the comparison-tracing stage (None: nothing logs comparisons, and
/// there is no comparison solving); `only_ascii`: see [`OnlyAscii`].
pub fn stages<E, TE>(
    calibration: Calibration,
    generalization: Option<Generalization>,
    tracer: Option<TE>,
    only_ascii: bool,
) -> impl StagesTuple<E, Mgr, State, ClientFuzzer>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
    TE: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers,
    TE::Observers: ObserversTuple<BytesInput, State>,
{
    // A harness that mutates its inputs itself keeps their structure; mutations of the raw
    // bytes (input-to-state replacement, Grimoire) would break it, as libFuzzer knows.
    let custom = custom::harness_mutates();
    let text = generalization.is_some() && !custom;
    let due = move |_: &mut ClientFuzzer, _: &mut E, state: &mut State, _: &mut Mgr| {
        let fuzzed = state.current_testcase()?.scheduled_count();
        Ok(comparison_solving_due(fuzzed, text))
    };
    let comparison_solving = tracer.map(|tracer| {
        tuple_list!(IfStage::new(
            due,
            tuple_list!(
                TracingStage::new(tracer),
                OptionalStage::new((!custom).then(|| tuple_list!(cmplog::i2s_stage(only_ascii)))),
                learned_tokens::LearnTokensStage
            )
        ))
    });
    tuple_list!(
        OptionalStage::new(generalization.map(|g| tuple_list!(g))),
        calibration,
        OptionalStage::new(comparison_solving),
        havoc_stage(only_ascii, text),
        OptionalStage::new(text.then(|| tuple_list!(grimoire_stage())))
    )
}

/// Havoc and dictionary tokens (or the harness's own mutator, see [`HarnessMutators`]),
/// scheduled by power; `only_ascii`: see [`OnlyAscii`]; `text`: see [`StackedMutations`].
fn havoc_stage<E>(
    only_ascii: bool,
    text: bool,
) -> impl Stage<E, Mgr, State, ClientFuzzer> + Restartable<State>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    PowerHavocStage::new(OnlyAscii::new(
        HarnessMutators::new(StackedMutations::new(
            havoc_mutations().merge(tokens_mutations()),
            text,
        )),
        only_ascii,
    ))
}

/// Grimoire's mutations, for text inputs: each new entry is generalized first (the parts
/// whose removal keeps its new coverage become gaps); these splice other entries'
/// generalized parts and dictionary tokens into the gaps and delete parts. LibAFL's text
/// fuzzer's settings (stacks of 2 to 8; deletion twice as likely, against growing inputs).
/// On sqlite (SQL seeds), side by side 120 s, 6 seeds x 2 core orders: 8977 -> 9070 edges
/// (+1.0%, 9 of 12 pairs higher).
fn grimoire_stage<E>() -> impl Stage<E, Mgr, State, ClientFuzzer> + Restartable<State>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    StdMutationalStage::<_, _, GeneralizedInputMetadata, BytesInput, _, _, _>::transforming(
        HavocScheduledMutator::with_max_stack_pow(
            tuple_list!(
                GrimoireExtensionMutator::new(),
                GrimoireRecursiveReplacementMutator::new(),
                GrimoireStringReplacementMutator::new(),
                GrimoireRandomDeleteMutator::new(),
                GrimoireRandomDeleteMutator::new(),
            ),
            3,
        ),
    )
}
