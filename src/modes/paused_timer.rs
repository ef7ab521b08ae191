//! LibAFL's batch-mode timeout timer, paused while the tracer runs. The batch timer stays
//! armed between inputs. Firing during an in-process tracer's run, it reached the tracer's
//! handler (an exact timer's), which took it for the traced input's timeout: the client saved
//! a false hang and restarted (sqlite from a grown corpus: a restart about every 3 s, each
//! reloading the state). Firing while LibAFL's fork server executor waits in `pselect`
//! (`--cmplog`) would make that wait fail. The timer is a POSIX timer LibAFL keeps to itself,
//! so it is found by its kernel id (`/proc/self/timers`), which glibc uses as the `timer_t`
//! of a signal-notifying timer.

use std::time::{Duration, Instant};

use libafl::{
    executors::{hooks::timer::TimerStruct, Executor, ExitKind, HasObservers},
    Error,
};
use libafl_bolts::tuples::RefIndexable;

/// A batch timer: its kernel id, as `timer_gettime`/`timer_settime` take it, and its timeout.
#[derive(Debug, Clone, Copy)]
pub struct TimerId {
    id: libc::timer_t,
    timeout: Duration,
}

impl TimerId {
    /// What is left on the timer (zero: not armed).
    fn left(self) -> Duration {
        // SAFETY: timer_gettime on a live timer of this process (LibAFL never deletes its
        // timer), into a valid struct.
        unsafe {
            let mut left: libc::itimerspec = std::mem::zeroed();
            libc::timer_gettime(self.id, &mut left);
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
        [id] => Some(TimerId {
            id: id as libc::timer_t,
            timeout,
        }),
        _ => None,
    };
    (timer, id)
}

/// An executor (the tracer) during whose runs `timer` is paused: disarmed with what was left,
/// re-armed with that less the run's time after. When that has passed, it is re-armed with a
/// whole timeout: the batch it ends is over by the clock, so the fuzzing executor's next run
/// starts a new one, and that run is covered meanwhile. (Raised at once instead, the signal
/// would reach whichever handler the last executor installed: after an in-process tracer,
/// the tracer's.)
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
            libc::timer_settime(timer.id, 0, &disarmed, std::ptr::null_mut());
        }
        left
    }

    fn resume(timer: TimerId, left: Duration, paused_for: Duration) {
        if left.is_zero() {
            return;
        }
        let left = left
            .checked_sub(paused_for)
            .filter(|l| !l.is_zero())
            .unwrap_or(timer.timeout);
        // SAFETY: timer_settime on a live timer of this process, from a valid struct.
        unsafe {
            let mut rearm: libc::itimerspec = std::mem::zeroed();
            rearm.it_value.tv_sec = left.as_secs() as libc::time_t;
            rearm.it_value.tv_nsec = left.subsec_nanos() as libc::c_long;
            libc::timer_settime(timer.id, 0, &rearm, std::ptr::null_mut());
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
        // Paused past its end: a whole timeout again, no signal to whatever handler is in place.
        let left = TimerPaused::<()>::pause(timer);
        TimerPaused::<()>::resume(timer, left, Duration::from_secs(7));
        let now = timer.left();
        assert!(
            now > Duration::from_secs(9) && now <= Duration::from_secs(10),
            "{now:?}"
        );
        TimerPaused::<()>::pause(timer);
    }
}
