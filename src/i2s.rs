//! Input-to-state replacement: one logged comparison, picked at random, has one operand found
//! in the input from a random offset on, and the first place found gets the other operand.
//!
//! The same choices as LibAFL's `I2SRandReplace`, drawn from the random stream in the same
//! order, so campaigns behave the same. What differs is the cost on large inputs: for a logged
//! memory comparison, LibAFL compares every prefix of each operand at every position (up to
//! 64 slice comparisons per byte of input, each a `bcmp` call through the comparison
//! interceptors), and for a logged integer comparison it tests four values at every position;
//! together a quarter of a font-shaping harness's time (5 KB inputs). Here SIMD searches find
//! the integers, and the positions that start with a memory operand's first byte, where the
//! longest matching prefix is measured once.

use std::{borrow::Cow, num::NonZero};

use libafl::{
    inputs::HasMutatorBytes,
    mutators::{MutationResult, Mutator},
    observers::cmp::{CmpValues, CmpValuesMetadata},
    state::HasRand,
    Error, HasMetadata,
};
use libafl_bolts::{rands::Rand, Named, ToSlice};

/// See the module documentation.
#[derive(Debug, Default)]
pub struct I2SReplace;

impl<I, S> Mutator<I, S> for I2SReplace
where
    S: HasMetadata + HasRand,
    I: HasMutatorBytes,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, Error> {
        let Some(size) = NonZero::new(input.mutator_bytes().len()) else {
            return Ok(MutationResult::Skipped);
        };
        let Some(count) = state
            .metadata_map()
            .get::<CmpValuesMetadata>()
            .and_then(|meta| NonZero::new(meta.list.len()))
        else {
            return Ok(MutationResult::Skipped);
        };
        let pick = state.rand_mut().below(count);
        let from = state.rand_mut().below(size);
        let cmp = &state
            .metadata_map()
            .get::<CmpValuesMetadata>()
            .unwrap()
            .list[pick];
        let bytes = input.mutator_bytes_mut();
        // An integer operand in the input's byte order and swapped.
        macro_rules! integer {
            ($a:expr, $b:expr, $a_is_const:expr) => {
                replace_integer(
                    bytes,
                    from,
                    [$a.to_ne_bytes(), $a.swap_bytes().to_ne_bytes()],
                    [$b.to_ne_bytes(), $b.swap_bytes().to_ne_bytes()],
                    $a_is_const,
                )
            };
        }
        let replaced = match cmp {
            CmpValues::U8((a, b, c)) => integer!(a, b, *c),
            CmpValues::U16((a, b, c)) => integer!(a, b, *c),
            CmpValues::U32((a, b, c)) => integer!(a, b, *c),
            CmpValues::U64((a, b, c)) => integer!(a, b, *c),
            CmpValues::Bytes((a, b)) => replace_bytes(bytes, from, a.to_slice(), b.to_slice()),
        };
        Ok(if replaced {
            MutationResult::Mutated
        } else {
            MutationResult::Skipped
        })
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

/// The first window at or after `from` that holds `a` (unless `a` is the constant side) or
/// `b`, in either byte order, gets the other operand in the same order (where two are found
/// at one place, in that order of preference).
fn replace_integer<const N: usize>(
    bytes: &mut [u8],
    from: usize,
    [a, a_swapped]: [[u8; N]; 2],
    [b, b_swapped]: [[u8; N]; 2],
    a_is_const: bool,
) -> bool {
    let pairs = [
        (a, b),
        (a_swapped, b_swapped),
        (b, a),
        (b_swapped, a_swapped),
    ];
    let searched = if a_is_const { &pairs[2..] } else { &pairs[..] };
    let Some(rest) = bytes.get(from..) else {
        return false;
    };
    // A SIMD search per operand (a scan of a 5 KB input per stacked replacement otherwise),
    // each only through the windows that start before the nearest operand found so far, so
    // whatever it finds is the new nearest.
    let mut first: Option<(usize, &[u8; N])> = None;
    for (found, other) in searched {
        let end = first.map_or(rest.len(), |(at, _)| at + N - 1);
        if let Some(at) = memchr::memmem::find(&rest[..end], found) {
            first = Some((at, other));
        }
    }
    let Some((at, other)) = first else {
        return false;
    };
    bytes[from + at..from + at + N].copy_from_slice(other);
    true
}

/// The first position at or after `from` where a prefix of `a` (else of `b`) starts gets
/// that many bytes of the other operand; the longest such prefix is taken.
fn replace_bytes(bytes: &mut [u8], from: usize, a: &[u8], b: &[u8]) -> bool {
    let firsts = (a.first(), b.first());
    let mut at = from;
    while at < bytes.len() {
        // Only where an operand's first byte is can a prefix of it match.
        let next = match firsts {
            (Some(&x), Some(&y)) => memchr::memchr2(x, y, &bytes[at..]),
            (Some(&x), None) | (None, Some(&x)) => memchr::memchr(x, &bytes[at..]),
            (None, None) => None,
        };
        let Some(skip) = next else {
            return false;
        };
        at += skip;
        for (found, other) in [(a, b), (b, a)] {
            let matched = common_prefix(found, &bytes[at..]).min(other.len());
            if matched > 0 {
                bytes[at..at + matched].copy_from_slice(&other[..matched]);
                return true;
            }
        }
        at += 1;
    }
    false
}

fn common_prefix(x: &[u8], y: &[u8]) -> usize {
    x.iter().zip(y).take_while(|(p, q)| p == q).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_of_either_operand_is_replaced_at_the_first_place() {
        let mut input = b"xxMAGyyMAGIC".to_vec();
        assert!(replace_bytes(&mut input, 0, b"MAGIC", b"HELLO"));
        assert_eq!(input, b"xxHELyyMAGIC");
        // From an offset past the first occurrence, and the second operand found.
        let mut input = b"xxMAGyyHELLO".to_vec();
        assert!(replace_bytes(&mut input, 3, b"MAGIC", b"HELLO"));
        assert_eq!(input, b"xxMAGyyMAGIC");
        let mut input = b"nothing here".to_vec();
        assert!(!replace_bytes(&mut input, 0, b"MAGIC", b"QRSTU"));
        assert_eq!(input, b"nothing here");
    }

    /// The first of the four windows found, by a plain scan of every position.
    fn reference<const N: usize>(
        bytes: &[u8],
        from: usize,
        a: [[u8; N]; 2],
        b: [[u8; N]; 2],
        a_is_const: bool,
    ) -> Option<(usize, [u8; N])> {
        let pairs = [(a[0], b[0]), (a[1], b[1]), (b[0], a[0]), (b[1], a[1])];
        let searched = if a_is_const { &pairs[2..] } else { &pairs[..] };
        (from..bytes.len().saturating_sub(N - 1)).find_map(|at| {
            searched
                .iter()
                .find(|(found, _)| bytes[at..at + N] == found[..])
                .map(|(_, other)| (at, *other))
        })
    }

    #[test]
    fn integer_replacement_agrees_with_a_plain_scan() {
        // Inputs over a small alphabet, so operands occur often, overlap and repeat.
        let mut seed = 0x2545_f491_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let input: Vec<u8> = (0..len).map(|_| (next() % 3) as u8).collect();
            let a = (next() % 9) as u16;
            let b = (next() % 9) as u16;
            let both = |x: u16| [x.to_le_bytes(), x.to_be_bytes()];
            let from = (next() % 26) as usize;
            let a_is_const = next() % 2 == 0;
            let mut got = input.clone();
            let replaced = replace_integer(&mut got, from, both(a), both(b), a_is_const);
            let expected = reference(&input, from, both(a), both(b), a_is_const);
            let mut want = input.clone();
            if let Some((at, other)) = expected {
                want[at..at + 2].copy_from_slice(&other);
            }
            assert_eq!(replaced, expected.is_some());
            assert_eq!(
                got, want,
                "input {input:?} from {from} a {a} b {b} const {a_is_const}"
            );
        }
    }

    #[test]
    fn integers_in_either_byte_order_and_not_the_constant_side() {
        let a = 0x1122_3344_u32;
        let b = 0xAABB_CCDD_u32;
        let both = |x: u32| [x.to_ne_bytes(), x.swap_bytes().to_ne_bytes()];
        let mut input = [&[0u8][..], &a.swap_bytes().to_ne_bytes(), &[0]].concat();
        assert!(replace_integer(&mut input, 0, both(a), both(b), false));
        assert_eq!(
            input,
            [&[0u8][..], &b.swap_bytes().to_ne_bytes(), &[0]].concat()
        );
        // `a` is the constant: finding it in the input changes nothing.
        let mut input = a.to_ne_bytes().to_vec();
        assert!(!replace_integer(&mut input, 0, both(a), both(b), true));
        let mut input = b.to_ne_bytes().to_vec();
        assert!(replace_integer(&mut input, 0, both(a), both(b), true));
        assert_eq!(input, a.to_ne_bytes());
    }
}
