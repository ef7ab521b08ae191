//! One fuzzing client: the campaign wiring shared by every mode (observers over the coverage
//! map, feedbacks, objectives, scheduler, corpus on disk, dictionary). Its mode decides how
//! inputs are executed (see `modes/`).

use libafl::{
    corpus::InMemoryOnDiskCorpus,
    events::ClientDescription,
    fuzzer::StdFuzzer,
    mutators::Tokens,
    schedulers::{powersched::PowerSchedule, IndexesLenTimeMinimizerScheduler, WeightedScheduler},
    stages::{CalibrationStage, GeneralizationStage},
    state::{HasMaxSize, StdState},
    Error, HasMetadata,
};
use libafl_bolts::{current_nanos, rands::StdRand, tuples::tuple_list};

use crate::{
    config::FuzzConfig,
    coverage::{novelty::NewCoverageFeedback, scheduler::CullOnChange},
    engine::{saved_state, Client},
    modes::ExecutionMode,
    platform::output,
    solutions::{self, NewSolutions, SkipKnownSolutions, SolutionsOnDisk, Triage},
    types::{Mgr, State},
};

/// Sets up one client and runs it in `mode` until `--runs` is reached (or forever). `state`
/// is what a restarted client saved before it restarted.
pub fn run(
    mode: &dyn ExecutionMode,
    state: Option<State>,
    mut mgr: Mgr,
    client: ClientDescription,
    config: &FuzzConfig,
) -> Result<(), Error> {
    // Out of process, the map is shared memory handed to the target; keep it until the end.
    let (edges, _shared_map) = mode.coverage(config)?;

    // No time observer: timing every execution cost two clock reads per input (a tenth of
    // the engine's time on a fast target). Calibration times each new entry for the power
    // schedule; the minimizer's length-times-time score sees no time on adding an entry and
    // favors the shortest input per edge (with the observer, sub-millisecond runs scored 0
    // in its whole milliseconds, so the first input to reach an edge stayed favored).
    let mut feedback = NewCoverageFeedback::new(&edges);
    let calibration = CalibrationStage::new(&feedback);
    let generalization = config.grimoire.then(|| GeneralizationStage::new(&edges));
    let mut objective = NewSolutions::new(&edges);

    let mut state = match state {
        Some(state) => state,
        None => {
            let triage = if mode.triages_crashes() {
                Some(Triage::for_this_binary(config.opts.timeout)?)
            } else {
                None
            };
            let queue_dir = output::client_queue_dir(&config.output, client.id());
            let mut state = StdState::new(
                StdRand::with_seed(config.opts.seed.unwrap_or_else(current_nanos)),
                InMemoryOnDiskCorpus::no_meta(queue_dir.clone())?,
                SolutionsOnDisk::new(&config.output, triage),
                &mut feedback,
                &mut objective,
            )?;
            state.set_max_size(config.opts.max_len);
            let mut tokens = config.tokens.clone();
            if let Ok(auto) = libafl_targets::autotokens() {
                tokens.add_tokens(&auto);
            }
            if !tokens.is_empty() {
                state.add_metadata::<Tokens>(tokens);
            }
            solutions::remember_saved(&mut state, &config.output);
            saved_state::load(&mut state, &queue_dir);
            state
        }
    };

    let scheduler = CullOnChange::new(IndexesLenTimeMinimizerScheduler::new(
        &edges,
        WeightedScheduler::with_schedule(&mut state, &edges, Some(PowerSchedule::fast())),
    ));
    let mut fuzzer = StdFuzzer::builder()
        .scheduler(scheduler)
        .feedback(feedback)
        .objective(objective)
        .input_filter(SkipKnownSolutions)
        .build();
    let client = Client {
        fuzzer: &mut fuzzer,
        state: &mut state,
        mgr: &mut mgr,
        calibration,
        generalization,
        config,
    };
    mode.fuzz(client, tuple_list!(edges))
}
