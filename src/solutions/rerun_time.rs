//! How long findings may take to run again alone (to be described, or with `-t auto` to
//! confirm a hang): a share of the client's running time, kept in the state.

use std::{collections::HashMap, time::Duration};

use libafl::{state::HasStartTime, HasMetadata};
use libafl_bolts::current_time;
use serde::{Deserialize, Serialize};

/// Time spent running findings again alone, kept within [`RERUN_BUDGET`] (a share of the
/// client's running time), and whether the user was told it ran over.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct RerunTime {
    spent: Duration,
    warned: bool,
}

impl RerunTime {
    /// Counts a rerun that took `took`.
    pub(super) fn record(&mut self, took: Duration) {
        self.spent += took;
    }

    /// Whether the reruns took more than their share of `running`; the first time, `warning`.
    fn over_budget(&mut self, running: Duration, warning: &str) -> bool {
        let over = self.spent > RERUN_BUDGET.0 + running.mul_f64(RERUN_BUDGET.1);
        self.warn_once(over, warning);
        over
    }

    /// Whether a rerun taking up to `next` keeps the reruns within [`RERUN_BUDGET`]'s share of
    /// `running` (without its fixed part).
    fn share_has_room(&self, next: Duration, running: Duration) -> bool {
        self.spent + next <= running.mul_f64(RERUN_BUDGET.1)
    }

    /// Prints `warning` the first time the reruns are `over` their share.
    fn warn_once(&mut self, over: bool, warning: &str) {
        if over && !self.warned {
            self.warned = true;
            log::warn!("{warning}");
        }
    }
}

/// The bucket of each crash path (the hash of its coverage map) described in this client,
/// and the time describing took. Every crash is described while that time stays within
/// [`RERUN_BUDGET`]: two bugs can share a path (a value, not a branch, decides which
/// fires). Past it, a crash along a known path is counted in that path's bucket unrun.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct CrashPaths {
    pub(super) buckets: HashMap<u64, String>,
    pub(super) described: RerunTime,
}
libafl_bolts::impl_serdeany!(CrashPaths);

impl CrashPaths {
    /// Whether a crash along a known path is counted without describing it.
    pub(super) fn over_budget(&mut self, running: Duration) -> bool {
        self.described.over_budget(
            running,
            "describing every crash takes over a twentieth of the time: from now on, a crash \
             along a path seen before is counted in that path's bucket without running it",
        )
    }
}

/// With `-t auto`, the time spent running timed-out inputs again under the hang timeout, each up
/// to a second: a confirmation starts only when, taking the whole hang timeout, it keeps the
/// confirmations within [`RERUN_BUDGET`]'s share of the client's running time (not its fixed
/// part: the first is confirmed after 20 s). Past it, an input that times out is dropped
/// unconfirmed, its coverage left unseen, so that a hang along it is confirmed once the share
/// allows. Without it, Oniguruma's backtracking gave 24 new hangs in a minute at 20 ms, each
/// confirmed for a second, and half the executions of `-t 1000`. With the fixed part, the hangs
/// of stb_image's first seconds stopped the search for 1.3 s each, when it finds most: its bug
/// STB-2 took 5.4 s (median of 6 trials), 0.6 s without.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct HangConfirmations(pub(super) RerunTime);
libafl_bolts::impl_serdeany!(HangConfirmations);

/// Whether confirming one more hang, taking up to `confirmation`, would take confirmations past
/// their share of the client's running time.
pub(super) fn confirmations_over_budget<S: HasMetadata + HasStartTime>(
    state: &mut S,
    confirmation: Duration,
) -> bool {
    let running = current_time().saturating_sub(*state.start_time());
    let time = &mut state.metadata_or_insert_with(HangConfirmations::default).0;
    let over = !time.share_has_room(confirmation, running);
    time.warn_once(
        over,
        "an input ran past the timeout chosen from the seeds; confirming a hang (running it \
         again for up to a second) takes at most a twentieth of the running time, so hangs are \
         confirmed from 20 s on, and only as that share allows",
    );
    over
}

/// Describing crashes may take this long, plus this share of the client's running time;
/// confirming hangs, the share alone (see [`HangConfirmations`]).
const RERUN_BUDGET: (Duration, f64) = (Duration::from_secs(2), 0.05);

/// Enough for the distinct crash paths of a long campaign; past it, each is described again.
pub(super) const MAX_CRASH_PATHS: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reruns_get_two_seconds_and_a_twentieth_of_the_running_time() {
        let mut time = RerunTime {
            spent: Duration::from_millis(2500),
            warned: false,
        };
        assert!(!time.over_budget(Duration::from_secs(10), "-"));
        assert!(time.over_budget(Duration::from_secs(9), "-"));
        time.spent = Duration::from_secs(2);
        assert!(!time.over_budget(Duration::ZERO, "-"));
    }

    #[test]
    fn a_hang_is_confirmed_only_when_the_share_pays_for_its_whole_timeout() {
        let second = Duration::from_secs(1);
        let mut time = RerunTime::default();
        assert!(!time.share_has_room(second, Duration::ZERO));
        assert!(!time.share_has_room(second, Duration::from_millis(19_900)));
        assert!(time.share_has_room(second, Duration::from_secs(20)));
        time.record(Duration::from_millis(1300));
        assert!(!time.share_has_room(second, Duration::from_secs(40)));
        assert!(time.share_has_room(second, Duration::from_secs(46)));
    }
}
