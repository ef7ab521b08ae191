//! Leak detection, as libFuzzer's `-detect_leaks=1`, on by default when LeakSanitizer is linked
//! (alone or in ASan; `sanitizers.c` holds the C side). The sanitizer allocator's hooks count
//! each input's mallocs and frees; an input that allocated more than it freed runs once more
//! with LeakSanitizer ignoring what that run allocates (so one leak is reported once), and if it
//! again allocated more than it freed, LeakSanitizer looks for memory nothing points to. An
//! input that frees what it allocates costs no extra execution.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU32, Ordering},
        OnceLock,
    },
    time::{Duration, Instant},
};

use super::comparison_hooks;

unsafe extern "C" {
    fn lafuzz_leak_detection_available() -> libc::c_int;
    fn lafuzz_count_mallocs(on: libc::c_int);
    fn lafuzz_more_mallocs_than_frees() -> libc::c_int;
    fn lafuzz_lsan_track(on: libc::c_int);
    fn lafuzz_leak_check() -> libc::c_int;
}

/// The exit status of a child (`isolated.rs`, fork mode) whose input leaked.
pub const LEAK_EXIT: i32 = 110;

/// How many second runs may allocate more than they free without a leak being found before
/// the checks stop (libFuzzer's number): such a target keeps memory in globals, and every
/// input would pay for a second run and LeakSanitizer's scan.
const MAX_FRUITLESS_CHECKS: u32 = 1000;

static ON: AtomicBool = AtomicBool::new(false);
/// When this process reported a leak. LeakSanitizer reports unreachable memory at every check,
/// so that leak would come back with every later input: the process checks no more, and an
/// in-process client is replaced by a fresh one (see [`time_to_replace_process`]).
static SPENT: OnceLock<Instant> = OnceLock::new();
/// How long a client that found a leak fuzzes on without leak checks before it is replaced. At
/// once cost a restart per leaking input: on `harnesses/leak`, where many inputs leak, 12,000
/// executions per second; after a second, 1.6 million (2.2 million without leak detection).
const FUZZ_ON_AFTER_A_LEAK: Duration = Duration::from_secs(1);
static LAST_LEAKED: AtomicBool = AtomicBool::new(false);
/// LeakSanitizer is scanning this process's memory (see [`scan_underway`]).
static SCANNING: AtomicBool = AtomicBool::new(false);
static FRUITLESS: AtomicU32 = AtomicU32::new(0);

/// Turns leak detection on when `wanted` and LeakSanitizer is linked; whether it is on.
pub fn enable(wanted: bool) -> bool {
    // SAFETY: looks up weak symbols and installs the allocator hooks once.
    let on = wanted && unsafe { lafuzz_leak_detection_available() } != 0;
    ON.store(on, Ordering::Relaxed);
    on
}

/// Not in tracing runs: they repeat inputs that already ran, and what they find is not saved.
fn checking() -> bool {
    ON.load(Ordering::Relaxed) && SPENT.get().is_none() && !comparison_hooks::tracing()
}

/// Whether `run` allocates more than it frees.
fn allocates_more_than_it_frees(run: &mut impl FnMut()) -> bool {
    // SAFETY: the counters are atomics of sanitizers.c; counting only reads sizes.
    unsafe { lafuzz_count_mallocs(1) };
    run();
    // SAFETY: as above.
    unsafe {
        lafuzz_count_mallocs(0);
        lafuzz_more_mallocs_than_frees() != 0
    }
}

/// Runs one input through `run`; true when it leaked (LeakSanitizer printed its report).
pub fn run_checked(mut run: impl FnMut()) -> bool {
    LAST_LEAKED.store(false, Ordering::Relaxed);
    if !checking() {
        run();
        return false;
    }
    if !allocates_more_than_it_frees(&mut run) {
        return false;
    }
    // SAFETY: LeakSanitizer is linked (`enable`); disabling nests and is undone below.
    unsafe { lafuzz_lsan_track(0) };
    let again = allocates_more_than_it_frees(&mut run);
    // SAFETY: undoes the disable above.
    unsafe { lafuzz_lsan_track(1) };
    if !again {
        return false;
    }
    if FRUITLESS.load(Ordering::Relaxed) >= MAX_FRUITLESS_CHECKS {
        ON.store(false, Ordering::Relaxed);
        eprintln!(
            "INFO: lafuzz disabled leak detection after every mutation.\n      \
             Most likely the target function accumulates allocated\n      \
             memory in a global state w/o actually leaking it."
        );
        return false;
    }
    SCANNING.store(true, Ordering::Relaxed);
    // SAFETY: LeakSanitizer's own check; it stops the other threads while it scans.
    let leaked = unsafe { lafuzz_leak_check() } != 0;
    SCANNING.store(false, Ordering::Relaxed);
    if !leaked {
        FRUITLESS.fetch_add(1, Ordering::Relaxed);
        return false;
    }
    let _ = SPENT.set(Instant::now());
    LAST_LEAKED.store(true, Ordering::Relaxed);
    true
}

/// Whether LeakSanitizer is looking for leaks: the scan of a client's whole heap is the
/// fuzzer's time, not the input's, and is not timed as the input's run.
pub fn scan_underway() -> bool {
    SCANNING.load(Ordering::Relaxed)
}

/// Whether a child's wait status says its input leaked (it exits with [`LEAK_EXIT`]); what
/// [`last_run_leaked`] says from now on.
pub fn child_leaked(status: i32) -> bool {
    let leaked = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == LEAK_EXIT;
    LAST_LEAKED.store(leaked, Ordering::Relaxed);
    leaked
}

/// In a child: runs the input through `run` and, when it leaked, ends the child with
/// [`LEAK_EXIT`].
pub fn run_in_child(run: impl FnMut()) {
    if run_checked(run) {
        // SAFETY: leave at once, as a crash would; the report is printed.
        unsafe { libc::_exit(LEAK_EXIT) }
    }
}

/// Whether the input run last through [`run_checked`] leaked.
pub fn last_run_leaked() -> bool {
    LAST_LEAKED.load(Ordering::Relaxed)
}

/// This process found a leak a while ago and checks no more: a client should hand its state to
/// a fresh process.
pub fn time_to_replace_process() -> bool {
    SPENT
        .get()
        .is_some_and(|at| at.elapsed() >= FUZZ_ON_AFTER_A_LEAK)
}
