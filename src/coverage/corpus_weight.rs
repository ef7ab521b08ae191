//! How likely the weighted queue is to pick each corpus entry: LibAFL's corpus weight with
//! AFL++'s bounded speed factor.
//!
//! LibAFL's `CorpusWeightTestcaseScore` multiplies an entry's weight by the average execution
//! time over the entry's own, without bound: an entry ten times faster than the average is
//! picked ten times as often, and the power schedule then gives it more executions again. On
//! an SQL engine the cheap queries (function calls) took over the corpus and the slower schema
//! statements were starved: after 60 s, 7% of our entries had a `CREATE INDEX` and 58% a
//! `printf(`. AFL++ bounds the speed factor to 0.1..3 (`calculate_score`): 34% and 15% of its
//! entries, and it covered the index, update and pager code we missed.

use libafl::{
    corpus::{SchedulerTestcaseMetadata, Testcase},
    feedbacks::MapIndexesMetadata,
    schedulers::{
        minimizer::{IsFavoredMetadata, TopRatedsMetadata},
        powersched::{BaseSchedule, SchedulerMetadata},
        testcase_score::TestcaseScore,
    },
    Error, HasMetadata,
};
use libafl_bolts::HasRefCnt;

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
        if entry.scheduled_count() == 0 || schedule.cycles() == 0 {
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
        let average_ns = schedule.exec_time().as_nanos() as f64 / schedule.cycles() as f64;
        weight *= speed_factor(exec_ns, average_ns);
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
    use super::speed_factor;

    #[test]
    fn speed_counts_at_most_thirtyfold_between_entries() {
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
}
