//! Shrinking a failing input while it keeps failing the same way: chunks removed, halving
//! the chunk size down to single bytes, until a whole pass removes nothing; then, for
//! `cleanse`, bytes replaced by neutral ones where the failure does not depend on them.

use super::Budget;
use crate::target::isolated::{self, Limits, Outcome};

/// Runs `input` in a child and says whether it fails like `expected`.
fn fails_like(input: &[u8], expected: Outcome, limits: Limits) -> Result<bool, String> {
    let (outcome, _) = isolated::run(&[input], limits, false)?;
    Ok(outcome.same_kind(expected))
}

/// What one input does (once, in a child).
pub fn outcome_of(input: &[u8], limits: Limits) -> Result<Outcome, String> {
    Ok(isolated::run(&[input], limits, false)?.0)
}

/// The smallest input found that fails as `input` does (`expected`), within `budget`;
/// `progress` sees each smaller one.
pub fn shrink(
    input: &[u8],
    expected: Outcome,
    limits: Limits,
    budget: &mut Budget,
    mut progress: impl FnMut(&[u8]),
) -> Result<Vec<u8>, String> {
    let mut best = input.to_vec();
    loop {
        let before = best.len();
        let mut chunk = (best.len() / 2).max(1);
        loop {
            let mut at = 0;
            while at < best.len() {
                if !budget.take_run() {
                    return Ok(best);
                }
                let end = (at + chunk).min(best.len());
                let candidate = [&best[..at], &best[end..]].concat();
                if fails_like(&candidate, expected, budget.capped(limits))? {
                    best = candidate;
                    progress(&best);
                } else {
                    at += chunk;
                }
            }
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
        if best.len() == before {
            return Ok(best);
        }
    }
}

/// `input` with as many bytes as possible replaced by `' '` or `0xff` while it still fails as
/// `expected` (libFuzzer's `-cleanse_crash`): what is left of the original is what matters.
pub fn cleanse(
    input: &[u8],
    expected: Outcome,
    limits: Limits,
    budget: &mut Budget,
) -> Result<Vec<u8>, String> {
    let mut best = input.to_vec();
    for at in 0..best.len() {
        for neutral in [b' ', 0xff] {
            if best[at] == neutral {
                continue;
            }
            if !budget.take_run() {
                return Ok(best);
            }
            let mut candidate = best.clone();
            candidate[at] = neutral;
            if fails_like(&candidate, expected, budget.capped(limits))? {
                best = candidate;
                break;
            }
        }
    }
    Ok(best)
}
