//! The watchdog thread: it wakes every tenth of the timeout and signals the fuzzing thread
//! when the input it saw last time is still running past a limit. Two limits: the input's CPU
//! time (the timeout chosen from the seeds' run times: on a busy machine a descheduled input is
//! not stopped for time it did not run) and its wall time (`-t`, or the hang timeout).

use std::{
    ptr,
    sync::{
        atomic::{AtomicU64, Ordering::Relaxed},
        OnceLock,
    },
    thread,
    time::{Duration, Instant},
};

use libafl::Error;

use crate::target::{leaks, stack::sanitizer_report_underway};

/// The limits, in microseconds.
static CPU_LIMIT_US: AtomicU64 = AtomicU64::new(u64::MAX);
static WALL_LIMIT_US: AtomicU64 = AtomicU64::new(u64::MAX);
/// The number of the input in the harness; 0: none.
static RUNNING: AtomicU64 = AtomicU64::new(0);
/// The input the watchdog last signalled as timed out.
static TIMED_OUT: AtomicU64 = AtomicU64::new(0);

fn micros(limit: Duration) -> u64 {
    u64::try_from(limit.as_micros()).unwrap_or(u64::MAX).max(1)
}

/// Both limits.
pub fn set_limits(cpu: Duration, wall: Duration) {
    CPU_LIMIT_US.store(micros(cpu), Relaxed);
    WALL_LIMIT_US.store(micros(wall), Relaxed);
}

pub fn set_cpu_limit(cpu: Duration) {
    CPU_LIMIT_US.store(micros(cpu), Relaxed);
}

/// Input number `n` (never 0) starts.
pub fn input_started(n: u64) {
    RUNNING.store(n, Relaxed);
}

pub fn input_ended() {
    RUNNING.store(0, Relaxed);
}

pub fn input_running() -> bool {
    RUNNING.load(Relaxed) != 0
}

/// Whether the input running now is the one the watchdog timed out (a signal that crossed the
/// end of its input is not blamed on the next).
pub fn running_input_timed_out() -> bool {
    let running = RUNNING.load(Relaxed);
    running != 0 && running == TIMED_OUT.load(Relaxed)
}

/// Starts the watchdog of this process's fuzzing thread (the caller) once.
pub fn start() -> Result<(), Error> {
    static STARTED: OnceLock<Result<(), String>> = OnceLock::new();
    STARTED
        .get_or_init(|| {
            // SAFETY: plain libc calls on valid local sets and this thread; the watchdog
            // inherits the mask that blocks every signal (they are the fuzzing thread's to
            // handle), then this thread gets its own back.
            unsafe {
                let fuzzing_thread = libc::pthread_self();
                let mut cpu_clock: libc::clockid_t = 0;
                if libc::pthread_getcpuclockid(fuzzing_thread, &mut cpu_clock) != 0 {
                    return Err("cannot read the fuzzing thread's CPU clock".into());
                }
                let mut all: libc::sigset_t = std::mem::zeroed();
                let mut before: libc::sigset_t = std::mem::zeroed();
                libc::sigfillset(&mut all);
                libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut before);
                let spawned = thread::Builder::new()
                    .name("watchdog".into())
                    .spawn(move || watch(fuzzing_thread, cpu_clock));
                libc::pthread_sigmask(libc::SIG_SETMASK, &before, ptr::null_mut());
                spawned.map(|_| ()).map_err(|e| e.to_string())
            }
        })
        .clone()
        .map_err(|e| Error::unknown(format!("cannot start the timeout watchdog: {e}")))
}

/// The time `clock` (a thread's CPU clock) shows.
fn cpu_time(clock: libc::clockid_t) -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) into a live struct; a failure leaves it zero.
    unsafe { libc::clock_gettime(clock, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Signals `fuzzing_thread` whenever one input has run past a limit (at most a tenth more).
fn watch(fuzzing_thread: libc::pthread_t, cpu_clock: libc::clockid_t) {
    let mut seen = 0;
    let (mut since, mut since_cpu) = (Instant::now(), cpu_time(cpu_clock));
    loop {
        let cpu_limit = Duration::from_micros(CPU_LIMIT_US.load(Relaxed));
        let wall_limit = Duration::from_micros(WALL_LIMIT_US.load(Relaxed));
        let tick = cpu_limit.min(wall_limit) / 10;
        thread::sleep(tick.clamp(Duration::from_millis(1), Duration::from_millis(100)));
        let running = RUNNING.load(Relaxed);
        if running != seen || leaks::scan_underway() {
            // It started after the last look: timed from now, it is timed short, never long.
            // (LeakSanitizer's scan of the whole client is not the input's time.)
            seen = running;
            (since, since_cpu) = (Instant::now(), cpu_time(cpu_clock));
            continue;
        }
        let over = since.elapsed() >= wall_limit
            || cpu_time(cpu_clock).saturating_sub(since_cpu) >= cpu_limit;
        // While ASan writes its report the input is a crash on its way to abort, however long
        // symbolizing takes: it is not signalled as a hang.
        if running != 0 && over && !sanitizer_report_underway() {
            TIMED_OUT.store(running, Relaxed);
            // SAFETY: the fuzzing thread lives as long as the process.
            unsafe { libc::pthread_kill(fuzzing_thread, libc::SIGALRM) };
            (since, since_cpu) = (Instant::now(), cpu_time(cpu_clock));
        }
    }
}
