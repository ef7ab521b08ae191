//! One logged comparison as input-to-state replacement sees it: what is searched for in the
//! input (with the SIMD window search of `window_search.rs` for integers), and what replaces
//! it where found.

use libafl::observers::cmp::CmpValues;
use libafl_bolts::ToSlice;

use crate::cmplog::window_search::first_window_of;

/// One logged comparison as replacement sees it: what is searched for in the input, and what
/// replaces it where found.
pub enum Compared<'a> {
    U8(IntegerPairs<1>),
    U16(IntegerPairs<2>),
    U32(IntegerPairs<4>),
    U64(IntegerPairs<8>),
    /// A memory comparison's operands: where a prefix of one starts, that many bytes of the
    /// other are written.
    Bytes(&'a [u8], &'a [u8]),
}

impl<'a> Compared<'a> {
    pub fn of(cmp: &'a CmpValues) -> Self {
        // An integer operand in the input's byte order and swapped.
        macro_rules! integer {
            ($a:expr, $b:expr, $a_is_const:expr) => {
                IntegerPairs::new(
                    [$a.to_ne_bytes(), $a.swap_bytes().to_ne_bytes()],
                    [$b.to_ne_bytes(), $b.swap_bytes().to_ne_bytes()],
                    *$a_is_const,
                )
            };
        }
        match cmp {
            CmpValues::U8((a, b, c)) => Self::U8(integer!(a, b, c)),
            CmpValues::U16((a, b, c)) => Self::U16(integer!(a, b, c)),
            CmpValues::U32((a, b, c)) => Self::U32(integer!(a, b, c)),
            CmpValues::U64((a, b, c)) => Self::U64(integer!(a, b, c)),
            CmpValues::Bytes((a, b)) => Self::Bytes(a.to_slice(), b.to_slice()),
        }
    }

    /// The first position in `lo..hi` where a replacement can be made (`hi` at most the
    /// input's length).
    pub fn first_match(&self, bytes: &[u8], lo: usize, hi: usize) -> Option<usize> {
        match self {
            Self::U8(pairs) => pairs.first_match(bytes, lo, hi),
            Self::U16(pairs) => pairs.first_match(bytes, lo, hi),
            Self::U32(pairs) => pairs.first_match(bytes, lo, hi),
            Self::U64(pairs) => pairs.first_match(bytes, lo, hi),
            // A prefix of one operand, as long as the other allows, is at least one byte.
            Self::Bytes(a, b) => match (a.first(), b.first()) {
                (Some(&x), Some(&y)) => memchr::memchr2(x, y, &bytes[lo..hi]).map(|at| lo + at),
                _ => None,
            },
        }
    }

    /// The replacement at `at`, a position [`Compared::first_match`] found.
    pub fn replace_at(&self, bytes: &mut [u8], at: usize) {
        match self {
            Self::U8(pairs) => pairs.replace_at(bytes, at),
            Self::U16(pairs) => pairs.replace_at(bytes, at),
            Self::U32(pairs) => pairs.replace_at(bytes, at),
            Self::U64(pairs) => pairs.replace_at(bytes, at),
            // The longest prefix of `a` (else of `b`) gets that many bytes of the other.
            Self::Bytes(a, b) => {
                for (found, other) in [(a, b), (b, a)] {
                    let matched = common_prefix(found, &bytes[at..]).min(other.len());
                    if matched > 0 {
                        bytes[at..at + matched].copy_from_slice(&other[..matched]);
                        return;
                    }
                }
            }
        }
    }
}

/// An integer comparison's operands, each as found in the input and as it replaces the
/// other, in the input's byte order and swapped; a constant `a` is not searched for.
pub struct IntegerPairs<const N: usize> {
    /// (found, written instead), in order of preference where two are found at one place.
    pairs: [([u8; N], [u8; N]); 4],
    first_searched: usize,
}

impl<const N: usize> IntegerPairs<N> {
    pub fn new(
        [a, a_swapped]: [[u8; N]; 2],
        [b, b_swapped]: [[u8; N]; 2],
        a_is_const: bool,
    ) -> Self {
        Self {
            pairs: [
                (a, b),
                (a_swapped, b_swapped),
                (b, a),
                (b_swapped, a_swapped),
            ],
            first_searched: if a_is_const { 2 } else { 0 },
        }
    }

    pub fn searched(&self) -> &[([u8; N], [u8; N])] {
        &self.pairs[self.first_searched..]
    }

    /// The first window starting in `lo..hi` that holds a searched operand.
    pub fn first_match(&self, bytes: &[u8], lo: usize, hi: usize) -> Option<usize> {
        let needles: [[u8; N]; 4] = self.pairs.map(|(found, _)| found);
        let end = bytes.len().min(hi + N - 1);
        first_window_of(&bytes[lo..end], &needles[self.first_searched..]).map(|(at, _)| lo + at)
    }

    pub fn replace_at(&self, bytes: &mut [u8], at: usize) {
        let window = &mut bytes[at..at + N];
        if let Some((_, other)) = self.searched().iter().find(|(found, _)| window == found) {
            window.copy_from_slice(other);
        }
    }
}

pub fn common_prefix(x: &[u8], y: &[u8]) -> usize {
    x.iter().zip(y).take_while(|(p, q)| p == q).count()
}
