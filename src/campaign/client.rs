//! One fuzzing client: the campaign wiring shared by every mode (observers over the coverage
//! map, feedbacks, objectives, scheduler, corpus on disk, dictionary). Its mode decides how
//! inputs are executed (see `modes/`).

use libafl::{
    corpus::InMemoryOnDiskCorpus,
    events::ClientDescription,
    feedback_and_fast, feedback_or,
    feedbacks::{ConstFeedback, MaxMapFeedback},
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
    coverage::{
        closest_comparisons::RecordClosest, novelty::NewCoverageFeedback, path_frequencies,
        scheduler::CullOnChange,
    },
    engine::{saved_state, Client},
    modes::ExecutionMode,
    platform::output,
    solutions::{self, NewSolutions, SkipKnownSolutions, SolutionsOnDisk},
    target::{comparison_hooks, harness, stack},
    triage::Describer,
    types::{Calibration, CoverageFeedback, EdgesObserver, Mgr, State, ValueProfileMap},
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
    let client_id = client.id();
    set_up_process(config)?;
    // Out of process, the map is shared memory handed to the target; keep it until the end.
    let (edges, _shared_map) = mode.coverage(config)?;

    // No time observer: timing every execution cost two clock reads per input (a tenth of
    // the engine's time on a fast target). Calibration times each new entry for the power
    // schedule; the minimizer's length-times-time score sees no time on adding an entry and
    // favors the shortest input per edge (with the observer, sub-millisecond runs scored 0
    // in its whole milliseconds, so the first input to reach an edge stayed favored).
    let value_profile = comparison_hooks::value_profile_observer();
    let (calibration, mut feedback) = coverage_feedback(&edges, &value_profile, config);
    let generalization = config.grimoire.then(|| GeneralizationStage::new(&edges));
    let reproduce = mode.reproduce(&config.opts);
    let describer = Describer::new(reproduce.clone(), config.opts.hang_timeout());
    // With `-t auto` inputs time out sooner than the describer's timeout: a hang is confirmed there.
    let confirms_hangs = config.opts.fixed_timeout().is_none();
    let mut objective = NewSolutions::new(&edges, describer, confirms_hangs, &config.output);

    let mut state = match state {
        Some(mut state) => {
            path_frequencies::expand(&mut state);
            state
        }
        None => {
            let queue_dir = output::client_queue_dir(&config.output, client.id());
            let mut state = StdState::new(
                StdRand::with_seed(config.opts.seed.unwrap_or_else(current_nanos)),
                InMemoryOnDiskCorpus::no_meta(queue_dir.clone())?,
                SolutionsOnDisk::new(&config.output, mode.triages_crashes(), reproduce),
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
        runs: config
            .opts
            .runs
            .map(|runs| share_of_runs(runs, config.opts.clients(), client_id)),
    };
    mode.fuzz(client, tuple_list!(edges, value_profile))
}

/// Calibration (over the edges), and what makes an input interesting: new coverage, or with
/// value profile a comparison come closer than before (off, a constant skips the look).
fn coverage_feedback(
    edges: &EdgesObserver,
    value_profile: &ValueProfileMap,
    config: &FuzzConfig,
) -> (Calibration, CoverageFeedback) {
    let edges_feedback = NewCoverageFeedback::new(edges);
    let calibration = CalibrationStage::new(&edges_feedback);
    let value_profile_feedback = feedback_and_fast!(
        ConstFeedback::new(config.opts.value_profile),
        RecordClosest::new(MaxMapFeedback::new(value_profile))
    );
    (
        calibration,
        feedback_or!(edges_feedback, value_profile_feedback),
    )
}

/// What this client process sets up before it observes anything: the target's output silenced
/// (libFuzzer's `-close_fd_mask`) and value profile on, as asked.
fn set_up_process(config: &FuzzConfig) -> Result<(), Error> {
    // The client before it may have been killed while its report was being symbolized.
    stack::resync_sanitizer_symbolizer();
    let (stdout, stderr) = config.opts.silence;
    if stdout || stderr {
        harness::silence_output(stdout, stderr)
            .map_err(|e| Error::os_error(e, "cannot silence the target's output"))?;
    }
    if config.opts.value_profile {
        comparison_hooks::enable_value_profile();
    }
    Ok(())
}

/// Client `id`'s share of `runs` executions among `clients`: the whole campaign runs `runs`
/// (at least one each).
fn share_of_runs(runs: u64, clients: usize, id: usize) -> u64 {
    let clients = clients.max(1) as u64;
    let extra = u64::from((id as u64 % clients) < runs % clients);
    (runs / clients + extra).max(1)
}

#[cfg(test)]
mod tests {
    use super::share_of_runs;

    #[test]
    fn the_clients_shares_add_up_to_the_runs() {
        for (runs, clients) in [(10, 3), (1000, 8), (7, 1), (5, 5)] {
            let total: u64 = (0..clients)
                .map(|id| share_of_runs(runs, clients, id))
                .sum();
            assert_eq!(total, runs, "{runs} runs on {clients} clients");
        }
        assert_eq!(share_of_runs(2, 4, 3), 1, "every client runs at least once");
    }
}
