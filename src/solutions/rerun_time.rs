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
        if over && !self.warned {
            self.warned = true;
            log::warn!("{warning}");
        }
        over
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
/// to a second: within [`RERUN_BUDGET`]. Past it, an input that times out is dropped
/// unconfirmed, its coverage left unseen, so that a hang along it is confirmed once the budget
/// allows. Without it, Oniguruma's backtracking gave 24 new hangs in a minute at 20 ms, each
/// confirmed for a second, and half the executions of `-t 1000`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct HangConfirmations(pub(super) RerunTime);
libafl_bolts::impl_serdeany!(HangConfirmations);

/// Whether confirming hangs took more than its share of the client's running time.
pub(super) fn confirmations_over_budget<S: HasMetadata + HasStartTime>(state: &mut S) -> bool {
    let running = current_time().saturating_sub(*state.start_time());
    state
        .metadata_or_insert_with(HangConfirmations::default)
        .0
        .over_budget(
            running,
            "confirming hangs (each input past the timeout chosen from the seeds, run again \
             for up to a second) takes over a twentieth of the time: from now on, inputs past it \
             are confirmed only as that share allows",
        )
}

/// Describing crashes (or confirming hangs) may take this long, plus this share of the
/// client's running time.
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
}
