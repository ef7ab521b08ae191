//! Coverage: what the campaign observes of each execution and how it picks the next entry.
//! The hit-count observer over the coverage map (`hitcounts.rs`, with AFL's buckets in
//! `buckets.rs`), the feedback that decides what is new (`novelty.rs`), and the scheduler
//! (`scheduler.rs`, taking favoured entries never fuzzed at every other pick by
//! `pending_favored.rs`, weighting entries by `corpus_weight.rs`, and favouring value
//! profile's closest entries by `closest_comparisons.rs`; its path frequencies cross a
//! client's restart compacted by `path_frequencies.rs`).
//!
//! Uses only LibAFL: nothing here knows of modes, targets or the campaign.

pub mod buckets;
pub mod closest_comparisons;
pub mod corpus_weight;
pub mod hitcounts;
pub mod novelty;
pub mod path_frequencies;
pub mod pending_favored;
pub mod scheduler;

/// An empty state over in-memory corpora, for tests.
#[cfg(test)]
pub(crate) mod test_state {
    use libafl::{
        corpus::InMemoryCorpus, feedbacks::ConstFeedback, inputs::BytesInput, state::StdState,
    };
    use libafl_bolts::rands::StdRand;

    pub type TestState =
        StdState<InMemoryCorpus<BytesInput>, BytesInput, StdRand, InMemoryCorpus<BytesInput>>;

    pub fn empty() -> TestState {
        StdState::new(
            StdRand::with_seed(1),
            InMemoryCorpus::new(),
            InMemoryCorpus::new(),
            &mut ConstFeedback::new(false),
            &mut ConstFeedback::new(false),
        )
        .unwrap()
    }
}
