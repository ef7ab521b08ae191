//! How likely the weighted queue is to pick each corpus entry, and how many havoc executions it
//! gets: LibAFL's corpus weight and power score with AFL++'s bounded speed factor.
//!
//! LibAFL's `CorpusWeightTestcaseScore` multiplies an entry's weight by the average execution
//! time over the entry's own, without bound: an entry ten times faster than the average is
//! picked ten times as often, and the power schedule then gives it more executions again. On
//! an SQL engine the cheap queries (function calls) took over the corpus and the slower schema
//! statements were starved: after 60 s, 7% of our entries had a `CREATE INDEX` and 58% a
//! `printf(`. AFL++ bounds the speed factor to 0.1..3 (`calculate_score`): 34% and 15% of its
//! entries, and it covered the index, update and pager code we missed.
//!
//! AFL++'s factor still gives an entry ten times slower than the average a tenth of the picks and
//! of the havoc executions, even when it is the entry kept for an edge that no faster entry
//! reaches. Both factors here count such an entry, a favoured one, as at most
//! [`SLOWEST_FAVORED`] times slower than the average; other slow entries keep AFL's factor.

use std::time::Duration;

use libafl::{
    corpus::{SchedulerTestcaseMetadata, Testcase},
    feedbacks::MapIndexesMetadata,
    schedulers::{
        minimizer::{IsFavoredMetadata, TopRatedsMetadata},
        powersched::{BaseSchedule, SchedulerMetadata},
        testcase_score::{CorpusPowerTestcaseScore, TestcaseScore},
    },
    state::HasCorpus,
    Error, HasMetadata,
};
use libafl_bolts::HasRefCnt;

/// How many times slower than the average a favoured entry is counted at most, in its weight and
/// its power score: its speed factor's floor is then 0.5. Side by side with AFL's factor alone,
/// 60 s, medians of 6, 2026-12-07: seven of the suite's eight libraries gained 0.1%-2.3% (zstd
/// is bimodal; see README, Which entry is fuzzed next).
const SLOWEST_FAVORED: f64 = 4.0;

/// The execution time the factors count for `entry`: a favoured entry's (the fastest and smallest
/// kept for some edge) at most [`SLOWEST_FAVORED`] times the average.
fn counted_exec_ns<I>(entry: &Testcase<I>, exec_ns: f64, average_ns: f64) -> f64 {
    if entry.has_metadata::<IsFavoredMetadata>() {
        exec_ns.min(SLOWEST_FAVORED * average_ns)
    } else {
        exec_ns
    }
}

/// The average execution time over the calibrated entries; none before the first calibration.
#[expect(clippy::cast_precision_loss)]
fn average_exec_ns(schedule: &SchedulerMetadata) -> Option<f64> {
    (schedule.cycles() > 0)
        .then(|| schedule.exec_time().as_nanos() as f64 / schedule.cycles() as f64)
}

/// LibAFL's power score (how many havoc executions an entry gets), counting its execution time
/// as [`counted_exec_ns`] does.
#[derive(Debug, Clone, Copy)]
pub struct BoundedSpeedPower;

impl<I, S: HasCorpus<I> + HasMetadata> TestcaseScore<I, S> for BoundedSpeedPower {
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn compute(state: &S, entry: &mut Testcase<I>) -> Result<f64, Error> {
        let average_ns = average_exec_ns(state.metadata::<SchedulerMetadata>()?);
        let measured = *entry.exec_time();
        // LibAFL's score reads the time from the entry: lend it the counted time, then restore.
        if let (Some(average_ns), Some(exec)) = (average_ns, measured) {
            let counted = counted_exec_ns(entry, exec.as_nanos() as f64, average_ns);
            entry.set_exec_time(Duration::from_nanos(counted as u64).min(exec));
        }
        let score = CorpusPowerTestcaseScore::compute(state, entry);
        if let Some(exec) = measured {
            entry.set_exec_time(exec);
        }
        score
    }
}

/// LibAFL's corpus weight (the `fast` schedule's path-frequency factor, the coverage size
/// factor, the top-rated share, favoured entries five times), with [`speed_factor`] for the
/// execution time.
#[derive(Debug, Clone, Copy)]
pub struct BoundedSpeedWeight;

/// AFL++'s speed factor: from 0.1 (ten times slower than the average) to 3 (four times faster).
fn speed_factor(exec_ns: f64, average_ns: f64) -> f64 {
    const SLOWER: [f64; 4] = [0.1, 0.25, 0.5, 0.75];
    const FASTER: [(f64, f64); 3] = [(4.0, 3.0), (3.0, 2.0), (2.0, 1.5)];
    if let Some(&factor) = SLOWER.iter().find(|&&k| exec_ns * k > average_ns) {
        return factor;
    }
    FASTER
        .iter()
        .find(|(k, _)| exec_ns * k < average_ns)
        .map_or(1.0, |&(_, factor)| factor)
}

impl<I, S: HasMetadata> TestcaseScore<I, S> for BoundedSpeedWeight {
    #[expect(clippy::cast_precision_loss)]
    fn compute(state: &S, entry: &mut Testcase<I>) -> Result<f64, Error> {
        let schedule = state.metadata::<SchedulerMetadata>()?;
        // Not calibrated yet: all alike.
        let Some(average_ns) = average_exec_ns(schedule) else {
            return Ok(1.0);
        };
        if entry.scheduled_count() == 0 {
            return Ok(1.0);
        }
        let meta = entry.metadata::<SchedulerTestcaseMetadata>()?;
        let mut weight = 1.0;
        if schedule
            .strat()
            .is_some_and(|s| matches!(s.base(), BaseSchedule::FAST))
        {
            let hits = schedule.n_fuzz()[meta.n_fuzz_entry()];
            if hits > 0 {
                weight /= f64::from(hits).log10() + 1.0;
            }
        }
        let exec_ns = entry
            .exec_time()
            .ok_or_else(|| Error::key_not_found("a scheduled entry without calibration time"))?
            .as_nanos() as f64;
        weight *= speed_factor(counted_exec_ns(entry, exec_ns, average_ns), average_ns);
        let average_coverage = schedule.bitmap_size_log() / schedule.bitmap_entries() as f64;
        if average_coverage > 0.0 {
            weight *= (meta.bitmap_size() as f64).log2().max(1.0) / average_coverage;
        }
        let top_rated = entry
            .metadata_map()
            .get::<MapIndexesMetadata>()
            .map_or(0.0, |m| m.refcnt() as f64);
        let edges_rated = state.metadata::<TopRatedsMetadata>()?.map().len() as f64;
        // A target without coverage has no rated edge (LibAFL's weight divided by zero there).
        if edges_rated > 0.0 {
            weight *= 1.0 + top_rated / edges_rated;
        }
        if entry.has_metadata::<IsFavoredMetadata>() {
            weight *= 5.0;
        }
        Ok(weight)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use libafl::{
        corpus::{SchedulerTestcaseMetadata, Testcase},
        inputs::BytesInput,
        schedulers::{
            minimizer::{IsFavoredMetadata, TopRatedsMetadata},
            powersched::{PowerSchedule, SchedulerMetadata},
            testcase_score::TestcaseScore,
        },
        HasMetadata,
    };

    use super::{speed_factor, BoundedSpeedPower, BoundedSpeedWeight};
    use crate::coverage::test_state;

    #[test]
    fn afl_speed_factor_spans_thirtyfold() {
        let average = 100.0;
        assert_eq!(speed_factor(1.0, average), 3.0);
        assert_eq!(speed_factor(30.0, average), 2.0);
        assert_eq!(speed_factor(45.0, average), 1.5);
        assert_eq!(speed_factor(100.0, average), 1.0);
        assert_eq!(speed_factor(150.0, average), 0.75);
        assert_eq!(speed_factor(300.0, average), 0.5);
        assert_eq!(speed_factor(500.0, average), 0.25);
        assert_eq!(speed_factor(10_000.0, average), 0.1);
    }

    /// Weight and power of an entry taking `exec_us`, once the average is 100 µs.
    fn weight_and_power(exec_us: u64, favored: bool) -> (f64, f64) {
        let mut state = test_state::empty();
        let mut schedule = SchedulerMetadata::new(Some(PowerSchedule::fast()));
        schedule.set_exec_time(Duration::from_millis(100));
        schedule.set_cycles(1000);
        schedule.set_bitmap_size(10);
        schedule.set_bitmap_entries(1);
        state.add_metadata(schedule);
        state.add_metadata(TopRatedsMetadata::new());
        let mut entry = Testcase::new(BytesInput::new(vec![0; 4]));
        let exec = Duration::from_micros(exec_us);
        entry.set_exec_time(exec);
        entry.set_scheduled_count(1);
        entry.add_metadata(SchedulerTestcaseMetadata::with_n_fuzz_entry(0, 0));
        if favored {
            entry.add_metadata(IsFavoredMetadata {});
        }
        let weight = BoundedSpeedWeight::compute(&state, &mut entry).unwrap();
        let power = BoundedSpeedPower::compute(&state, &mut entry).unwrap();
        assert_eq!(
            *entry.exec_time(),
            Some(exec),
            "the measured time is restored"
        );
        (weight, power)
    }

    #[test]
    fn slow_favoured_entries_keep_half_the_picks_and_havoc_of_average_ones() {
        let (weight, power) = weight_and_power(100, true);
        for slow_us in [250, 1_000, 100_000] {
            assert_eq!(weight_and_power(slow_us, true), (weight / 2.0, power / 2.0));
        }
        let (faster_weight, faster_power) = weight_and_power(20, true);
        assert!(faster_weight > weight && faster_power > power);
    }

    #[test]
    fn slow_entries_not_favoured_keep_the_afl_factor() {
        let (weight, power) = weight_and_power(100, false);
        let (slow_weight, slow_power) = weight_and_power(1_001, false);
        assert!(
            (slow_weight - weight / 10.0).abs() < 1e-9,
            "{slow_weight} {weight}"
        );
        assert!(
            (slow_power - power / 10.0).abs() < 1e-9,
            "{slow_power} {power}"
        );
    }
}
