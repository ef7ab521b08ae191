//! A run that ends at its first crash (the libFuzzer front end's, without `-ignore_crashes`)
//! reports only that crash: a client restarted after it could crash again before the campaign
//! is stopped, and ClusterFuzz reads every frame after the first report's first line (a
//! sanitizer's report, or ours from `stack.rs`) into one crash state. A flag that every
//! process forked after `enable` shares (`platform/fork_shared.rs`) says whether the report
//! was printed; restarters hold a new client back while it is set.

use std::{
    sync::atomic::Ordering,
    thread::sleep,
    time::{Duration, Instant},
};

use crate::platform::fork_shared::ForkSharedFlag;

/// Shared once `enable`d; never, where every crash is reported.
static REPORTED: ForkSharedFlag = ForkSharedFlag::new();

/// How long a restarter waits for the stop before it starts a client again (the crash was not
/// kept as a finding: a flaky one); the front end stops the campaign within 50 ms of it.
const HOLD: Duration = Duration::from_secs(2);

/// From now on, in this process and those it forks, only the first crash is reported.
pub fn enable() {
    REPORTED.share();
}

/// Called as a crash is reported: whether one was before (then this one is not printed).
pub fn taken_before() -> bool {
    REPORTED
        .get()
        .is_some_and(|reported| reported.swap(true, Ordering::SeqCst))
}

/// In a restarter, before it starts a client again: while the run's crash was reported, waits
/// for the stop (up to `HOLD`, then reports go on).
pub fn hold_client() {
    let Some(reported) = REPORTED.get() else {
        return;
    };
    let until = Instant::now() + HOLD;
    while reported.load(Ordering::SeqCst) && Instant::now() < until {
        sleep(Duration::from_millis(10));
    }
    reported.store(false, Ordering::SeqCst);
}
