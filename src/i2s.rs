//! Input-to-state replacement: one logged comparison, picked at random, has one operand found
//! in the input from a random offset on, and the first place found gets the other operand.
//!
//! The same choices as LibAFL's `I2SRandReplace` stacked by its `HavocScheduledMutator`, drawn
//! from the random stream in the same order, so campaigns behave the same (a test compares
//! whole stages with plain scans stacked by LibAFL). What differs is the cost: for a logged
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
use libafl_bolts::{rands::Rand, Named, ToSlice};

use crate::window_search::first_window_of;

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

/// One logged comparison as replacement sees it: what is searched for in the input, and what
/// replaces it where found.
enum Compared<'a> {
    U8(IntegerPairs<1>),
    U16(IntegerPairs<2>),
    U32(IntegerPairs<4>),
    U64(IntegerPairs<8>),
    /// A memory comparison's operands: where a prefix of one starts, that many bytes of the
    /// other are written.
    Bytes(&'a [u8], &'a [u8]),
}

impl<'a> Compared<'a> {
    fn of(cmp: &'a CmpValues) -> Self {
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
    fn first_match(&self, bytes: &[u8], lo: usize, hi: usize) -> Option<usize> {
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
    fn replace_at(&self, bytes: &mut [u8], at: usize) {
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
struct IntegerPairs<const N: usize> {
    /// (found, written instead), in order of preference where two are found at one place.
    pairs: [([u8; N], [u8; N]); 4],
    first_searched: usize,
}

impl<const N: usize> IntegerPairs<N> {
    fn new([a, a_swapped]: [[u8; N]; 2], [b, b_swapped]: [[u8; N]; 2], a_is_const: bool) -> Self {
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

    fn searched(&self) -> &[([u8; N], [u8; N])] {
        &self.pairs[self.first_searched..]
    }

    /// The first window starting in `lo..hi` that holds a searched operand.
    fn first_match(&self, bytes: &[u8], lo: usize, hi: usize) -> Option<usize> {
        let needles: [[u8; N]; 4] = self.pairs.map(|(found, _)| found);
        let end = bytes.len().min(hi + N - 1);
        first_window_of(&bytes[lo..end], &needles[self.first_searched..]).map(|(at, _)| lo + at)
    }

    fn replace_at(&self, bytes: &mut [u8], at: usize) {
        let window = &mut bytes[at..at + N];
        if let Some((_, other)) = self.searched().iter().find(|(found, _)| window == found) {
            window.copy_from_slice(other);
        }
    }
}

fn common_prefix(x: &[u8], y: &[u8]) -> usize {
    x.iter().zip(y).take_while(|(p, q)| p == q).count()
}

#[cfg(test)]
mod tests {
    use libafl::observers::cmp::CmplogBytes;
    use libafl::{
        corpus::CorpusId, inputs::BytesInput, mutators::HavocScheduledMutator, state::NopState,
    };
    use libafl_bolts::tuples::tuple_list;

    use super::*;

    /// A replacement searched from `from` to the end, as in an input a stack has changed.
    fn replace(compared: &Compared, bytes: &mut [u8], from: usize) -> bool {
        let at = compared.first_match(bytes, from, bytes.len());
        at.inspect(|&at| compared.replace_at(bytes, at)).is_some()
    }

    fn replace_integer<const N: usize>(
        pairs: &IntegerPairs<N>,
        bytes: &mut [u8],
        from: usize,
    ) -> bool {
        let at = pairs.first_match(bytes, from, bytes.len());
        at.inspect(|&at| pairs.replace_at(bytes, at)).is_some()
    }

    fn cmplog_bytes(b: &[u8]) -> CmplogBytes {
        let mut buf = [0u8; 32];
        buf[..b.len()].copy_from_slice(b);
        CmplogBytes::from_buf_and_len(buf, b.len() as u8)
    }

    #[test]
    fn longest_prefix_of_either_operand_is_replaced_at_the_first_place() {
        let (magic, hello) = (cmplog_bytes(b"MAGIC"), cmplog_bytes(b"HELLO"));
        let compared = Compared::Bytes(magic.to_slice(), hello.to_slice());
        let mut input = b"xxMAGyyMAGIC".to_vec();
        assert!(replace(&compared, &mut input, 0));
        assert_eq!(input, b"xxHELyyMAGIC");
        // From an offset past the first occurrence, and the second operand found.
        let mut input = b"xxMAGyyHELLO".to_vec();
        assert!(replace(&compared, &mut input, 3));
        assert_eq!(input, b"xxMAGyyMAGIC");
        let mut input = b"nothing here".to_vec();
        let qrstu = cmplog_bytes(b"QRSTU");
        assert!(!replace(
            &Compared::Bytes(magic.to_slice(), qrstu.to_slice()),
            &mut input,
            0
        ));
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

    /// A xorshift stream for test data.
    fn stream(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Random inputs over a small alphabet, so operands occur often, overlap and repeat; long
    /// enough for several blocks of the vector search and a tail.
    fn agrees_with_a_plain_scan<const N: usize>(alphabet: u64) {
        let mut next = stream(0x2545_f491);
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
            let a_is_const = next().is_multiple_of(2);
            let mut got = input.clone();
            let pairs = IntegerPairs::new(a, b, a_is_const);
            // Replacement draws `from` below the input's length.
            let replaced = from < len && replace_integer(&pairs, &mut got, from);
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
        assert!(replace_integer(
            &IntegerPairs::new(both(a), both(b), false),
            &mut input,
            0
        ));
        assert_eq!(
            input,
            [&[0u8][..], &b.swap_bytes().to_ne_bytes(), &[0]].concat()
        );
        // `a` is the constant: finding it in the input changes nothing.
        let constant_a = IntegerPairs::new(both(a), both(b), true);
        let mut input = a.to_ne_bytes().to_vec();
        assert!(!replace_integer(&constant_a, &mut input, 0));
        let mut input = b.to_ne_bytes().to_vec();
        assert!(replace_integer(&constant_a, &mut input, 0));
        assert_eq!(input, a.to_ne_bytes());
    }

    /// LibAFL's `I2SRandReplace` choices with a plain scan per replacement, for
    /// `HavocScheduledMutator` to stack as LibAFL does.
    struct PlainReplace;

    impl Mutator<BytesInput, NopState<BytesInput>> for PlainReplace {
        fn mutate(
            &mut self,
            state: &mut NopState<BytesInput>,
            input: &mut BytesInput,
        ) -> Result<MutationResult, Error> {
            let Some(size) = NonZero::new(input.mutator_bytes().len()) else {
                return Ok(MutationResult::Skipped);
            };
            let list = state.metadata::<CmpValuesMetadata>()?.list.clone();
            let Some(count) = NonZero::new(list.len()) else {
                return Ok(MutationResult::Skipped);
            };
            let pick = state.rand_mut().below(count);
            let from = state.rand_mut().below(size);
            let bytes = input.mutator_bytes_mut();
            macro_rules! integer {
                ($a:expr, $b:expr, $c:expr) => {{
                    let both = |x: [u8; _]| {
                        let mut swapped = x;
                        swapped.reverse();
                        [x, swapped]
                    };
                    let found = reference(bytes, from, both($a), both($b), $c);
                    found.map(|(at, other)| bytes[at..at + other.len()].copy_from_slice(&other))
                }};
            }
            let replaced = match &list[pick] {
                CmpValues::U8((a, b, c)) => integer!(a.to_ne_bytes(), b.to_ne_bytes(), *c),
                CmpValues::U16((a, b, c)) => integer!(a.to_ne_bytes(), b.to_ne_bytes(), *c),
                CmpValues::U32((a, b, c)) => integer!(a.to_ne_bytes(), b.to_ne_bytes(), *c),
                CmpValues::U64((a, b, c)) => integer!(a.to_ne_bytes(), b.to_ne_bytes(), *c),
                CmpValues::Bytes((a, b)) => (from..bytes.len()).find_map(|at| {
                    [(a, b), (b, a)].into_iter().find_map(|(found, other)| {
                        let (found, other) = (found.to_slice(), other.to_slice());
                        let matched = common_prefix(found, &bytes[at..]).min(other.len());
                        (matched > 0)
                            .then(|| bytes[at..at + matched].copy_from_slice(&other[..matched]))
                    })
                }),
            };
            Ok(if replaced.is_some() {
                MutationResult::Mutated
            } else {
                MutationResult::Skipped
            })
        }

        fn post_exec(
            &mut self,
            _: &mut NopState<BytesInput>,
            _: Option<CorpusId>,
        ) -> Result<(), Error> {
            Ok(())
        }
    }

    impl Named for PlainReplace {
        fn name(&self) -> &Cow<'static, str> {
            static NAME: Cow<'static, str> = Cow::Borrowed("PlainReplace");
            &NAME
        }
    }

    /// Whole stages (one base input, one comparison list, many stacks from copies of the base)
    /// give the same inputs, from the same random stream, as plain scans stacked by LibAFL.
    #[test]
    fn stages_agree_with_plain_scans_stacked_by_libafl() {
        let mut next = stream(0x9e37_79b9);
        let mut ours = I2SReplace::default();
        let mut plain = HavocScheduledMutator::new(tuple_list!(PlainReplace));
        for stage in 0..400 {
            let alphabet = 2 + next() % 4;
            // Bytes over a small alphabet, so operands occur in the input.
            let mut bytes =
                |n: usize| -> Vec<u8> { (0..n).map(|_| (next() % alphabet) as u8).collect() };
            let len = if stage % 10 == 0 {
                300
            } else {
                bytes(1)[0] as usize * 20
            };
            let base = bytes(len);
            let list: Vec<CmpValues> = (0..bytes(1)[0] * 8)
                .map(|_| {
                    let kind = bytes(1)[0] + bytes(1)[0];
                    let c = bytes(1)[0].is_multiple_of(2);
                    let mut x = || u64::from_ne_bytes(bytes(8).try_into().unwrap());
                    match kind % 5 {
                        0 => CmpValues::U8((x() as u8, x() as u8, c)),
                        1 => CmpValues::U16((x() as u16, x() as u16, c)),
                        2 => CmpValues::U32((x() as u32, x() as u32, c)),
                        3 => CmpValues::U64((x(), x(), c)),
                        _ => {
                            let (n, m) = (bytes(1)[0] as usize * 2, bytes(1)[0] as usize);
                            CmpValues::Bytes((cmplog_bytes(&bytes(n)), cmplog_bytes(&bytes(m))))
                        }
                    }
                })
                .collect();
            let mut states: [NopState<BytesInput>; 2] = [NopState::new(), NopState::new()];
            for state in &mut states {
                state.rand_mut().set_seed(stage);
                state.add_metadata(CmpValuesMetadata { list: list.clone() });
            }
            ours.forget();
            for _ in 0..20 {
                let mut got = BytesInput::new(base.clone());
                let mut want = BytesInput::new(base.clone());
                let got_result = ours.mutate(&mut states[0], &mut got).unwrap();
                let want_result = plain.mutate(&mut states[1], &mut want).unwrap();
                assert_eq!(got_result, want_result, "stage {stage}");
                assert_eq!(got, want, "stage {stage}");
            }
        }
    }
}
