//! The coverage of the saved solutions of one kind: what makes a new crash or hang new.

use serde::{Deserialize, Serialize};

/// Highest hit-count bucket seen per map entry among the saved solutions of one kind.
/// Kept in the fuzzer state, so it survives the client restart that follows every crash.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SolutionCoverage {
    max: Vec<u8>,
    saved_any: bool,
}
libafl_bolts::impl_serdeany!(SolutionCoverage);

impl SolutionCoverage {
    /// Merges `map` in; true when it has an entry above everything seen so far
    /// (or when nothing of this kind was saved yet).
    pub fn merge(&mut self, map: impl Iterator<Item = u8>) -> bool {
        let mut new = !self.saved_any;
        for (i, value) in map.enumerate() {
            if i >= self.max.len() {
                self.max.resize(i + 1, 0);
            }
            if value > self.max[i] {
                self.max[i] = value;
                new = true;
            }
        }
        self.saved_any = true;
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_solution_is_always_new_even_without_coverage() {
        let mut seen = SolutionCoverage::default();
        assert!(seen.merge([0u8, 0, 0].into_iter()));
        assert!(!seen.merge([0u8, 0, 0].into_iter()));
    }

    #[test]
    fn only_higher_buckets_are_new() {
        let mut seen = SolutionCoverage::default();
        assert!(seen.merge([1u8, 0, 2].into_iter()));
        assert!(!seen.merge([1u8, 0, 1].into_iter()));
        assert!(seen.merge([1u8, 4, 0].into_iter()));
        assert!(!seen.merge([1u8, 4, 2].into_iter()));
    }
}
