//! Input-to-state replacement: one logged comparison, picked at random, has one operand found
//! in the input from a random offset on, and the first place found gets the other operand.
//!
//! The same choices as LibAFL's `I2SRandReplace` stacked by its `HavocScheduledMutator`, drawn
//! from the random stream in the same order, so stacks make the same inputs (a test compares
//! whole stages with plain scans stacked by LibAFL; the stage then runs each distinct input
//! once, [`SkipRepeats`]). What differs is the cost: for a logged
//! memory comparison, LibAFL compares every prefix of each operand at every position (up to
//! 64 slice comparisons per byte of input, each a `bcmp` call through the comparison
//! interceptors), and for a logged integer comparison it tests four values at every position;
//! together a quarter of a font-shaping harness's time (5 KB inputs). Here SIMD searches find
//! the integers, and the positions that start with a memory operand's first byte, where the
//! longest matching prefix is measured once; and a stage remembers what it found in its base
//! input ([`I2SReplace`]).

use std::{borrow::Cow, num::NonZero};

use libafl::{
    inputs::HasMutatorBytes,
    mutators::{MutationResult, Mutator},
    observers::cmp::{CmpValues, CmpValuesMetadata},
    state::HasRand,
    Error, HasMetadata,
};
use libafl_bolts::{rands::Rand, Named};

mod compared;
mod repeats;
#[cfg(test)]
mod tests;

use compared::Compared;
pub use repeats::SkipRepeats;

/// Replacements stack 2^1 ... 2^this per input, as LibAFL's `HavocScheduledMutator` stacks
/// `I2SRandReplace`: shallower stacks cost harfbuzz 6% of its edges (2-8 instead of 2-128,
/// side by side, 120 s).
const MAX_STACK_POW: usize = 7;

/// See the module documentation. One stage's inputs are the same base input (the entry
/// traced just before) mutated by stacks of replacements, each stack from a fresh copy; most
/// replacements of a stack find nothing (on zlib two stacks in three change nothing at all),
/// and while a stack has changed nothing its input is the base. So what is known of where
/// each comparison's operands are in the base is kept for the stage ([`Known`]), and a
/// replacement in an unchanged input searches only what is not known yet.
#[derive(Debug, Default)]
pub struct I2SReplace {
    /// Per logged comparison, what the stage has found out about the base input.
    known: Vec<Known>,
}

impl I2SReplace {
    /// Forgets what is known of the base input: call it when the base input or the logged
    /// comparisons change (before each run of the stage).
    pub fn forget(&mut self) {
        self.known.clear();
    }

    /// Where replacement `pick, from` is made in `bytes`; `unchanged`: `bytes` is still the
    /// stage's base input.
    fn first_match(
        &mut self,
        list: &[CmpValues],
        (pick, from): (usize, usize),
        bytes: &[u8],
        unchanged: bool,
    ) -> Option<usize> {
        let search = |lo: usize, hi: usize| Compared::of(&list[pick]).first_match(bytes, lo, hi);
        match u32::try_from(bytes.len()) {
            Ok(size) if unchanged => {
                if self.known.len() != list.len() {
                    self.known.clear();
                    self.known.resize(list.len(), Known::NOTHING);
                }
                self.known[pick]
                    .first_match(from as u32, size, |lo, hi| search(lo as usize, hi as usize))
            }
            _ => search(from, bytes.len()),
        }
    }
}

impl<I, S> Mutator<I, S> for I2SReplace
where
    S: HasMetadata + HasRand,
    I: HasMutatorBytes,
{
    /// A stack of replacements, with the random draws of LibAFL's `HavocScheduledMutator`
    /// stacking `I2SRandReplace`, in the same order: the stack's size, then per replacement
    /// which mutation (of one), which comparison and from where. All are drawn first (the
    /// input's size and the comparisons do not change within a stack) so the comparisons are
    /// looked up once per stack, not twice per replacement.
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let stack = 1usize << (1 + state.rand_mut().below_or_zero(MAX_STACK_POW));
        let size = NonZero::new(input.mutator_bytes().len());
        let count = state
            .metadata_map()
            .get::<CmpValuesMetadata>()
            .and_then(|meta| NonZero::new(meta.list.len()));
        let mut draws = [(0, 0); 1 << MAX_STACK_POW];
        for draw in &mut draws[..stack] {
            state.rand_mut().below(NonZero::<usize>::MIN);
            if let (Some(size), Some(count)) = (size, count) {
                *draw = (state.rand_mut().below(count), state.rand_mut().below(size));
            }
        }
        if size.is_none() || count.is_none() {
            return Ok(MutationResult::Skipped);
        }
        let list = &state
            .metadata_map()
            .get::<CmpValuesMetadata>()
            .unwrap()
            .list;
        let bytes = input.mutator_bytes_mut();
        let mut result = MutationResult::Skipped;
        for &draw in &draws[..stack] {
            let unchanged = result == MutationResult::Skipped;
            if let Some(at) = self.first_match(list, draw, bytes, unchanged) {
                Compared::of(&list[draw.0]).replace_at(bytes, at);
                result = MutationResult::Mutated;
            }
        }
        Ok(result)
    }

    fn post_exec(&mut self, _: &mut S, _: Option<libafl::corpus::CorpusId>) -> Result<(), Error> {
        Ok(())
    }
}

impl Named for I2SReplace {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("I2SReplace");
        &NAME
    }
}

/// What is known of one comparison's first match in the base input from some position on:
/// none of its operands' searched forms starts in `from..first` (`first` [`Known::NONE`]:
/// none from `from` on). Positions fit in 32 bits (inputs that do not are not remembered).
#[derive(Clone, Copy, Debug)]
struct Known {
    from: u32,
    first: u32,
}

impl Known {
    /// Nothing searched yet.
    const NOTHING: Self = Self {
        from: u32::MAX,
        first: u32::MAX,
    };
    const NONE: u32 = u32::MAX;

    /// The first match at or after `from`, in an input of `size` bytes; `search(lo, hi)`: the
    /// first match starting in `lo..hi`. Each position is searched about once per stage.
    fn first_match(
        &mut self,
        from: u32,
        size: u32,
        search: impl Fn(u32, u32) -> Option<usize>,
    ) -> Option<usize> {
        let searched = self.from != Self::NOTHING.from;
        if searched && from >= self.from {
            if self.first == Self::NONE {
                return None;
            }
            if self.first >= from {
                return Some(self.first as usize);
            }
            // A match before `from`: what follows it is not known.
            *self = Self {
                from,
                first: search(from, size).map_or(Self::NONE, |at| at as u32),
            };
        } else {
            // Only the positions before those already searched are.
            let (searched_from, first_after) = if searched {
                (self.from, self.first)
            } else {
                (size, Self::NONE)
            };
            *self = Self {
                from,
                first: search(from, searched_from).map_or(first_after, |at| at as u32),
            };
        }
        (self.first != Self::NONE).then_some(self.first as usize)
    }
}
