//! LibAFL's batch-mode timeout timer, paused while the client waits on an out-of-process
//! tracer (`--cmplog`). The batch timer stays armed between inputs; firing while LibAFL's fork
//! server executor waits in `pselect` would make that wait fail. The timer is a POSIX timer
//! LibAFL keeps to itself, so it is found by its kernel id (`/proc/self/timers`), which glibc
//! uses as the `timer_t` of a signal-notifying timer.

use std::time::{Duration, Instant};

use libafl::{
    executors::{hooks::timer::TimerStruct, Executor, ExitKind, HasObservers},
    Error,
};
use libafl_bolts::tuples::RefIndexable;

/// A kernel timer id, as `timer_gettime`/`timer_settime` take it.
#[derive(Debug, Clone, Copy)]
pub struct TimerId(libc::timer_t);

impl TimerId {
    /// What is left on the timer (zero: not armed).
    fn left(self) -> Duration {
        // SAFETY: timer_gettime on a live timer of this process (LibAFL never deletes its
        // timer), into a valid struct.
        unsafe {
            let mut left: libc::itimerspec = std::mem::zeroed();
            libc::timer_gettime(self.0, &mut left);
            Duration::new(left.it_value.tv_sec as u64, left.it_value.tv_nsec as u32)
        }
    }
}

/// The ids of this process's POSIX timers.
fn timer_ids() -> Vec<usize> {
    std::fs::read_to_string("/proc/self/timers")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.strip_prefix("ID:")?.trim().parse().ok())
        .collect()
}

/// A batch-mode timer (see `direct.rs`) and its id; no id when it cannot be told apart from
/// the process's other timers (the caller then keeps an exact timer).
pub fn batch_timer(timeout: Duration) -> (TimerStruct, Option<TimerId>) {
    let before = timer_ids();
    let timer = TimerStruct::batch_mode(timeout);
    let new: Vec<usize> = timer_ids()
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    let id = match new[..] {
        [id] => Some(TimerId(id as libc::timer_t)),
        _ => None,
    };
    (timer, id)
}

/// An executor (the tracer) during whose runs `timer` is paused: disarmed with what was left,
/// re-armed with that less the run's time after, or raised at once when that has passed (out
/// of an execution, LibAFL's handler then only starts a new batch).
pub struct TimerPaused<E> {
    inner: E,
    timer: Option<TimerId>,
}

impl<E> TimerPaused<E> {
    /// No timer: nothing to pause (the fuzzing executor's timer is exact).
    pub fn new(inner: E, timer: Option<TimerId>) -> Self {
        Self { inner, timer }
    }

    /// Disarms the timer; returns what was left on it (zero: it was not armed).
    fn pause(timer: TimerId) -> Duration {
        let left = timer.left();
        // SAFETY: timer_settime on a live timer of this process, from a valid struct.
        unsafe {
            let disarmed: libc::itimerspec = std::mem::zeroed();
            libc::timer_settime(timer.0, 0, &disarmed, std::ptr::null_mut());
        }
        left
    }

    fn resume(timer: TimerId, left: Duration, paused_for: Duration) {
        if left.is_zero() {
            return;
        }
        let Some(left) = left.checked_sub(paused_for).filter(|l| !l.is_zero()) else {
            // SAFETY: raise(3) of the signal the timer would have sent.
            unsafe { libc::raise(libc::SIGALRM) };
            return;
        };
        // SAFETY: timer_settime on a live timer of this process, from a valid struct.
        unsafe {
            let mut rearm: libc::itimerspec = std::mem::zeroed();
            rearm.it_value.tv_sec = left.as_secs() as libc::time_t;
            rearm.it_value.tv_nsec = left.subsec_nanos() as libc::c_long;
            libc::timer_settime(timer.0, 0, &rearm, std::ptr::null_mut());
        }
    }
}

impl<E, EM, I, S, Z> Executor<EM, I, S, Z> for TimerPaused<E>
where
    E: Executor<EM, I, S, Z>,
{
    fn run_target(
        &mut self,
        fuzzer: &mut Z,
        state: &mut S,
        mgr: &mut EM,
        input: &I,
    ) -> Result<ExitKind, Error> {
        let Some(timer) = self.timer else {
            return self.inner.run_target(fuzzer, state, mgr, input);
        };
        let left = Self::pause(timer);
        let start = Instant::now();
        let exit = self.inner.run_target(fuzzer, state, mgr, input);
        Self::resume(timer, left, start.elapsed());
        exit
    }
}

impl<E: HasObservers> HasObservers for TimerPaused<E> {
    type Observers = E::Observers;
    fn observers(&self) -> RefIndexable<&Self::Observers, Self::Observers> {
        self.inner.observers()
    }
    fn observers_mut(&mut self) -> RefIndexable<&mut Self::Observers, Self::Observers> {
        self.inner.observers_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batch_timer_is_found_paused_and_resumed_with_what_was_left() {
        let (mut batch, timer) = batch_timer(Duration::from_secs(10));
        let timer = timer.expect("the new timer is listed in /proc/self/timers");
        batch.set_timer();
        assert!(timer.left() > Duration::from_secs(9));
        let left = TimerPaused::<()>::pause(timer);
        assert!(left > Duration::from_secs(9), "{left:?}");
        assert_eq!(timer.left(), Duration::ZERO, "disarmed while paused");
        TimerPaused::<()>::resume(timer, left, Duration::from_secs(4));
        let now = timer.left();
        assert!(
            now > Duration::from_secs(5) && now <= Duration::from_secs(6),
            "{now:?}"
        );
        TimerPaused::<()>::pause(timer);
    }
}
