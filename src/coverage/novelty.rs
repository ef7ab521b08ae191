//! Which executions found new coverage: a counter is new when it exceeds the most seen there
//! before (LibAFL's max map feedback), checked only where the execution touched the map.
//!
//! LibAFL's `MaxMapFeedback` compares the whole map with the history after every execution:
//! with the map's scan for hit counts, the same size again (6% of a font-shaping harness's
//! time, 35,000 counters). The hit-count pass (`hitcounts.rs`) already knows which blocks of
//! counters are not all zero; only those can hold a new maximum. Everything else (the
//! history's upkeep when an input is kept, calibration, the minimizer's indices) is LibAFL's
//! SIMD map feedback, with a max reducer the compiler can inline. A kept input also gets the
//! list of counters it raised (its novelties, which generalization keeps while removing parts
//! of the input): LibAFL's feedback lists them in its scan of the whole map after every
//! execution; here only a kept input's map is scanned for them.

use std::borrow::Cow;

use libafl::{
    corpus::Testcase,
    events::EventFirer,
    executors::ExitKind,
    feedbacks::{
        map::MapNoveltiesMetadata, simd::SimdMapFeedback, Feedback, HasObserverHandle,
        MapFeedbackMetadata, StateInitializer,
    },
    observers::{CanTrack, MapObserver},
    state::HasExecutions,
    Error, HasMetadata, HasNamedMetadata,
};
use libafl_bolts::{
    simd::{vector::u8x32, MaxReducer, Reducer, SimdReducer},
    tuples::{Handle, MatchName, MatchNameRef},
    AsIter, Named, ToSlice,
};

use crate::coverage::{buckets::BLOCK, hitcounts::HitcountsObserver};

/// The maximum of the history and this execution's counters, 32 at a time.
#[derive(Debug, Clone, Copy)]
pub struct InlineMax;

impl Reducer<u8x32> for InlineMax {
    #[inline]
    fn reduce(history: u8x32, new: u8x32) -> u8x32 {
        history.max(new)
    }
}

impl SimdReducer<u8x32> for InlineMax {
    type PrimitiveReducer = MaxReducer;
}

/// New coverage, over an observer `C` of a hit-count map `HitcountsObserver<M>`.
#[derive(Debug, Clone)]
pub struct NewCoverageFeedback<C, M> {
    inner: SimdMapFeedback<C, HitcountsObserver<M>, InlineMax, u8x32>,
}

impl<C, M> NewCoverageFeedback<C, M>
where
    C: CanTrack + AsRef<HitcountsObserver<M>> + Named,
    HitcountsObserver<M>:
        MapObserver<Entry = u8> + for<'a> ToSlice<'a, Entry = u8> + for<'a> AsIter<'a, Item = u8>,
{
    pub fn new(observer: &C) -> Self {
        Self {
            inner: SimdMapFeedback::new(observer),
        }
    }
}

/// Whether a counter of `map` exceeds the history's, looking only at the `touched` blocks and
/// at the counters after the last whole block.
fn exceeds_history(map: &[u8], history: &[u8], touched: &[u32]) -> bool {
    let above = |range: std::ops::Range<usize>| {
        map[range.clone()]
            .iter()
            .zip(&history[range])
            .fold(false, |above, (&now, &most)| above | (now > most))
    };
    let rest = map.len() / BLOCK * BLOCK;
    touched.iter().any(|&block| {
        let start = block as usize * BLOCK;
        above(start..start + BLOCK)
    }) || above(rest..map.len())
}

/// The indexes at which `map` exceeds `history` (a history shorter than the map holds zeros):
/// what a kept input raised, looked for before the history takes it in. Also value profile's
/// comparisons brought closer (`closest_comparisons.rs`).
pub fn above_history(map: &[u8], history: &[u8]) -> Vec<usize> {
    map.iter()
        .enumerate()
        .filter(|&(i, &now)| now > history.get(i).copied().unwrap_or(0))
        .map(|(i, _)| i)
        .collect()
}

impl<C, M, S> StateInitializer<S> for NewCoverageFeedback<C, M>
where
    HitcountsObserver<M>: MapObserver<Entry = u8>,
    S: HasNamedMetadata,
{
    fn init_state(&mut self, state: &mut S) -> Result<(), Error> {
        self.inner.init_state(state)
    }
}

impl<C, M> Named for NewCoverageFeedback<C, M> {
    fn name(&self) -> &Cow<'static, str> {
        self.inner.name()
    }
}

impl<C, M> HasObserverHandle for NewCoverageFeedback<C, M> {
    type Observer = C;

    fn observer_handle(&self) -> &Handle<C> {
        self.inner.observer_handle()
    }
}

impl<C, M, EM, I, OT, S> Feedback<EM, I, OT, S> for NewCoverageFeedback<C, M>
where
    C: CanTrack + AsRef<HitcountsObserver<M>>,
    EM: EventFirer<I, S>,
    HitcountsObserver<M>:
        MapObserver<Entry = u8> + for<'a> ToSlice<'a, Entry = u8> + for<'a> AsIter<'a, Item = u8>,
    OT: MatchName,
    S: HasNamedMetadata + HasExecutions,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        manager: &mut EM,
        input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        let observer = observers
            .get(self.inner.observer_handle())
            .ok_or_else(|| Error::key_not_found("the coverage map observer"))?
            .as_ref();
        if let Some(touched) = observer.touched_blocks() {
            let map = observer.to_slice();
            let history = &mut state
                .named_metadata_map_mut()
                .get_mut::<MapFeedbackMetadata<u8>>(self.inner.name())
                .ok_or_else(|| Error::key_not_found("the coverage history"))?
                .history_map;
            if history.len() < map.len() {
                history.resize(map.len(), 0);
            }
            return Ok(exceeds_history(&map, history, touched));
        }
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
        // Before the history takes this input's counters in (below).
        if C::NOVELTIES {
            let observer = observers
                .get(self.inner.observer_handle())
                .ok_or_else(|| Error::key_not_found("the coverage map observer"))?
                .as_ref();
            let map = observer.to_slice();
            let history = &state
                .named_metadata_map()
                .get::<MapFeedbackMetadata<u8>>(self.inner.name())
                .ok_or_else(|| Error::key_not_found("the coverage history"))?
                .history_map;
            testcase.add_metadata(MapNoveltiesMetadata::new(above_history(&map, history)));
        }
        self.inner
            .append_metadata(state, manager, observers, testcase)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_values_above_the_history_count() {
        assert_eq!(above_history(&[3, 5, 0, 7], &[3, 4, 1]), vec![1, 3]);
        assert!(above_history(&[0, 0], &[]).is_empty());
    }

    #[test]
    fn a_new_maximum_counts_in_a_touched_block_or_the_rest_only() {
        // Two whole blocks and a remainder of 5.
        let history = vec![4u8; 2 * BLOCK + 5];
        let mut map = vec![0u8; 2 * BLOCK + 5];
        map[BLOCK + 3] = 8;
        assert!(exceeds_history(&map, &history, &[1]));
        assert!(
            !exceeds_history(&map, &history, &[0]),
            "block 1 not touched"
        );
        map[BLOCK + 3] = 4;
        assert!(!exceeds_history(&map, &history, &[1]), "equal is not new");
        map[2 * BLOCK + 4] = 16;
        assert!(
            exceeds_history(&map, &history, &[]),
            "the rest is always looked at"
        );
    }
}
