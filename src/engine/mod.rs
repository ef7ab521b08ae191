//! What every mode runs once it has its executors: the stages (`stages.rs`: calibration,
//! comparison solving, havoc) and the fuzzing loop ([`fuzz`]), and what a client saves of what
//! it learned (`saved_state.rs`). A mode builds its executors from a [`Client`] and calls
//! [`fuzz`] once.
//!
//! Uses what the loop is made of (`cmplog/`, `mutators/`, `solutions/`, `types.rs`,
//! `target/`, `config.rs`, `platform/`), never `modes/` or `campaign/` above it.

pub mod exec_timeout;
pub mod saved_state;
mod stages;

use std::time::{Duration, Instant};

use libafl::{
    corpus::Corpus,
    events::{AwaitRestartSafe, EventRestarter, ProgressReporter, SendExiting},
    executors::{Executor, HasObservers, SetTimeout},
    fuzzer::{Evaluator, Fuzzer},
    inputs::BytesInput,
    mutators::Tokens,
    observers::ObserversTuple,
    schedulers::powersched::SchedulerMetadata,
    stages::calibrate::UnstableEntriesMetadata,
    state::{HasCorpus, HasExecutions},
    Error, HasMetadata,
};

use self::exec_timeout::TimedSeedRuns;
use crate::{
    cmplog::learned_tokens,
    config::FuzzConfig,
    coverage::path_frequencies,
    platform::{output::collect_files, user_stats},
    solutions,
    target::leaks,
    types::{Calibration, ClientFuzzer, Generalization, Mgr, Observers, State},
};

/// How often a client sends its statistics to the broker.
const REPORT_INTERVAL: Duration = Duration::from_secs(1);
/// How often a client saves what it learned (see `saved_state.rs`).
const SAVE_INTERVAL: Duration = Duration::from_secs(5);

/// One client, set up by the shared wiring (`campaign/client.rs`) and handed to its mode, which
/// builds its executors from it (the fuzzing executor takes the observers, given beside) and
/// hands it to [`fuzz`].
pub struct Client<'a> {
    pub fuzzer: &'a mut ClientFuzzer,
    pub state: &'a mut State,
    pub mgr: &'a mut Mgr,
    pub calibration: Calibration,
    /// Present with [`FuzzConfig::grimoire`].
    pub generalization: Option<Generalization>,
    pub config: &'a FuzzConfig,
    /// This client's share of `--runs`: it stops after that many executions.
    pub runs: Option<u64>,
}

/// The user statistic (and `fuzzer_stats` key) counting the scheduler's passes over the queue,
/// AFL++'s queue cycles.
pub const CYCLES_DONE_STAT: &str = "cycles_done";

/// The user statistic counting the map entries calibration found unstable in this client
/// (their counts differed between runs of the same input): the monitor's stability is AFL++'s,
/// the share of the edges found that are stable.
pub const UNSTABLE_EDGES_STAT: &str = "unstable_edges";

/// Sends the monitor how many times the scheduler went through the whole queue, and how many
/// edges calibration found unstable (which, marked in the coverage history, no longer make an
/// input interesting).
fn report_cycles_and_unstable_edges(state: &mut State, mgr: &mut Mgr) -> Result<(), Error> {
    let unstable = state
        .metadata_map()
        .get::<UnstableEntriesMetadata>()
        .map_or(0, |m| m.unstable_entries().len() as u64);
    user_stats::report_number(state, mgr, UNSTABLE_EDGES_STAT, unstable)?;
    let Some(cycles) = state
        .metadata_map()
        .get::<SchedulerMetadata>()
        .map(SchedulerMetadata::queue_cycles)
    else {
        return Ok(());
    };
    user_stats::report_number(state, mgr, CYCLES_DONE_STAT, cycles)
}

/// Adds tokens (a standalone target's autotokens) to the client's dictionary.
pub fn add_tokens(state: &mut State, tokens: &Tokens) {
    if !tokens.is_empty() {
        state
            .metadata_or_insert_with(Tokens::new)
            .add_tokens(tokens);
    }
}

/// Runs the seeds, and what this client's queue already holds: a client started afresh after it
/// was killed keeps what it had found.
fn load_seeds<E>(
    config: &FuzzConfig,
    executor: &mut E,
    fuzzer: &mut ClientFuzzer,
    state: &mut State,
    mgr: &mut Mgr,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers<Observers = Observers>,
{
    let mut seeds = config.seeds.clone();
    collect_files(state.corpus().dir_path(), &mut seeds)?;
    seeds.sort();
    seeds.dedup();
    // Seeds already saved as crashes, hangs or out-of-memory inputs are not run again (each
    // seed is read for that only when there are such findings).
    if solutions::any_known(state) {
        seeds.retain(|seed| std::fs::read(seed).map_or(true, |b| !solutions::is_known(state, &b)));
    }
    state.load_initial_inputs_by_filenames_forced(fuzzer, executor, mgr, &seeds)?;
    log::info!("loaded {} seeds", state.corpus().count());
    Ok(())
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

/// Runs `client` with `executor` until `--runs` executions (or forever): its stages around
/// `executor` and, where something traces comparisons, `tracer` (see `modes/tracer.rs`). Loads
/// the seeds first (once per campaign; a restarted client resumes from its saved state). With
/// `restart_every`, the client process hands its state to a fresh process after that many
/// executions.
pub fn fuzz<E, TE>(
    client: Client<'_>,
    executor: &mut E,
    tracer: Option<TE>,
    restart_every: Option<u64>,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer>
        + HasObservers<Observers = Observers>
        + SetTimeout,
    TE: Executor<Mgr, BytesInput, State, ClientFuzzer> + HasObservers,
    TE::Observers: ObserversTuple<BytesInput, State>,
{
    let Client {
        fuzzer,
        state,
        mgr,
        calibration,
        generalization,
        config,
        runs,
    } = client;
    let mut stages = stages::stages(calibration, generalization, tracer, config.opts.only_ascii);
    let stages = &mut stages;
    {
        // The seeds run under the hang timeout, timed for the fuzzing runs' (`-t auto`).
        let mut timed = TimedSeedRuns(&mut *executor);
        if state.must_load_initial_inputs() {
            load_seeds(config, &mut timed, fuzzer, state, mgr)?;
        }
        start_from_the_empty_input_if_needed(&mut timed, fuzzer, state, mgr)?;
    }
    let timeout = exec_timeout::choose(state, config.opts.fixed_timeout());
    executor.set_timeout(timeout);
    user_stats::report_number(
        state,
        mgr,
        exec_timeout::EXEC_TIMEOUT_STAT,
        timeout.as_millis() as u64,
    )?;
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
            report_cycles_and_unstable_edges(state, mgr)?;
            if saved_state::older_than(&queue_dir, SAVE_INTERVAL) {
                saved_state::save(state, &queue_dir)?;
            }
        }
        if runs.is_some_and(|runs| *state.executions() >= runs) {
            mgr.report_progress(state)?;
            mgr.send_exiting()?;
            // Our messages live in shared memory that goes away with this process: wait until
            // the broker has mapped it, or a quick client's last words (its exit) are lost
            // and the broker waits for it forever.
            mgr.await_restart_safe();
            return Ok(());
        }
        // A process that found a leak looks for no more (see `target/leaks.rs`).
        if restart_every.is_some_and(|n| *state.executions() - started_at >= n)
            || leaks::time_to_replace_process()
        {
            // The restarting manager starts a fresh process with the state saved here.
            path_frequencies::compact(state);
            mgr.on_restart(state)?;
            std::process::exit(0);
        }
    }
}
