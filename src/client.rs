//! One fuzzing client: the campaign wiring shared by every mode (observers over the 8-bit
//! counters, feedbacks, objectives, scheduler, mutators, corpus on disk). A mode only decides
//! how an input is executed (see `modes/`).

use std::time::Duration;

use libafl::{
    corpus::{Corpus, InMemoryCorpus, InMemoryOnDiskCorpus},
    events::{
        ClientDescription, EventRestarter, LlmpRestartingEventManager, ProgressReporter,
        SendExiting,
    },
    executors::{Executor, HasObservers},
    feedbacks::{EagerOrFeedback, MaxMapFeedback, TimeFeedback},
    fuzzer::{Fuzzer, StdFuzzer},
    inputs::{BytesInput, BytesInputConverter},
    mutators::{havoc_mutations, tokens_mutations, HavocScheduledMutator, Tokens},
    observers::ObserversTuple,
    observers::{CanTrack, ExplicitTracking, HitcountsMapObserver, StdMapObserver, TimeObserver},
    schedulers::{
        powersched::PowerSchedule, IndexesLenTimeMinimizerScheduler, StdWeightedScheduler,
    },
    stages::{
        CalibrationStage, IfStage, Restartable, Stage, StagesTuple, StdPowerMutationalStage,
        TracingStage,
    },
    state::{HasCorpus, HasCurrentTestcase, HasExecutions, StdState},
    Error, HasMetadata,
};
use libafl_bolts::{
    current_nanos,
    rands::StdRand,
    shmem::ShMemProvider,
    tuples::{tuple_list, Merge},
};

use crate::{
    cmplog, harness,
    modes::{self, direct::HarnessFn},
    options::{Campaign, Mode},
    output,
    shmem::SelfCleaningShMemProvider,
    solutions::{SaveNewSolutions, SkipKnownSolutions, Triage},
};

/// How often a client sends its statistics to the broker.
const REPORT_INTERVAL: Duration = Duration::from_secs(1);

pub type EdgesMap = HitcountsMapObserver<StdMapObserver<'static, u8, false>>;
pub type EdgesObserver = ExplicitTracking<EdgesMap, true, false>;
pub type Observers = (EdgesObserver, (TimeObserver, ()));
pub type State =
    StdState<InMemoryOnDiskCorpus<BytesInput>, BytesInput, StdRand, InMemoryCorpus<BytesInput>>;
pub type Mgr = LlmpRestartingEventManager<
    (),
    BytesInput,
    State,
    <SelfCleaningShMemProvider as ShMemProvider>::ShMem,
    SelfCleaningShMemProvider,
>;
type CoverageFeedback = EagerOrFeedback<MaxMapFeedback<EdgesObserver, EdgesMap>, TimeFeedback>;
type Objective = SaveNewSolutions<EdgesObserver, EdgesMap>;
type Scheduler = IndexesLenTimeMinimizerScheduler<
    StdWeightedScheduler<EdgesObserver, EdgesMap>,
    BytesInput,
    EdgesObserver,
>;
pub type ClientFuzzer =
    StdFuzzer<Scheduler, CoverageFeedback, BytesInputConverter, SkipKnownSolutions, Objective>;

/// An observer over the target's inline 8-bit counters, bucketed into AFL hit counts.
fn edges_observer() -> Result<EdgesObserver, Error> {
    let counters = harness::coverage_counters()?;
    // SAFETY: the counters are static and live as long as the process.
    let map =
        unsafe { StdMapObserver::from_mut_ptr("edges", counters.as_mut_ptr(), counters.len()) };
    Ok(HitcountsMapObserver::new(map).track_indices())
}

/// Sets up and runs one client until `--runs` is reached (or forever).
pub fn run(
    state: Option<State>,
    mut mgr: Mgr,
    client: ClientDescription,
    c: &Campaign,
) -> Result<(), Error> {
    // Out of process, the map is shared memory handed to the target; keep it until the end.
    let (edges, _shared_map) = if c.opts.mode.runs_standalone_target() {
        modes::forkserver::sanitizers_report_as_crashes();
        let (edges, map) = modes::forkserver::coverage_map(c.map_size)?;
        (edges, Some(map))
    } else {
        (edges_observer()?, None)
    };
    let time = TimeObserver::new("time");

    let map_feedback = MaxMapFeedback::new(&edges);
    let calibration = CalibrationStage::new(&map_feedback);
    let mut feedback = EagerOrFeedback::new(map_feedback, TimeFeedback::new(&time));
    let triage = if c.opts.mode.shares_process_between_inputs() {
        Some(Triage::for_this_binary(c.opts.timeout_ms)?)
    } else {
        None
    };
    let mut objective = SaveNewSolutions::new(&edges, &c.output, triage);

    let mut state = match state {
        Some(state) => state,
        None => {
            let seed = c.opts.seed.unwrap_or_else(current_nanos);
            let mut state = StdState::new(
                StdRand::with_seed(seed),
                InMemoryOnDiskCorpus::no_meta(output::client_queue_dir(&c.output, client.id()))?,
                InMemoryCorpus::new(),
                &mut feedback,
                &mut objective,
            )?;
            let mut tokens = c.tokens.clone();
            if let Ok(auto) = libafl_targets::autotokens() {
                tokens.add_tokens(&auto);
            }
            if !tokens.is_empty() {
                state.add_metadata::<Tokens>(tokens);
            }
            state
        }
    };

    let scheduler = IndexesLenTimeMinimizerScheduler::new(
        &edges,
        StdWeightedScheduler::with_schedule(&mut state, &edges, Some(PowerSchedule::fast())),
    );
    let mut fuzzer = StdFuzzer::builder()
        .scheduler(scheduler)
        .feedback(feedback)
        .objective(objective)
        .input_filter(SkipKnownSolutions)
        .build();
    let observers = tuple_list!(edges, time);
    let timeout = Duration::from_millis(c.opts.timeout_ms);

    if !c.opts.mode.runs_standalone_target() {
        harness::initialize();
    }
    let (fuzzer, state, mgr) = (&mut fuzzer, &mut state, &mut mgr);
    match c.opts.mode {
        Mode::Direct | Mode::Reset => {
            let (harness, restart): (HarnessFn, _) = match c.opts.mode {
                Mode::Reset => (modes::reset::harness, Some(c.opts.restart_every)),
                _ => (modes::direct::harness, None),
            };
            let mut executor =
                modes::direct::executor(harness, observers, fuzzer, state, mgr, timeout)?;
            let tracer = modes::direct::executor(
                harness,
                tuple_list!(cmplog::observer()),
                fuzzer,
                state,
                mgr,
                timeout,
            )?;
            let mut stages = with_comparison_solving(calibration, tracer);
            fuzz(&mut executor, &mut stages, fuzzer, state, mgr, c, restart)
        }
        Mode::Fork => {
            modes::fork::share_counters_with_children()?;
            let mut executor = modes::fork::executor(observers, fuzzer, state, mgr, timeout)?;
            let (cmplog_observer, _cmplog_map) = cmplog::shared_observer()?;
            let tracer =
                modes::fork::executor(tuple_list!(cmplog_observer), fuzzer, state, mgr, timeout)?;
            let mut stages = with_comparison_solving(calibration, tracer);
            fuzz(&mut executor, &mut stages, fuzzer, state, mgr, c, None)
        }
        Mode::Forkserver | Mode::Persistent => {
            let mut autotokens = Tokens::new();
            let mut executor = modes::forkserver::executor(
                &c.opts.target,
                c.opts.mode == Mode::Persistent,
                c.map_size,
                observers,
                timeout,
                c.opts.show_output,
                &mut autotokens,
            )?;
            if !autotokens.is_empty() {
                let tokens = state.metadata_or_insert_with(Tokens::new);
                tokens.add_tokens(&autotokens);
            }
            if !modes::forkserver::logs_comparisons(&c.opts.target[0]) {
                let mut stages = tuple_list!(calibration, havoc_stage());
                return fuzz(&mut executor, &mut stages, fuzzer, state, mgr, c, None);
            }
            let (cmplog_observer, _cmplog_map, cmplog_id) = modes::forkserver::cmplog_map()?;
            let tracer = modes::forkserver::tracer(
                &c.opts.target,
                c.map_size,
                cmplog_observer,
                &cmplog_id,
                timeout,
            )?;
            let mut stages = with_comparison_solving(calibration, tracer);
            fuzz(&mut executor, &mut stages, fuzzer, state, mgr, c, None)
        }
    }
}

type Calibration = CalibrationStage<EdgesObserver, BytesInput, EdgesMap, Observers, State>;

/// Havoc and dictionary tokens, scheduled by power.
fn havoc_stage<E>() -> impl Stage<E, Mgr, State, ClientFuzzer> + Restartable<State>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    StdPowerMutationalStage::new(HavocScheduledMutator::new(
        havoc_mutations().merge(tokens_mutations()),
    ))
}

/// How often an entry gets comparison solving: the first time it is fuzzed (as AFL++'s
/// CmpLog) and every this many times after, since random input-to-state replacement may need
/// several tries. Every time cost three quarters of libpng's executions.
const COMPARISON_SOLVING_EVERY: usize = 4;

/// The stages of every mode: calibration; comparison tracing with `tracer`,
/// input-to-state replacement and tokens learned from comparisons (see
/// [`COMPARISON_SOLVING_EVERY`]); then havoc.
fn with_comparison_solving<E, TE>(
    calibration: Calibration,
    tracer: TE,
) -> impl StagesTuple<E, Mgr, State, ClientFuzzer>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
    TE: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers,
    TE::Observers: ObserversTuple<BytesInput, State>,
{
    let due = |_: &mut ClientFuzzer, _: &mut E, state: &mut State, _: &mut Mgr| {
        Ok(state.current_testcase()?.scheduled_count() % COMPARISON_SOLVING_EVERY == 0)
    };
    let comparison_solving = tuple_list!(
        TracingStage::new(tracer),
        cmplog::i2s_stage(),
        cmplog::LearnTokensStage
    );
    tuple_list!(
        calibration,
        IfStage::new(due, comparison_solving),
        havoc_stage()
    )
}

/// Loads the seeds (once per campaign; a restarted client resumes from its saved state) and
/// fuzzes until `--runs` executions. With `restart_every`, the client process hands its state
/// to a fresh process after that many executions.
fn fuzz<E, ST>(
    executor: &mut E,
    stages: &mut ST,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    c: &Campaign,
    restart_every: Option<u64>,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
    ST: StagesTuple<E, Mgr, State, ClientFuzzer>,
{
    if state.must_load_initial_inputs() {
        state.load_initial_inputs_by_filenames_forced(fuzzer, executor, mgr, &c.seeds)?;
        log::info!("loaded {} seeds", state.corpus().count());
    }
    let started_at = *state.executions();
    loop {
        mgr.maybe_report_progress(state, REPORT_INTERVAL)?;
        fuzzer.fuzz_one(stages, executor, state, mgr)?;
        if c.opts.runs.is_some_and(|runs| *state.executions() >= runs) {
            mgr.report_progress(state)?;
            mgr.send_exiting()?;
            return Ok(());
        }
        if restart_every.is_some_and(|n| *state.executions() - started_at >= n) {
            // The restarting manager starts a fresh process with the state saved here.
            mgr.on_restart(state)?;
            std::process::exit(0);
        }
    }
}
