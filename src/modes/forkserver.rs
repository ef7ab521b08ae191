//! `forkserver` and `persistent`: fuzz a standalone executable out of process with LibAFL's
//! `ForkserverExecutor`, as AFL++ does. The target is built with `libafl_cc --standalone` (or
//! AFL++'s `afl-clang-fast`); its coverage map is shared memory created here, sized to what the
//! target reports, and testcases go through shared memory when the target offers it.

use std::{
    io::Read,
    mem::size_of,
    process::{Command, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

use libafl::{
    executors::{forkserver::ForkserverExecutor, StdChildArgs},
    inputs::BytesInput,
    mutators::Tokens,
    observers::{CanTrack, HitcountsMapObserver, StdMapObserver},
    Error,
};
use libafl_bolts::{
    shmem::{ShMem, ShMemProvider},
    tuples::tuple_list,
    StdTargetArgs,
};
use libafl_targets::{cmps::CmpLogMap, CmpLogObserver};
use nix::sys::signal::Signal;

use crate::{
    client::{EdgesObserver, Observers, State},
    shmem::SelfCleaningShMemProvider,
};

type SharedMap = <SelfCleaningShMemProvider as ShMemProvider>::ShMem;

pub type Forkserver = ForkserverExecutor<BytesInput, Observers, State, SharedMap>;

const PAGE: usize = 4096;

/// How long a target may take to report its map size.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Asks the target for its coverage map size (`AFL_DUMP_MAP_SIZE=1`, understood by our
/// standalone runtime and AFL++'s). A program that does not answer is not a fuzzing target:
/// better a clear error now than a fork server that never says hello.
pub fn probe_map_size(target: &[String]) -> Result<usize, String> {
    let Some(program) = target.first() else {
        return Err(
            "forkserver and persistent modes need a target: `-- ./target [args] [@@]`".into(),
        );
    };
    let not_target = |why: String| {
        format!(
            "{program} is not a fuzzing target ({why}): build it with `libafl_cc --standalone` \
             or afl-clang-fast"
        )
    };
    let mut child = Command::new(program)
        .args(&target[1..])
        .env("AFL_DUMP_MAP_SIZE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run target {program}: {e}"))?;
    let start = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if start.elapsed() > PROBE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(not_target(
                "it did not report its map size within 10 s".into(),
            ));
        }
        sleep(Duration::from_millis(10));
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    match out.trim().parse::<usize>() {
        Ok(size) if size > 0 => Ok(size),
        _ => Err(not_target(format!(
            "AFL_DUMP_MAP_SIZE=1 printed {:?}, not a map size",
            out.trim()
        ))),
    }
}

/// UBSan's options for targets that do not set their own (AFL++ builds; ours build the same
/// string in, see `__ubsan_default_options` in the standalone runtime):
/// its signal handlers would turn a SIGSEGV into a slow, symbolized report and `exit(1)`, which
/// the fork server sees as a clean exit or a hang, not a crash. `UBSAN_OPTIONS` given by the
/// user is kept.
const UBSAN_OPTIONS: &str = "halt_on_error=1:abort_on_error=1:symbolize=0:handle_segv=0:\
                             handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0";

/// Makes sanitizer findings in the target end in a crash signal.
pub fn sanitizers_report_as_crashes() {
    if std::env::var_os("UBSAN_OPTIONS").is_none() {
        // SAFETY: the client is single-threaded while it sets up its target's environment.
        unsafe { std::env::set_var("UBSAN_OPTIONS", UBSAN_OPTIONS) };
    }
}

/// The coverage map shared with the target: the observer, and the segment it lives in (keep
/// it as long as the executor).
pub fn coverage_map(map_size: usize) -> Result<(EdgesObserver, SharedMap), Error> {
    let mut provider = SelfCleaningShMemProvider::new()?;
    // Whole pages: our runtime maps the segment over the target's counters' pages.
    let mut shmem = provider.new_shmem(map_size.div_ceil(PAGE) * PAGE)?;
    // SAFETY: the client is single-threaded while it sets up its target's environment.
    unsafe {
        shmem.write_to_env("__AFL_SHM_ID")?;
        std::env::set_var("AFL_MAP_SIZE", shmem.len().to_string());
    }
    // SAFETY: the segment lives as long as the returned handle.
    let map = unsafe { StdMapObserver::from_mut_ptr("edges", shmem.as_mut_ptr(), map_size) };
    Ok((HitcountsMapObserver::new(map).track_indices(), shmem))
}

/// True when `program` was built by our `libafl_cc --standalone` (its runtime can log
/// comparisons); AFL++'s builds cannot, and get no tracing fork server.
pub fn logs_comparisons(program: &str) -> bool {
    std::fs::read(program).is_ok_and(|bytes| {
        let marker = b"__LAFUZZ_CMPLOG_SHM_ID";
        bytes.windows(marker.len()).any(|w| w == marker)
    })
}

/// The comparison log shared with the tracing fork server (in LibAFL's `CmpLogMap` layout,
/// which the standalone runtime writes when `__LAFUZZ_CMPLOG_SHM_ID` is set): the observer,
/// the segment (keep it), and its id for the tracer's environment.
pub fn cmplog_map() -> Result<(CmpLogObserver, SharedMap, String), Error> {
    let mut shmem = SelfCleaningShMemProvider::new()?.new_shmem(size_of::<CmpLogMap>())?;
    let id = shmem.id().to_string();
    // SAFETY: the segment is as large as the map and outlives the observer's use of it.
    let observer =
        unsafe { CmpLogObserver::with_map_ptr("cmplog", shmem.as_mut_ptr().cast(), true) };
    Ok((observer, shmem, id))
}

pub type Tracer = ForkserverExecutor<BytesInput, (CmpLogObserver, ()), State, SharedMap>;

/// A second fork server of the target, one fork per input, that logs comparisons: the
/// comparison-tracing stage runs inputs through it.
pub fn tracer(
    target: &[String],
    map_size: usize,
    cmplog: CmpLogObserver,
    cmplog_id: &str,
    timeout: Duration,
) -> Result<Tracer, Error> {
    let mut provider = SelfCleaningShMemProvider::new()?;
    ForkserverExecutor::builder()
        .program(target[0].clone())
        .parse_afl_cmdline(&target[1..])
        .env("__LAFUZZ_CMPLOG_SHM_ID", cmplog_id)
        // One fork per traced input, even when the fuzzing fork server is persistent.
        .env("__AFL_PERSISTENT", "0")
        .coverage_map_size(map_size.div_ceil(64) * 64)
        .timeout(timeout)
        .kill_signal(Signal::SIGKILL)
        .shmem_provider(&mut provider)
        .build(tuple_list!(cmplog))
}

/// Starts the target's fork server. `persistent`: the child runs many inputs.
pub fn executor(
    target: &[String],
    persistent: bool,
    map_size: usize,
    observers: Observers,
    timeout: Duration,
    show_output: bool,
    autotokens: &mut Tokens,
) -> Result<Forkserver, Error> {
    let mut provider = SelfCleaningShMemProvider::new()?;
    let (edges, others) = observers;
    ForkserverExecutor::builder()
        .program(target[0].clone())
        .parse_afl_cmdline(&target[1..])
        .is_persistent(persistent)
        // LibAFL checks the target's size rounded up to 64 entries against this.
        .coverage_map_size(map_size.div_ceil(64) * 64)
        .timeout(timeout)
        .kill_signal(Signal::SIGKILL)
        .debug_child(show_output)
        .autotokens(autotokens)
        .shmem_provider(&mut provider)
        .build_dynamic_map(edges, others)
}
