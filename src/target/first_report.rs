//! A run that ends at its first crash (the libFuzzer front end's, without `-ignore_crashes`)
//! reports only that crash: a client restarted after it could crash again before the campaign
//! is stopped, and ClusterFuzz reads every frame after the first report's first line (a
//! sanitizer's report, or ours from `stack.rs`) into one crash state. A flag in memory that
//! every process forked after `enable` shares says whether the report was printed; restarters
//! hold a new client back while it is set.

use std::{
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
    thread::sleep,
    time::{Duration, Instant},
};

/// The flag, in a shared mapping; null where every crash is reported.
static REPORTED: AtomicPtr<AtomicBool> = AtomicPtr::new(ptr::null_mut());

/// How long a restarter waits for the stop before it starts a client again (the crash was not
/// kept as a finding: a flaky one); the front end stops the campaign within 50 ms of it.
const HOLD: Duration = Duration::from_secs(2);

/// From now on, in this process and those it forks, only the first crash is reported.
pub fn enable() {
    if !REPORTED.load(Ordering::SeqCst).is_null() {
        return;
    }
    // SAFETY: a fresh anonymous mapping, shared with every process forked from now on; its
    // zeroed bytes are a valid `AtomicBool` (false), and it is never unmapped.
    let page = unsafe {
        libc::mmap(
            ptr::null_mut(),
            std::mem::size_of::<AtomicBool>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page != libc::MAP_FAILED {
        REPORTED.store(page.cast(), Ordering::SeqCst);
    }
}

fn flag() -> Option<&'static AtomicBool> {
    // SAFETY: null, or the shared mapping made in `enable`, never unmapped.
    unsafe { REPORTED.load(Ordering::SeqCst).as_ref() }
}

/// Called as a crash is reported: whether one was before (then this one is not printed).
pub fn taken_before() -> bool {
    flag().is_some_and(|reported| reported.swap(true, Ordering::SeqCst))
}

/// In a restarter, before it starts a client again: while the run's crash was reported, waits
/// for the stop (up to `HOLD`, then reports go on).
pub fn hold_client() {
    let Some(reported) = flag() else {
        return;
    };
    let until = Instant::now() + HOLD;
    while reported.load(Ordering::SeqCst) && Instant::now() < until {
        sleep(Duration::from_millis(10));
    }
    reported.store(false, Ordering::SeqCst);
}
