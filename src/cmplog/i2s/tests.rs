//! Input-to-state replacement checked against plain scans, alone and stacked by LibAFL.

use libafl::observers::cmp::CmplogBytes;
use libafl::{
    corpus::CorpusId, inputs::BytesInput, mutators::HavocScheduledMutator, state::NopState,
};
use libafl_bolts::{tuples::tuple_list, ToSlice};

use super::{
    compared::{common_prefix, IntegerPairs},
    *,
};

/// A replacement searched from `from` to the end, as in an input a stack has changed.
fn replace(compared: &Compared, bytes: &mut [u8], from: usize) -> bool {
    let at = compared.first_match(bytes, from, bytes.len());
    at.inspect(|&at| compared.replace_at(bytes, at)).is_some()
}

fn replace_integer<const N: usize>(pairs: &IntegerPairs<N>, bytes: &mut [u8], from: usize) -> bool {
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
