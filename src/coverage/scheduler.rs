//! The corpus scheduler: LibAFL's minimizer (favoured entries: for each covered edge, the
//! smallest and fastest input that reaches it) over a power-scheduled weighted queue.
//!
//! LibAFL's `MinimizerScheduler` re-marks the favoured entries on every `next`, a walk over
//! every covered edge; with the power schedule giving most entries a few executions, that
//! walk took 7-11% of a font-shaping harness's time. The favoured set changes only when an
//! entry is added, so this wrapper re-marks only then (and with a bit set), at most every
//! [`CULL_INTERVAL`], and picks as LibAFL does, except that every other pick takes a favoured
//! entry waiting for its first fuzzing, oldest first (see `next`).

use std::time::{Duration, Instant};

use libafl::{
    corpus::{Corpus, CorpusId},
    observers::CanTrack,
    schedulers::{
        minimizer::{IsFavoredMetadata, TopRatedsMetadata, DEFAULT_SKIP_NON_FAVORED_PROB},
        AflScheduler, MinimizerScheduler, RemovableScheduler, Scheduler, SchedulerMetadata,
        TestcasePenalty,
    },
    state::{HasCorpus, HasRand},
    Error, HasMetadata,
};
use libafl_bolts::{
    rands::Rand,
    serdeany::SerdeAny,
    tuples::{MatchName, MatchNameRef},
    AsIter, HasRefCnt,
};

use crate::coverage::{closest_comparisons, hitcounts::PathHash, pending_favored::PendingFavored};

/// Re-marking after each new entry cost a campaign that adds them quickly (a font-shaping
/// harness: 40 entries a second, 2,500 in all) 4.5% of its time, in the scheduler's pick.
/// Until the next re-marking, a new entry is picked as a non-favoured one, so an entry that a
/// smaller or faster one supersedes within the interval is never favoured (LibAFL never
/// unmarks one). Side by side, 60 s, seeds 1-3 x 2 core orders, 1 s against 250 ms: sqlite
/// +4.1% edges (6 of 6 pairs higher), libpng, zlib, lcms and harfbuzz within
/// +-0.4%; 3 s against 1 s: sqlite +0.2%. Re-marking sooner (at most 0.5% of the time, or
/// new entries counted as favoured until then) cost sqlite 1.5-3%; unmarking the entries no
/// longer favoured, as AFL++ does, added nothing to 1 s (sqlite -0.6%).
const CULL_INTERVAL: Duration = Duration::from_secs(1);

/// A `MinimizerScheduler` that culls after the corpus changed instead of before every pick.
#[derive(Debug)]
pub struct CullOnChange<CS, F, I, M, O> {
    minimizer: MinimizerScheduler<CS, F, I, M, O>,
    cull_due: bool,
    last_cull: Option<Instant>,
    pending: PendingFavored,
}

impl<CS, F, I, M, O> CullOnChange<CS, F, I, M, O> {
    pub fn new(minimizer: MinimizerScheduler<CS, F, I, M, O>) -> Self {
        Self {
            minimizer,
            // A restarted client has a corpus but a fresh scheduler.
            cull_due: true,
            last_cull: None,
            pending: PendingFavored::default(),
        }
    }
}

impl<CS, F, I, M, O, S> Scheduler<I, S> for CullOnChange<CS, F, I, M, O>
where
    CS: Scheduler<I, S> + RemovableScheduler<I, S> + AflScheduler<ObserverRef = O>,
    F: TestcasePenalty<I, S>,
    M: for<'a> AsIter<'a, Item = usize> + SerdeAny + HasRefCnt,
    O: CanTrack + PathHash,
    S: HasCorpus<I> + HasMetadata + HasRand,
{
    fn on_add(&mut self, state: &mut S, id: CorpusId) -> Result<(), Error> {
        self.cull_due = true;
        self.minimizer.on_add(state, id)?;
        closest_comparisons::record_leader(state, id)
    }

    /// As LibAFL's `on_evaluation_metadata_default` (counts how often the execution's path
    /// ran, for the power schedule), with the hash the map observer made when it bucketed the
    /// map. LibAFL's hashes that hash again with a fresh XXH3 state after every execution: on a
    /// harness that returns at once, XXH3 and LibAFL's function took 4.7% of the time, this
    /// takes 3.1% (mostly the metadata lookup both do).
    fn on_evaluation<OT: MatchName>(
        &mut self,
        state: &mut S,
        _input: &I,
        observers: &OT,
    ) -> Result<(), Error> {
        let queue = self.minimizer.base_mut();
        let path = observers
            .get(queue.observer_handle())
            .ok_or_else(|| Error::key_not_found("the coverage map observer"))?
            .path_hash();
        let schedule = state
            .metadata_map_mut()
            .get_mut::<SchedulerMetadata>()
            .ok_or_else(|| Error::key_not_found("the power schedule's metadata"))?;
        let slot = (path % schedule.n_fuzz().len() as u64) as usize;
        schedule.n_fuzz_mut()[slot] = schedule.n_fuzz()[slot].saturating_add(1);
        queue.set_last_hash(slot);
        Ok(())
    }

    /// As `MinimizerScheduler::next` (a non-favoured entry is skipped with probability 0.95),
    /// where a favoured entry never fuzzed does not take this pick (`pending_favored.rs`).
    fn next(&mut self, state: &mut S) -> Result<CorpusId, Error> {
        if self.cull_due && self.last_cull.is_none_or(|t| t.elapsed() >= CULL_INTERVAL) {
            // Re-marks the favoured entries, then lists those that wait (whichever way
            // `mark_favored` marked them: its fallback, LibAFL's cull, returns early).
            self.mark_favored(state)?;
            self.pending.refill(state)?;
            self.cull_due = false;
            self.last_cull = Some(Instant::now());
        }
        if let Some(id) = self.pending.take(state)? {
            self.minimizer
                .base_mut()
                .set_current_scheduled(state, Some(id))?;
            return Ok(id);
        }
        let queue = self.minimizer.base_mut();
        let mut id = queue.next(state)?;
        while !is_favored(state, id)?
            && !closest_comparisons::leads_recently(state, id)
            && state.rand_mut().coinflip(DEFAULT_SKIP_NON_FAVORED_PROB)
        {
            id = queue.next(state)?;
        }
        Ok(id)
    }

    /// The queue below records what is scheduled, in its `next`.
    fn set_current_scheduled(&mut self, _: &mut S, _: Option<CorpusId>) -> Result<(), Error> {
        Ok(())
    }
}

impl<CS, F, I, M, O> CullOnChange<CS, F, I, M, O>
where
    M: for<'a> AsIter<'a, Item = usize> + SerdeAny + HasRefCnt,
{
    /// `MinimizerScheduler::cull`, walking the top-rated entries in the same order, with the
    /// covered edges in a bit set instead of a hash set (each entry adds every edge it covers,
    /// thousands on a large target) and each favoured entry marked once.
    fn mark_favored<S>(&mut self, state: &mut S) -> Result<(), Error>
    where
        CS: Scheduler<I, S> + RemovableScheduler<I, S>,
        F: TestcasePenalty<I, S>,
        O: CanTrack,
        S: HasCorpus<I> + HasMetadata + HasRand,
    {
        let Some(top_rated) = state.metadata_map().get::<TopRatedsMetadata>() else {
            return Ok(());
        };
        let mut covered = BitSet::default();
        let mut favored = Vec::new();
        for (edge, id) in &top_rated.map {
            if covered.contains(*edge) {
                continue;
            }
            let Ok(entry) = state.corpus().get(*id) else {
                // An entry gone from the corpus: LibAFL's cull drops it from the top rated.
                return self.minimizer.cull(state);
            };
            let entry = entry.borrow();
            let edges = entry.metadata_map().get::<M>().ok_or_else(|| {
                Error::key_not_found(format!("testcase #{id} has no coverage indexes"))
            })?;
            for covered_edge in edges.as_iter() {
                covered.insert(*covered_edge);
            }
            if !entry.has_metadata::<IsFavoredMetadata>() {
                favored.push(*id);
            }
        }
        for id in favored {
            state
                .corpus()
                .get(id)?
                .borrow_mut()
                .add_metadata(IsFavoredMetadata {});
        }
        Ok(())
    }
}

/// A growable set of small integers (map indexes).
#[derive(Default)]
struct BitSet(Vec<u64>);

impl BitSet {
    fn contains(&self, n: usize) -> bool {
        self.0.get(n / 64).is_some_and(|w| w & (1 << (n % 64)) != 0)
    }

    fn insert(&mut self, n: usize) {
        if n / 64 >= self.0.len() {
            self.0.resize(n / 64 + 1, 0);
        }
        self.0[n / 64] |= 1 << (n % 64);
    }
}

fn is_favored<I, S: HasCorpus<I>>(state: &S, id: CorpusId) -> Result<bool, Error> {
    Ok(state
        .corpus()
        .get(id)?
        .borrow()
        .has_metadata::<IsFavoredMetadata>())
}
