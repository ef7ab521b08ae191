//! Value profile's climb: the entry that brought a comparison closest is where the next step
//! starts, so the scheduler never skips it until a closer one replaces it.
//!
//! An input kept for value profile reaches the edges its parent reached, so LibAFL's minimizer
//! (favoured entries: for each edge, the smallest and fastest input reaching it) never favours
//! it, and the scheduler skipped it 19 times in 20. The feedback records, on each entry it
//! keeps, the comparisons (value-profile map indexes) it brought closer than any input before
//! it ([`ClosestComparisons`]); the scheduler's `on_add` calls [`record_leader`], and its `next`
//! never skips one of the latest leaders ([`leads_recently`]). Favouring the leaders instead
//! (the favoured weight, 5x) cost sqlite and zlib 2-3% of their edges with value profile on.

use std::{
    borrow::Cow,
    collections::{HashMap, VecDeque},
};

use libafl::{
    corpus::{Corpus, CorpusId, Testcase},
    events::EventFirer,
    executors::ExitKind,
    feedbacks::{Feedback, HasObserverHandle, MapFeedbackMetadata, StateInitializer},
    state::HasCorpus,
    Error, HasMetadata, HasNamedMetadata,
};
use libafl_bolts::{
    tuples::{MatchName, MatchNameRef},
    Named, ToSlice,
};
use serde::{Deserialize, Serialize};

use crate::coverage::novelty::above_history;

/// How many of the latest leaders the scheduler never skips: the climbs under way. Every leader
/// (a large target has thousands of comparisons) cost sqlite 2% of its edges with value
/// profile on.
const RECENT_LEADERS: usize = 16;

/// The comparisons an entry brought closer than any input before it, when it was kept.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct ClosestComparisons(Vec<usize>);
libafl_bolts::impl_serdeany!(ClosestComparisons);

/// For each comparison, the entry that brought it closest, and the entries that took the lead
/// most recently (the state's, so restarts keep them).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct ComparisonLeaders {
    leaders: HashMap<usize, CorpusId>,
    recent: VecDeque<CorpusId>,
}
libafl_bolts::impl_serdeany!(ComparisonLeaders);

impl ComparisonLeaders {
    /// `id` now leads at `comparisons`, and is the latest leader; an entry it replaced at
    /// every comparison it led is no longer among the latest.
    fn take_lead(&mut self, id: CorpusId, comparisons: &[usize]) {
        let replaced: Vec<CorpusId> = comparisons
            .iter()
            .filter_map(|&comparison| self.leaders.insert(comparison, id))
            .filter(|&previous| previous != id)
            .collect();
        let leaders = &self.leaders;
        self.recent.retain(|entry| {
            !replaced.contains(entry) || leaders.values().any(|leader| leader == entry)
        });
        self.recent.push_front(id);
        self.recent.truncate(RECENT_LEADERS);
    }
}

/// The value-profile feedback `F` (a max map feedback over a byte map), recording on each kept
/// entry the comparisons it brought closer than before.
#[derive(Debug, Clone)]
pub struct RecordClosest<F> {
    inner: F,
}

impl<F> RecordClosest<F> {
    pub fn new(inner: F) -> Self {
        Self { inner }
    }
}

impl<F: StateInitializer<S>, S> StateInitializer<S> for RecordClosest<F> {
    fn init_state(&mut self, state: &mut S) -> Result<(), Error> {
        self.inner.init_state(state)
    }
}

impl<F: Named> Named for RecordClosest<F> {
    fn name(&self) -> &Cow<'static, str> {
        self.inner.name()
    }
}

impl<F, EM, I, OT, S> Feedback<EM, I, OT, S> for RecordClosest<F>
where
    F: Feedback<EM, I, OT, S> + HasObserverHandle + Named,
    F::Observer: Sized + for<'a> ToSlice<'a, Entry = u8>,
    EM: EventFirer<I, S>,
    OT: MatchName,
    S: HasNamedMetadata,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        self.inner
            .is_interesting(state, manager, input, observers, exit_kind)
    }

    fn append_metadata(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        observers: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        // Before the history takes this input's values in (the inner feedback, below).
        let map = observers
            .get(self.inner.observer_handle())
            .ok_or_else(|| Error::key_not_found("the value-profile observer"))?
            .to_slice();
        let history = &state
            .named_metadata_map()
            .get::<MapFeedbackMetadata<u8>>(self.inner.name())
            .ok_or_else(|| Error::key_not_found("the value-profile history"))?
            .history_map;
        let closer = above_history(&map, history);
        if !closer.is_empty() {
            testcase.add_metadata(ClosestComparisons(closer));
        }
        self.inner
            .append_metadata(state, manager, observers, testcase)
    }
}

/// Entry `id` was just added: it leads at the comparisons it brought closest.
pub fn record_leader<I, S>(state: &mut S, id: CorpusId) -> Result<(), Error>
where
    S: HasCorpus<I> + HasMetadata,
{
    let entry = state.corpus().get(id)?.borrow();
    let Some(ClosestComparisons(comparisons)) = entry.metadata_map().get().cloned() else {
        return Ok(());
    };
    drop(entry);
    state
        .metadata_or_insert_with(ComparisonLeaders::default)
        .take_lead(id, &comparisons);
    Ok(())
}

/// Whether entry `id` is one of the most recent leaders. Asked on every pick: absent metadata
/// is looked up as an `Option`, since `metadata()`'s error captures a backtrace each time.
pub fn leads_recently<S: HasMetadata>(state: &S, id: CorpusId) -> bool {
    state
        .metadata_map()
        .get::<ComparisonLeaders>()
        .is_some_and(|leaders| leaders.recent.contains(&id))
}

#[cfg(test)]
mod tests {
    use libafl::corpus::CorpusId;

    use super::{ComparisonLeaders, RECENT_LEADERS};

    #[test]
    fn an_entry_stays_among_the_latest_leaders_while_it_leads_somewhere() {
        let mut leaders = ComparisonLeaders::default();
        let latest = |l: &ComparisonLeaders| l.recent.iter().map(|id| id.0).collect::<Vec<_>>();
        leaders.take_lead(CorpusId(1), &[10, 11]);
        leaders.take_lead(CorpusId(2), &[10]);
        assert_eq!(latest(&leaders), [2, 1], "1 still leads at 11");
        leaders.take_lead(CorpusId(3), &[11]);
        assert_eq!(latest(&leaders), [3, 2], "1 replaced at both");
        for id in 4..40 {
            leaders.take_lead(CorpusId(id), &[id]);
        }
        assert_eq!(leaders.recent.len(), RECENT_LEADERS);
        assert_eq!(leaders.recent[0], CorpusId(39));
    }
}
