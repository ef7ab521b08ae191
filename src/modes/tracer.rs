//! Who traces comparisons for the comparison-solving stage, decided in one place
//! ([`Tracer::choose`]) for every mode: the `--cmplog` build when there is one (a fork server of
//! it, as AFL++'s `-c`), else the target itself as its mode runs it (in process, through fork
//! mode's template, or a fork server of a standalone build of ours), else nobody. Every tracer
//! logs into a [`ComparisonLog`], so the stage sees one executor type whichever it is.

use std::{mem::size_of, rc::Rc, sync::atomic::AtomicBool, time::Duration};

use libafl::{
    executors::{
        forkserver::ForkserverExecutor, Executor, ExitKind, HasObservers, InProcessExecutor,
    },
    inputs::BytesInput,
    Error,
};
use libafl_bolts::{
    shmem::{ShMem, ShMemProvider},
    tuples::{tuple_list, RefIndexable},
    StdTargetArgs,
};
use libafl_targets::{cmps::CmpLogMap, CmpLogObserver};

use super::{
    oom::OomAware,
    template::{FromTemplate, Template},
    watchdog::{HandlersReleased, HarnessFn},
};
// One file of the standalone mode's folder at a time: the folder's own module uses this one.
use super::standalone::fork_server::{fork_server, COVERAGE_SHM_ENV};
use super::standalone::high_fds;
use super::standalone::probe;
use crate::{
    cmplog::{self, comparison_log::ComparisonLog},
    config::{FuzzConfig, TracerTarget},
    platform::shmem::SelfCleaningShMemProvider,
    target::runtime_abi,
    types::{ClientFuzzer, Mgr, SharedMemory, State},
};

/// What every tracer observes: the comparison log.
pub type TracerObservers = (ComparisonLog, ());

type InProcessTracer = HandlersReleased<
    InProcessExecutor<Mgr, HarnessFn, BytesInput, TracerObservers, State, ClientFuzzer>,
>;
type ForkServerTracer = ForkserverExecutor<BytesInput, TracerObservers, State, SharedMemory>;

/// The executor of the comparison-tracing stage.
pub enum Tracer<'a> {
    /// The linked harness, in this process; it runs rarely and keeps LibAFL's exact timer.
    InProcess(InProcessTracer),
    /// Fork mode's children, logging into the shared segment kept beside it (see `fork.rs`).
    Template {
        executor: OomAware<'a, FromTemplate<TracerObservers>>,
        _log: SharedMemory,
    },
    /// A persistent fork server of a standalone build of ours, logging into the segment kept
    /// beside it.
    ForkServer {
        executor: OomAware<'a, ForkServerTracer>,
        _log: SharedMemory,
    },
}

/// The out-of-memory flag of a tracer whose children have no memory limit: never raised.
static NO_MEMORY_LIMIT: AtomicBool = AtomicBool::new(false);

impl<'a> Tracer<'a> {
    /// The one decision: the `--cmplog` build traces when there is one (`oom`: the flag its
    /// children raise over the memory limit, if they have one), else `own`, the target itself as
    /// the mode runs it (None: it cannot log comparisons, and nothing is traced).
    pub fn choose(
        config: &FuzzConfig,
        oom: Option<&'a AtomicBool>,
        own: impl FnOnce() -> Result<Option<Self>, Error>,
    ) -> Result<Option<Self>, Error> {
        match &config.cmplog_target {
            Some(build) => Self::fork_server(config, build, oom).map(Some),
            None => own(),
        }
    }

    /// Whether the target traces its own comparisons (no `--cmplog` build): what a mode that
    /// must prepare its own tracer early (fork mode's shared log) asks before [`choose`].
    ///
    /// [`choose`]: Self::choose
    pub fn target_traces_itself(config: &FuzzConfig) -> bool {
        config.cmplog_target.is_none()
    }

    /// The linked harness run in this process with comparison logging on.
    pub fn in_process(
        harness: HarnessFn,
        fuzzer: &mut ClientFuzzer,
        state: &mut State,
        mgr: &mut Mgr,
        timeout: Duration,
    ) -> Result<Self, Error> {
        let executor = InProcessExecutor::builder()
            .harness(harness)
            .observers(tuple_list!(cmplog::observer()))
            .timeout(timeout)
            .crashdump(false)
            .fuzzer(fuzzer)
            .state(state)
            .event_mgr(mgr)
            .build()?;
        Ok(Self::InProcess(HandlersReleased::new(executor)))
    }

    /// Fork mode's children traced through `template`, into `log` and the segment it reads
    /// (shared memory mapped before the template was forked, see `cmplog::shared_observer`).
    pub fn template(
        template: Rc<Template>,
        (log, segment): (ComparisonLog, SharedMemory),
        oom: &'a AtomicBool,
    ) -> Self {
        let executor = FromTemplate::new(template, tuple_list!(log));
        Self::Template {
            executor: OomAware::new(executor, oom),
            _log: segment,
        }
    }

    /// A persistent fork server of `build` (the target itself or the `--cmplog` build) that
    /// logs comparisons into a segment shared with it.
    pub fn fork_server(
        config: &FuzzConfig,
        build: &TracerTarget,
        oom: Option<&'a AtomicBool>,
    ) -> Result<Self, Error> {
        let (log, segment, id) = shared_log()?;
        if std::env::var_os(COVERAGE_SHM_ENV).is_none() {
            // LibAFL's fork server refuses to start without it in this process's environment;
            // the in-process modes have no coverage segment to give (the tracer gets "" anyway).
            // SAFETY: the client is single-threaded while it sets up its executors.
            unsafe { std::env::set_var(COVERAGE_SHM_ENV, "") };
        }
        let executor = high_fds::build_with_high_fds(|| {
            fork_server(&build.command, build.map_size, true, &config.opts)
                .env(runtime_abi::cmplog_shm_env(), id)
                // Not the fuzzing target's coverage map: the tracer's own counters do.
                .env(COVERAGE_SHM_ENV, "")
                .shmem_provider(&mut SelfCleaningShMemProvider::new()?)
                .build(tuple_list!(log))
        })?;
        let oom = oom.unwrap_or(&NO_MEMORY_LIMIT);
        Ok(Self::ForkServer {
            executor: OomAware::new(executor, oom),
            _log: segment,
        })
    }
}

impl Executor<Mgr, BytesInput, State, ClientFuzzer> for Tracer<'_> {
    fn run_target(
        &mut self,
        fuzzer: &mut ClientFuzzer,
        state: &mut State,
        mgr: &mut Mgr,
        input: &BytesInput,
    ) -> Result<ExitKind, Error> {
        match self {
            Self::InProcess(e) => e.run_target(fuzzer, state, mgr, input),
            Self::Template { executor: e, .. } => e.run_target(fuzzer, state, mgr, input),
            Self::ForkServer { executor: e, .. } => e.run_target(fuzzer, state, mgr, input),
        }
    }
}

impl HasObservers for Tracer<'_> {
    type Observers = TracerObservers;
    fn observers(&self) -> RefIndexable<&TracerObservers, TracerObservers> {
        match self {
            Self::InProcess(e) => e.observers(),
            Self::Template { executor: e, .. } => e.observers(),
            Self::ForkServer { executor: e, .. } => e.observers(),
        }
    }
    fn observers_mut(&mut self) -> RefIndexable<&mut TracerObservers, TracerObservers> {
        match self {
            Self::InProcess(e) => e.observers_mut(),
            Self::Template { executor: e, .. } => e.observers_mut(),
            Self::ForkServer { executor: e, .. } => e.observers_mut(),
        }
    }
}

/// Checks a `--cmplog` build (its command line): it reports its map size and logs comparisons.
pub fn check_tracer_target(command: Vec<String>) -> Result<TracerTarget, String> {
    let map_size = probe::map_size(&command).map_err(|e| format!("bad --cmplog: {e}"))?;
    if !probe::logs_comparisons(&command[0]) {
        return Err(format!(
            "bad --cmplog {}: not a build of ours with comparison logging \
             (build it with `libafl_cc --standalone`)",
            command[0]
        ));
    }
    Ok(TracerTarget { command, map_size })
}

/// The comparison log shared with a tracing fork server (in LibAFL's `CmpLogMap` layout,
/// which the standalone runtime writes when `__LAFUZZ_CMPLOG_SHM_ID` is set): the observer,
/// the segment (keep it as long as the observer), and its id for the tracer's environment.
fn shared_log() -> Result<(ComparisonLog, SharedMemory, String), Error> {
    let size = size_of::<CmpLogMap>();
    if runtime_abi::cmplog_map_size() != size {
        return Err(Error::illegal_state(
            "the standalone runtime's comparison log does not have LibAFL's layout",
        ));
    }
    let mut segment = SelfCleaningShMemProvider::new()?.new_shmem(size)?;
    let id = segment.id().to_string();
    // SAFETY: the segment is as large as the map and the caller keeps it as long as the
    // observer.
    let observer =
        unsafe { CmpLogObserver::with_map_ptr("cmplog", segment.as_mut_ptr().cast(), true) };
    Ok((ComparisonLog::new(observer), segment, id))
}
