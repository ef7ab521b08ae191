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
    fuzzer::{Fuzzer, NopInputFilter, StdFuzzer},
    inputs::{BytesInput, BytesInputConverter},
    mutators::{havoc_mutations, tokens_mutations, HavocScheduledMutator, Tokens},
    observers::{CanTrack, ExplicitTracking, HitcountsMapObserver, StdMapObserver, TimeObserver},
    schedulers::{
        powersched::PowerSchedule, IndexesLenTimeMinimizerScheduler, StdWeightedScheduler,
    },
    stages::{CalibrationStage, StdPowerMutationalStage},
    state::{HasCorpus, HasExecutions, StdState},
    Error, HasMetadata,
};
use libafl_bolts::{
    current_nanos,
    rands::StdRand,
    shmem::ShMemProvider,
    tuples::{tuple_list, Merge},
};

use crate::{
    harness, modes,
    options::{Campaign, Mode},
    output,
    shmem::SelfCleaningShMemProvider,
    solutions::{SaveNewSolutions, Triage},
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
    StdFuzzer<Scheduler, CoverageFeedback, BytesInputConverter, NopInputFilter, Objective>;

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
    let mut fuzzer = StdFuzzer::new(scheduler, feedback, objective);
    let observers = tuple_list!(edges, time);
    let timeout = Duration::from_millis(c.opts.timeout_ms);

    if !c.opts.mode.runs_standalone_target() {
        harness::initialize();
    }
    let (fuzzer, state, mgr) = (&mut fuzzer, &mut state, &mut mgr);
    match c.opts.mode {
        Mode::Direct => {
            let harness = modes::direct::harness;
            let mut executor =
                modes::direct::executor(harness, observers, fuzzer, state, mgr, timeout)?;
            fuzz(&mut executor, fuzzer, state, mgr, calibration, c, None)
        }
        Mode::Reset => {
            let harness = modes::reset::harness;
            let mut executor =
                modes::direct::executor(harness, observers, fuzzer, state, mgr, timeout)?;
            let restart = Some(c.opts.restart_every);
            fuzz(&mut executor, fuzzer, state, mgr, calibration, c, restart)
        }
        Mode::Fork => {
            let mut executor = modes::fork::executor(observers, fuzzer, state, mgr, timeout)?;
            fuzz(&mut executor, fuzzer, state, mgr, calibration, c, None)
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
            fuzz(&mut executor, fuzzer, state, mgr, calibration, c, None)
        }
    }
}

/// Loads the seeds (once per campaign; a restarted client resumes from its saved state) and
/// fuzzes until `--runs` executions. With `restart_every`, the client process hands its state
/// to a fresh process after that many executions.
fn fuzz<E>(
    executor: &mut E,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
    calibration: CalibrationStage<EdgesObserver, BytesInput, EdgesMap, Observers, State>,
    c: &Campaign,
    restart_every: Option<u64>,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    if state.must_load_initial_inputs() {
        state.load_initial_inputs_by_filenames_forced(fuzzer, executor, mgr, &c.seeds)?;
        log::info!("loaded {} seeds", state.corpus().count());
    }
    let mutator = HavocScheduledMutator::new(havoc_mutations().merge(tokens_mutations()));
    let mut stages = tuple_list!(calibration, StdPowerMutationalStage::new(mutator));
    let started_at = *state.executions();
    loop {
        mgr.maybe_report_progress(state, REPORT_INTERVAL)?;
        fuzzer.fuzz_one(&mut stages, executor, state, mgr)?;
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
