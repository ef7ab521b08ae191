//! The per-input timeout with `-t auto`, chosen as AFL++ chooses it: from how long the
//! seeds took to run, five times their average (three or two times for slow targets) or the
//! slowest seed, whichever is longer, rounded up to 20 ms and at most 1000 ms. A fixed second
//! per input let a target whose mutated headers promise huge images spend most of its time on
//! them: on stb_image, 621 execs/s and one bug in 120 s, against 14,015 execs/s and three bugs
//! at 20 ms. An input past the short timeout is a hang only when it also runs past
//! [`HANG_TIMEOUT`] alone (see `solutions/feedback.rs`).

use std::time::{Duration, Instant};

use libafl::{
    executors::{Executor, ExitKind, HasObservers},
    inputs::BytesInput,
    Error, HasMetadata,
};
use libafl_bolts::tuples::RefIndexable;
use serde::{Deserialize, Serialize};

use crate::types::{ClientFuzzer, Mgr, State};

pub use crate::options::HANG_TIMEOUT;

/// The user statistic (and `fuzzer_stats` key, AFL++'s) of the timeout inputs run under, in
/// milliseconds.
pub const EXEC_TIMEOUT_STAT: &str = "exec_timeout";

/// AFL++'s rounding step (`EXEC_TM_ROUND`).
const ROUND: Duration = Duration::from_millis(20);

/// How long the seeds took: what the timeout is chosen from. Kept in the state, so a client
/// restarted halfway through the seeds (one crashed) counts the rest on top, and one restarted
/// later chooses the same timeout again.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct SeedRunTimes {
    total: Duration,
    runs: u32,
    slowest: Duration,
}
libafl_bolts::impl_serdeany!(SeedRunTimes);

impl SeedRunTimes {
    fn record(&mut self, took: Duration) {
        self.total += took;
        self.runs += 1;
        self.slowest = self.slowest.max(took);
    }

    /// AFL++'s timeout for these run times; [`HANG_TIMEOUT`] when nothing ran.
    pub fn timeout(&self) -> Duration {
        if self.runs == 0 {
            return HANG_TIMEOUT;
        }
        let average = self.total / self.runs;
        let factor = match average.as_micros() {
            0..=10_000 => 5,
            10_001..=50_000 => 3,
            _ => 2,
        };
        let longest = (average * factor).max(self.slowest);
        // As AFL++: whole milliseconds, then up to the next step (20 ms from 0 to 19).
        let millis = longest.as_millis() as u64;
        let step = ROUND.as_millis() as u64;
        Duration::from_millis((millis + step) / step * step).min(HANG_TIMEOUT)
    }
}

/// The timeout this client's inputs run under: `fixed` (see `FuzzOptions::fixed_timeout`), or
/// the one chosen from the seeds' run times (a restarted client, which runs no seeds, keeps
/// their times in its state, and so its choice).
pub fn choose(state: &State, fixed: Option<Duration>) -> Duration {
    fixed.unwrap_or_else(|| {
        state
            .metadata_map()
            .get::<SeedRunTimes>()
            .map_or(HANG_TIMEOUT, SeedRunTimes::timeout)
    })
}

/// The fuzzing executor while the seeds run: each run's time is added to the state's
/// [`SeedRunTimes`] (two clock reads per seed; the fuzzing runs pay nothing).
pub struct TimedSeedRuns<'a, E>(pub &'a mut E);

impl<E> Executor<Mgr, BytesInput, State, ClientFuzzer> for TimedSeedRuns<'_, E>
where
    E: Executor<Mgr, BytesInput, State, ClientFuzzer>,
{
    fn run_target(
        &mut self,
        fuzzer: &mut ClientFuzzer,
        state: &mut State,
        mgr: &mut Mgr,
        input: &BytesInput,
    ) -> Result<ExitKind, Error> {
        let started = Instant::now();
        let exit = self.0.run_target(fuzzer, state, mgr, input)?;
        let took = started.elapsed();
        state
            .metadata_or_insert_with(SeedRunTimes::default)
            .record(took);
        Ok(exit)
    }
}

impl<E: HasObservers> HasObservers for TimedSeedRuns<'_, E> {
    type Observers = E::Observers;
    fn observers(&self) -> RefIndexable<&Self::Observers, Self::Observers> {
        self.0.observers()
    }
    fn observers_mut(&mut self) -> RefIndexable<&mut Self::Observers, Self::Observers> {
        self.0.observers_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(runs_ms: &[u64]) -> SeedRunTimes {
        let mut times = SeedRunTimes::default();
        for &ms in runs_ms {
            times.record(Duration::from_micros(ms * 1000));
        }
        times
    }

    #[test]
    fn the_timeout_is_afl_plus_plus_s() {
        let ms = |t: &SeedRunTimes| t.timeout().as_millis();
        // Fast seeds: 5x a sub-millisecond average is 0, rounded up to 20 ms.
        assert_eq!(ms(&times(&[0, 0, 0])), 20);
        // 5x 3 ms = 15 -> 20; 5x 4 ms = 20 -> 40 (AFL++ rounds a whole step up).
        assert_eq!(ms(&times(&[3, 3])), 20);
        assert_eq!(ms(&times(&[4, 4])), 40);
        // The slowest seed when it is longer: 1 and 99 ms average 50 ms (3x: 150), slowest 99.
        assert_eq!(ms(&times(&[1, 99])), 160);
        assert_eq!(ms(&times(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 91])), 100);
        // Slow targets: 2x past 50 ms; never more than the hang timeout.
        assert_eq!(ms(&times(&[60])), 140);
        assert_eq!(ms(&times(&[900])), 1000);
        assert_eq!(SeedRunTimes::default().timeout(), HANG_TIMEOUT);
    }
}
