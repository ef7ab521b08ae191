//! What every mode runs once it has its executors: the stages (calibration, comparison
//! solving, havoc) and the fuzzing loop. A mode file builds executors and calls [`fuzz`].

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use libafl::{
    corpus::Corpus,
    events::{AwaitRestartSafe, EventRestarter, ProgressReporter, SendExiting},
    executors::{Executor, HasObservers},
    fuzzer::{Evaluator, Fuzzer},
    inputs::{BytesInput, GeneralizedInputMetadata},
    mutators::{
        havoc_mutations, tokens_mutations, GrimoireExtensionMutator, GrimoireRandomDeleteMutator,
        GrimoireRecursiveReplacementMutator, GrimoireStringReplacementMutator,
        HavocScheduledMutator, Tokens,
    },
    observers::ObserversTuple,
    stages::{
        IfStage, OptionalStage, Restartable, Stage, StagesTuple, StdMutationalStage, TracingStage,
    },
    state::{HasCorpus, HasCurrentTestcase, HasExecutions},
    Error, HasMetadata,
};
use libafl_bolts::tuples::{tuple_list, Merge};

use crate::{
    cmplog,
    havoc_stage::{PowerHavocStage, StackedMutations},
    learned_tokens,
    only_ascii::OnlyAscii,
    options::FuzzOptions,
    output::collect_files,
    saved_state, solutions,
    types::{Calibration, ClientFuzzer, Generalization, Mgr, Observers, State},
};

/// How often a client sends its statistics to the broker.
const REPORT_INTERVAL: Duration = Duration::from_secs(1);
/// How often a client saves what it learned (see `saved_state.rs`).
const SAVE_INTERVAL: Duration = Duration::from_secs(5);

/// A campaign as its clients see it: the options and what was checked and read before start.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    pub opts: FuzzOptions,
    pub output: PathBuf,
    /// The `-x` dictionaries' tokens.
    pub tokens: Tokens,
    /// Every seed file found in the `-i` directories (and a previous run's queue).
    pub seeds: Vec<PathBuf>,
    /// Entries in the coverage map: the linked harness's counters, or what the standalone
    /// target reports.
    pub map_size: usize,
    /// `--cmplog`: the separate build that comparison tracing runs.
    pub cmplog_target: Option<TracerTarget>,
    /// The seeds are text and `--only-ascii` is off (Grimoire inserts dictionary tokens as
    /// they are): new entries are generalized and get Grimoire's mutations.
    pub grimoire: bool,
}

/// A standalone build with comparison logging that the tracing stage runs out of process, as
/// AFL++'s `-c` binary: its command line and the coverage map size it reported.
#[derive(Debug, Clone)]
pub struct TracerTarget {
    pub command: Vec<String>,
    pub map_size: usize,
}

/// One client, set up by the shared wiring (`client.rs`) and handed to its mode.
pub struct Client<'a> {
    pub fuzzer: &'a mut ClientFuzzer,
    pub state: &'a mut State,
    pub mgr: &'a mut Mgr,
    pub observers: Observers,
    pub calibration: Calibration,
    /// Present with [`FuzzConfig::grimoire`].
    pub generalization: Option<Generalization>,
    pub config: &'a FuzzConfig,
}

/// Adds tokens (a standalone target's autotokens) to the client's dictionary.
pub fn add_tokens(state: &mut State, tokens: &Tokens) {
    if !tokens.is_empty() {
        state
            .metadata_or_insert_with(Tokens::new)
            .add_tokens(tokens);
    }
}

/// Havoc and dictionary tokens, scheduled by power; `only_ascii`: see [`OnlyAscii`]; `text`:
/// see [`StackedMutations`].
fn havoc_stage<E>(
    only_ascii: bool,
    text: bool,
) -> impl Stage<E, Mgr, State, ClientFuzzer> + Restartable<State>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    PowerHavocStage::new(OnlyAscii::new(
        StackedMutations::new(havoc_mutations().merge(tokens_mutations()), text),
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

/// The stages of a target that cannot log comparisons: those of [`with_comparison_solving`]
/// without comparison solving.
pub fn without_comparison_solving<E>(
    calibration: Calibration,
    generalization: Option<Generalization>,
    only_ascii: bool,
) -> impl StagesTuple<E, Mgr, State, ClientFuzzer>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    let text = generalization.is_some();
    tuple_list!(
        OptionalStage::new(generalization.map(|g| tuple_list!(g))),
        calibration,
        havoc_stage(only_ascii, text),
        OptionalStage::new(text.then(|| tuple_list!(grimoire_stage())))
    )
}

/// How often an entry gets comparison solving: the first time it is fuzzed (as AFL++'s
/// CmpLog) and every this many times after, since random input-to-state replacement may need
/// several tries. Every time cost three quarters of libpng's executions. Text inputs (Grimoire
/// on) get it the first time only: on sqlite (SQL seeds), side by side 60 s, seeds 1-2 x 2 core
/// orders, edges 37868 -> 38880 (+2.7%, 3 of 4 pairs higher); the suite's bench had the default
/// build 0.6-3.6% behind the build without comparison logging there in three runs.
const COMPARISON_SOLVING_EVERY: usize = 4;

/// The stages of every mode that can log comparisons: generalization of a new entry (text
/// inputs only); calibration; comparison tracing with `tracer`, input-to-state replacement
/// and tokens learned from comparisons (see [`COMPARISON_SOLVING_EVERY`]); havoc; then
/// Grimoire (text inputs only).
pub fn with_comparison_solving<E, TE>(
    calibration: Calibration,
    generalization: Option<Generalization>,
    tracer: TE,
    only_ascii: bool,
) -> impl StagesTuple<E, Mgr, State, ClientFuzzer>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
    TE: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers,
    TE::Observers: ObserversTuple<BytesInput, State>,
{
    let text = generalization.is_some();
    let due = move |_: &mut ClientFuzzer, _: &mut E, state: &mut State, _: &mut Mgr| {
        let fuzzed = state.current_testcase()?.scheduled_count();
        Ok(if text {
            fuzzed == 0
        } else {
            fuzzed % COMPARISON_SOLVING_EVERY == 0
        })
    };
    let comparison_solving = tuple_list!(
        TracingStage::new(tracer),
        cmplog::i2s_stage(only_ascii),
        learned_tokens::LearnTokensStage
    );
    tuple_list!(
        OptionalStage::new(generalization.map(|g| tuple_list!(g))),
        calibration,
        IfStage::new(due, comparison_solving),
        havoc_stage(only_ascii, text),
        OptionalStage::new(text.then(|| tuple_list!(grimoire_stage())))
    )
}

/// As libFuzzer: when no seed made it into the corpus (every one crashed or hung, or they were
/// all empty), fuzzing starts from the empty input; when that too is a known crash or hang,
/// there is nothing to fuzz from.
fn start_from_the_empty_input_if_needed<E>(
    executor: &mut E,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    if state.corpus().count() > 0 {
        return Ok(());
    }
    if !solutions::is_known(state, b"") {
        fuzzer.add_input(state, executor, mgr, BytesInput::new(Vec::new()))?;
    }
    if state.corpus().count() == 0 {
        return Err(Error::illegal_state(
            "nothing to fuzz from: every seed, and the empty input, crashes or hangs (see \
             crashes/ and hangs/)",
        ));
    }
    Ok(())
}

/// Loads the seeds (once per campaign; a restarted client resumes from its saved state) and
/// fuzzes until `--runs` executions. With `restart_every`, the client process hands its state
/// to a fresh process after that many executions.
pub fn fuzz<E, ST>(
    executor: &mut E,
    stages: &mut ST,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    config: &FuzzConfig,
    restart_every: Option<u64>,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
    ST: StagesTuple<E, Mgr, State, ClientFuzzer>,
{
    if state.must_load_initial_inputs() {
        // The seeds, and what this client's queue already holds: a client started afresh
        // after it was killed keeps what it had found.
        let mut seeds = config.seeds.clone();
        collect_files(state.corpus().dir_path(), &mut seeds)?;
        seeds.sort();
        seeds.dedup();
        // Seeds already saved as crashes, hangs or out-of-memory inputs are not run again
        // (each seed is read for that only when there are such findings).
        if solutions::any_known(state) {
            seeds.retain(|seed| {
                std::fs::read(seed).map_or(true, |b| !solutions::is_known(state, &b))
            });
        }
        state.load_initial_inputs_by_filenames_forced(fuzzer, executor, mgr, &seeds)?;
        log::info!("loaded {} seeds", state.corpus().count());
    }
    start_from_the_empty_input_if_needed(executor, fuzzer, state, mgr)?;
    // What a resumed campaign learned before shows from the start.
    learned_tokens::report_learned_tokens(state, mgr)?;
    let started_at = *state.executions();
    let queue_dir = state.corpus().dir_path().clone();
    let mut last_save_check = None::<Instant>;
    loop {
        mgr.maybe_report_progress(state, REPORT_INTERVAL)?;
        fuzzer.fuzz_one(stages, executor, state, mgr)?;
        // By the file's age, not this process's: an in-process client that crashes often
        // lives less than the interval.
        if last_save_check.is_none_or(|t| t.elapsed() >= REPORT_INTERVAL) {
            last_save_check = Some(Instant::now());
            if saved_state::older_than(&queue_dir, SAVE_INTERVAL) {
                saved_state::save(state, &queue_dir)?;
            }
        }
        if config
            .opts
            .runs
            .is_some_and(|runs| *state.executions() >= runs)
        {
            mgr.report_progress(state)?;
            mgr.send_exiting()?;
            // Our messages live in shared memory that goes away with this process: wait until
            // the broker has mapped it, or a quick client's last words (its exit) are lost
            // and the broker waits for it forever.
            mgr.await_restart_safe();
            return Ok(());
        }
        if restart_every.is_some_and(|n| *state.executions() - started_at >= n) {
            // The restarting manager starts a fresh process with the state saved here.
            mgr.on_restart(state)?;
            std::process::exit(0);
        }
    }
}
