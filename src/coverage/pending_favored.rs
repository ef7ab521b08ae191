//! Favoured entries waiting for their first fuzzing (AFL++'s "pending favoured"): every other
//! pick takes the oldest of them, the weighted queue the others. The weighted queue alone gives
//! an entry never fuzzed weight 1 against the fuzzed ones' 5 and more, so an entry could wait
//! seconds among a fast-growing corpus: stb_image's progressive JPEG seed, one byte from STB-2,
//! went unfuzzed for 8 s in one trial of six.
//!
//! Every other pick, not every pick (as AFL++, which fuzzes them first in each cycle): taking
//! them at every pick added edges (side by side, 60 s, medians of 3: harfbuzz +5.3%, stb_image
//! +3.3%, sqlite +2.6%, zlib -1.0%) and found STB-2 in 0.7 s, but spent the campaign on first
//! fuzzings: STB-3, found by havoc on BMP entries, came in 0 of 6 pairs of 120 s side by side
//! against 6 of 6 with seeds only taken first. Seeds only, against none: STB-2 no sooner (4
//! pairs: medians 1.8 and 1.7 s). Every other pick against none (ASan, 5 pairs of 120 s): STB-2
//! median 2.6 -> 1.0 s, STB-4 10.7 -> 5.2 s, STB-3 in 3 pairs against 2, STB-1 in all 5 both;
//! coverage suite (60 s, medians of 3): harfbuzz +8.7% edges, sqlite +5.2%, lcms +3.2%,
//! stb_image +2.3%, libpng -0.2% and oniguruma -0.5% (within their spread), geomean +2.4%.

use libafl::{
    corpus::{Corpus, CorpusId},
    schedulers::minimizer::IsFavoredMetadata,
    state::HasCorpus,
    Error, HasMetadata,
};

/// The favoured entries never fuzzed, as of the last `refill`, oldest last.
#[derive(Debug, Default)]
pub struct PendingFavored {
    waiting: Vec<CorpusId>,
    /// Flips at every pick: the picks when it is true are the weighted queue's.
    queue_turn: bool,
}

impl PendingFavored {
    /// Lists the favoured entries that wait (after each re-marking of the favoured ones).
    pub fn refill<I, S: HasCorpus<I>>(&mut self, state: &S) -> Result<(), Error> {
        self.waiting.clear();
        for id in state.corpus().ids() {
            let entry = state.corpus().get(id)?.borrow();
            if entry.scheduled_count() == 0 && entry.has_metadata::<IsFavoredMetadata>() {
                self.waiting.push(id);
            }
        }
        self.waiting.reverse();
        Ok(())
    }

    /// On every other pick, the oldest entry still waiting; `None` on the others and when none
    /// waits. (An entry whose fuzzing a crash or hang ended is not taken again: the client that
    /// takes over resumes that fuzzing, LibAFL's `fuzz_one` keeping the entry's id in the state
    /// it hands over.)
    pub fn take<I, S: HasCorpus<I>>(&mut self, state: &S) -> Result<Option<CorpusId>, Error> {
        self.queue_turn = !self.queue_turn;
        if self.queue_turn {
            return Ok(None);
        }
        while let Some(id) = self.waiting.pop() {
            if state.corpus().get(id)?.borrow().scheduled_count() == 0 {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use libafl::{
        corpus::{Corpus, Testcase},
        feedbacks::MapIndexesMetadata,
        inputs::BytesInput,
        observers::{CanTrack, StdMapObserver},
        schedulers::{
            powersched::PowerSchedule, IndexesLenTimeMinimizerScheduler, Scheduler,
            WeightedScheduler,
        },
        state::HasCorpus,
        HasMetadata,
    };

    use crate::coverage::{
        corpus_weight::BoundedSpeedWeight,
        hitcounts::HitcountsObserver,
        scheduler::CullOnChange,
        test_state::{self, TestState},
    };

    /// A state of twenty entries fuzzed before, then three new ones (ids 20, 22, 23), each
    /// favoured for an edge of its own, and a fourth (21) that covers the first new one's edge
    /// and is longer (not favoured).
    fn state_with_new_entries() -> TestState {
        let mut state = test_state::empty();
        let fuzzed = (0..20).map(|edge| (edge, 4, true));
        let new = [
            (20, 4, false),
            (20, 8, false),
            (21, 4, false),
            (22, 4, false),
        ];
        let mut scheduler = scheduler(&mut state);
        for (edge, len, fuzzed) in fuzzed.chain(new) {
            let mut entry = Testcase::new(BytesInput::new(vec![0; len]));
            entry.set_exec_time(Duration::from_millis(10));
            entry.add_metadata(MapIndexesMetadata::new(vec![edge]));
            entry.set_scheduled_count(usize::from(fuzzed));
            let id = state.corpus_mut().add(entry).unwrap();
            scheduler.on_add(&mut state, id).unwrap();
        }
        state
    }

    /// The campaign's scheduler over a fresh queue, as a client (re)starting builds it.
    fn scheduler(state: &mut TestState) -> impl Scheduler<BytesInput, TestState> {
        let edges = HitcountsObserver::new(StdMapObserver::owned("edges", vec![0u8; 32]))
            .track_indices()
            .track_novelties();
        let queue = WeightedScheduler::<_, BoundedSpeedWeight, _>::with_schedule(
            state,
            &edges,
            Some(PowerSchedule::fast()),
        );
        CullOnChange::new(IndexesLenTimeMinimizerScheduler::new(&edges, queue))
    }

    fn picks(
        n: usize,
        scheduler: &mut impl Scheduler<BytesInput, TestState>,
        state: &mut TestState,
    ) -> Vec<usize> {
        (0..n)
            .map(|_| scheduler.next(state).unwrap().into())
            .collect()
    }

    #[test]
    fn every_other_pick_is_the_oldest_favoured_entry_never_fuzzed() {
        let mut state = state_with_new_entries();
        let mut scheduler = scheduler(&mut state);
        let first = picks(6, &mut scheduler, &mut state);
        let pending: Vec<usize> = first.iter().copied().skip(1).step_by(2).collect();
        assert_eq!(pending, [20, 22, 23], "{first:?}");
        // None waits any more: the weighted queue picks, the fuzzed entries too.
        let later = picks(20, &mut scheduler, &mut state);
        assert!(later.iter().any(|&id| id < 20), "{later:?}");
    }
}
