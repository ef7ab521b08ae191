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
    // A constant `a` is not searched for.
    let first_searched = if a_is_const { 2 } else { 0 };
    let Some(rest) = bytes.get(from..) else {
        return false;
    };
    let needles = pairs.map(|(found, _)| found);
    let Some((at, which)) = first_window_of(rest, &needles[first_searched..]) else {
        return false;
    };
    let other = &pairs[first_searched + which].1;
    bytes[from + at..from + at + N].copy_from_slice(other);
    true
}

/// The first position of `hay` where an `N`-byte window equals one of `needles` (one to four),
/// and the first needle that does there. One pass for all needles: separate SIMD substring
/// searches, one per needle and replacement, took more of a font-shaping harness's
/// input-to-state stage than its executions (5 KB inputs, about 40 replacements per execution,
/// most operands not in the input).
fn first_window_of<const N: usize>(hay: &[u8], needles: &[[u8; N]]) -> Option<(usize, usize)> {
    debug_assert!((1..=4).contains(&needles.len()));
    let at_position = |at: usize| needles.iter().position(|n| hay[at..at + N] == n[..]);
    let windows = (hay.len() + 1).checked_sub(N)?;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked above.
        return unsafe { first_candidate_avx2(hay, needles, &at_position) };
    }
    (0..windows).find_map(|at| at_position(at).map(|which| (at, which)))
}

/// Positions per step of [`first_candidate_avx2`].
#[cfg(target_arch = "x86_64")]
const LANES: usize = 32;

/// [`first_window_of`] 32 positions at a time: positions whose first (up to) four bytes match
/// a needle's are candidates, checked in order by `at_position`. The last positions (fewer
/// than a step, as all of a short input's) are tested on a zero-padded copy.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn first_candidate_avx2<const N: usize>(
    hay: &[u8],
    needles: &[[u8; N]],
    at_position: &impl Fn(usize) -> Option<usize>,
) -> Option<(usize, usize)> {
    use std::arch::x86_64::_mm256_set1_epi8;
    let prefix = N.min(4);
    // Each needle's first bytes, each byte in every lane.
    let wanted: [[_; 4]; 4] = std::array::from_fn(|j| {
        let needle = needles.get(j).unwrap_or(&needles[0]);
        std::array::from_fn(|k| _mm256_set1_epi8(needle[k.min(N - 1)] as i8))
    });
    let wanted = &wanted[..needles.len()];
    // The candidates of the step at `at`, in order; a candidate's whole window may run past
    // the end (no match there).
    let first_of = |at: usize, mut candidates: u32| {
        while candidates != 0 {
            let position = at + candidates.trailing_zeros() as usize;
            if position + N <= hay.len() {
                if let Some(which) = at_position(position) {
                    return Some((position, which));
                }
            }
            candidates &= candidates - 1;
        }
        None
    };
    let mut at = 0;
    // Loads at `at + k` for k below `prefix` stay inside `hay`.
    while at + LANES + prefix - 1 <= hay.len() {
        // SAFETY: in bounds, as the loop condition says.
        let candidates = unsafe { candidate_mask(hay.as_ptr().add(at), wanted, prefix) };
        if let Some(found) = first_of(at, candidates) {
            return Some(found);
        }
        at += LANES;
    }
    // Fewer than `LANES + prefix - 1` bytes are left (at most 34).
    let mut padded = [0u8; LANES + 3];
    padded[..hay.len() - at].copy_from_slice(&hay[at..]);
    // SAFETY: `padded` holds `LANES + 3` bytes.
    first_of(at, unsafe {
        candidate_mask(padded.as_ptr(), wanted, prefix)
    })
}

/// Bit i set: the `prefix` bytes at `block + i` equal the first bytes of one of `wanted`.
/// `block` must be readable for `LANES + prefix - 1` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn candidate_mask(
    block: *const u8,
    wanted: &[[std::arch::x86_64::__m256i; 4]],
    prefix: usize,
) -> u32 {
    use std::arch::x86_64::{
        _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_setzero_si256,
    };
    // SAFETY: the caller's promise; unaligned loads.
    let windows: [_; 4] =
        std::array::from_fn(|k| unsafe { _mm256_loadu_si256(block.add(k.min(prefix - 1)).cast()) });
    let mut any = _mm256_setzero_si256();
    for needle in wanted {
        let mut all = _mm256_cmpeq_epi8(windows[0], needle[0]);
        for k in 1..prefix {
            all = _mm256_and_si256(all, _mm256_cmpeq_epi8(windows[k], needle[k]));
        }
        any = _mm256_or_si256(any, all);
    }
    _mm256_movemask_epi8(any) as u32
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

    /// Random inputs over a small alphabet, so operands occur often, overlap and repeat; long
    /// enough for several blocks of the vector search and a tail.
    fn agrees_with_a_plain_scan<const N: usize>(alphabet: u64) {
        let mut seed = 0x2545_f491_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 150) as usize;
            let input: Vec<u8> = (0..len).map(|_| (next() % alphabet) as u8).collect();
            let mut operand = || -> [[u8; N]; 2] {
                let x: [u8; N] = std::array::from_fn(|_| (next() % alphabet) as u8);
                let mut swapped = x;
                swapped.reverse();
                [x, swapped]
            };
            let (a, b) = (operand(), operand());
            let from = (next() % 152) as usize;
            let a_is_const = next() % 2 == 0;
            let mut got = input.clone();
            let replaced = replace_integer(&mut got, from, a, b, a_is_const);
            let expected = reference(&input, from, a, b, a_is_const);
            let mut want = input.clone();
            if let Some((at, other)) = expected {
                want[at..at + N].copy_from_slice(&other);
            }
            assert_eq!(replaced, expected.is_some());
            assert_eq!(
                got, want,
                "input {input:?} from {from} a {a:?} b {b:?} const {a_is_const}"
            );
        }
    }

    #[test]
    fn integer_replacement_agrees_with_a_plain_scan() {
        agrees_with_a_plain_scan::<1>(5);
        agrees_with_a_plain_scan::<2>(3);
        agrees_with_a_plain_scan::<4>(2);
        agrees_with_a_plain_scan::<8>(2);
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
