//! Dictionary tokens learned from comparisons: after a tracing run, the operands the target
//! compared its input against that are not in the input (magic values, keywords) become tokens
//! for the token mutators. The count is reported as `cmplog_tokens`.

use std::collections::HashMap;

use libafl::{
    events::EventFirer,
    inputs::{BytesInput, HasTargetBytes},
    mutators::Tokens,
    observers::cmp::{CmpValues, CmpValuesMetadata},
    stages::{Restartable, Stage},
    state::{HasCurrentTestcase, HasExecutions},
    Error, HasMetadata,
};
use libafl_bolts::ToSlice;

use crate::{cmplog::window_search::FoundIntegers, platform::user_stats};

/// The user statistic (and `fuzzer_stats` key) counting tokens learned from comparisons.
pub const LEARNED_TOKENS_STAT: &str = "cmplog_tokens";

/// At most this many learned tokens are kept: enough for a parser's keywords and magic values.
const MAX_LEARNED_TOKENS: usize = 4096;

/// Which operands occur in one input. Integers by one pass over the input's windows of their
/// size, looking each up among the trace's operands ([`FoundIntegers`]); byte strings by a
/// SIMD substring search per distinct string, remembered, since a trace logs the same operands
/// over and over. (Scanning the whole input window by window for every logged comparison took
/// most of a comparison-heavy target's time: on a font-shaping harness with 22 KB inputs, 0.1x
/// the speed of the build without comparison logging.)
struct InputSearch<'a> {
    input: &'a [u8],
    words: FoundIntegers<u32>,
    double_words: FoundIntegers<u64>,
    known: HashMap<Vec<u8>, bool>,
}

impl<'a> InputSearch<'a> {
    /// The search of `input` for the operands of `cmps`.
    fn new(input: &'a [u8], cmps: &[CmpValues]) -> Self {
        let (mut words, mut double_words) = (Vec::new(), Vec::new());
        for cmp in cmps {
            match cmp {
                CmpValues::U32((a, b, false)) => words.extend([a.to_le(), b.to_le()]),
                CmpValues::U64((a, b, false)) => double_words.extend([a.to_le(), b.to_le()]),
                _ => {}
            }
        }
        Self {
            input,
            words: FoundIntegers::new(input, words, u32::from_ne_bytes),
            double_words: FoundIntegers::new(input, double_words, u64::from_ne_bytes),
            known: HashMap::new(),
        }
    }

    fn contains_u32(&self, value: u32) -> bool {
        self.words.contains(value)
    }

    fn contains_u64(&self, value: u64) -> bool {
        self.double_words.contains(value)
    }

    fn contains(&mut self, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return false;
        }
        if let Some(&found) = self.known.get(bytes) {
            return found;
        }
        let found = memchr::memmem::find(self.input, bytes).is_some();
        self.known.insert(bytes.to_vec(), found);
        found
    }
}

/// Tokens of one repeated byte (zeros, padding) teach nothing.
fn is_token(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes.iter().any(|&b| b != bytes[0])
}

/// The operand of a logged comparison that did not come from the input, if one did: the value
/// the target compares input against, worth keeping as a dictionary token.
fn token_of(cmp: &CmpValues, input: &mut InputSearch<'_>) -> Option<Vec<u8>> {
    // The operand not found when the other one is.
    fn other<T>(a: T, b: T, a_found: bool, b_found: bool) -> Option<T> {
        match (a_found, b_found) {
            (true, false) => Some(b),
            (false, true) => Some(a),
            _ => None,
        }
    }
    let token = match cmp {
        CmpValues::U32((a, _, true)) => a.to_le_bytes().to_vec(),
        CmpValues::U64((a, _, true)) => a.to_le_bytes().to_vec(),
        CmpValues::U32((a, b, false)) => {
            let (a_found, b_found) = (input.contains_u32(a.to_le()), input.contains_u32(b.to_le()));
            other(a, b, a_found, b_found)?.to_le_bytes().to_vec()
        }
        CmpValues::U64((a, b, false)) => {
            let (a_found, b_found) = (input.contains_u64(a.to_le()), input.contains_u64(b.to_le()));
            other(a, b, a_found, b_found)?.to_le_bytes().to_vec()
        }
        CmpValues::Bytes((a, b)) => {
            let (a, b) = (a.to_slice(), b.to_slice());
            let (a_found, b_found) = (input.contains(a), input.contains(b));
            other(a, b, a_found, b_found)?.to_vec()
        }
        _ => return None,
    };
    is_token(&token).then_some(token)
}

/// Counts the tokens learned so far by this client (kept in the state across restarts).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct LearnedTokens {
    pub count: u64,
}
libafl_bolts::impl_serdeany!(LearnedTokens);

/// After an entry's first tracing run: the comparison operands that are not in the input
/// become tokens for the token mutators; the count is reported as `cmplog_tokens`.
#[derive(Debug, Default)]
pub struct LearnTokensStage;

impl<E, EM, S, Z> Stage<E, EM, S, Z> for LearnTokensStage
where
    S: HasMetadata + HasCurrentTestcase<BytesInput> + HasExecutions,
    EM: EventFirer<BytesInput, S>,
{
    fn perform(
        &mut self,
        _fuzzer: &mut Z,
        _executor: &mut E,
        state: &mut S,
        manager: &mut EM,
    ) -> Result<(), Error> {
        // A full dictionary learns nothing: no need to look at the trace. Nor does a trace of
        // an entry traced before, which logs the same comparisons: in 30 s, 21,930 such
        // traces on zstd, 33,167 on libpng, 4,091 on zlib and 725 on harfbuzz learned no
        // token (their first traces learned 92-3,640), and looking took zstd 2% of its time.
        if state.current_testcase()?.scheduled_count() > 0
            || state
                .metadata_map()
                .get::<Tokens>()
                .is_some_and(|tokens| tokens.len() >= MAX_LEARNED_TOKENS)
        {
            return Ok(());
        }
        let input = state.current_input_cloned()?;
        let input = input.target_bytes();
        let found: Vec<Vec<u8>> = match state.metadata_map().get::<CmpValuesMetadata>() {
            Some(cmps) => {
                let mut search = InputSearch::new(&input, &cmps.list);
                cmps.list
                    .iter()
                    .filter_map(|c| token_of(c, &mut search))
                    .collect()
            }
            None => return Ok(()),
        };
        let tokens = state.metadata_or_insert_with(Tokens::new);
        let mut learned = 0;
        // A trace repeats its operands: each is offered to the dictionary (which copies it)
        // once.
        let mut offered = std::collections::HashSet::new();
        for token in &found {
            if tokens.len() >= MAX_LEARNED_TOKENS {
                break;
            }
            if offered.insert(token) && tokens.add_token(token) {
                learned += 1;
            }
        }
        if learned == 0 {
            return Ok(());
        }
        state.metadata_or_insert_with(LearnedTokens::default).count += learned;
        report_learned_tokens(state, manager)
    }
}

/// Sends the number of tokens this client learned to the monitor (`cmplog_tokens`).
pub fn report_learned_tokens<EM, S>(state: &mut S, manager: &mut EM) -> Result<(), Error>
where
    S: HasMetadata + HasExecutions,
    EM: EventFirer<BytesInput, S>,
{
    let Some(total) = state.metadata_map().get::<LearnedTokens>().map(|l| l.count) else {
        return Ok(());
    };
    user_stats::report_number(state, manager, LEARNED_TOKENS_STAT, total)
}

impl<S> Restartable<S> for LearnTokensStage {
    fn should_restart(&mut self, _state: &mut S) -> Result<bool, Error> {
        Ok(true)
    }
    fn clear_progress(&mut self, _state: &mut S) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use libafl::observers::cmp::CmplogBytes;

    use super::*;

    fn bytes(b: &[u8]) -> CmplogBytes {
        let mut buf = [0u8; 32];
        buf[..b.len()].copy_from_slice(b);
        CmplogBytes::from_buf_and_len(buf, b.len() as u8)
    }

    /// The token `cmp` teaches in a trace of `hello WORLD` that logged `cmp` and `others`.
    fn token(cmp: &CmpValues, others: &[CmpValues]) -> Option<Vec<u8>> {
        let mut cmps = others.to_vec();
        cmps.push(cmp.clone());
        token_of(cmp, &mut InputSearch::new(b"hello WORLD", &cmps))
    }

    #[test]
    fn constants_become_tokens_and_input_bytes_do_not() {
        let cmp = CmpValues::Bytes((bytes(b"WORLD"), bytes(b"MAGIC")));
        assert_eq!(token(&cmp, &[]), Some(b"MAGIC".to_vec()));
        let cmp = CmpValues::U32((0xdead_beef, 0x4c52_4f57, true));
        assert_eq!(
            token(&cmp, &[]),
            Some(0xdead_beef_u32.to_le_bytes().to_vec())
        );
        // Integers: the side not in the input (little-endian, as the target reads it), also
        // among 10,000 other operands.
        let worl = u32::from_le_bytes(*b"WORL");
        let others: Vec<CmpValues> = (0..5000_u32)
            .map(|n| CmpValues::U32((n.wrapping_mul(0x0101_0101), n ^ 0x5a5a_0000, false)))
            .collect();
        for others in [&[][..], &others] {
            let cmp = CmpValues::U32((worl, 0x1234_5678, false));
            assert_eq!(token(&cmp, others), Some(b"\x78\x56\x34\x12".to_vec()));
            let cmp = CmpValues::U32((0x1234_5678, worl, false));
            assert_eq!(token(&cmp, others), Some(b"\x78\x56\x34\x12".to_vec()));
        }
        let lo_world = u64::from_le_bytes(*b"lo WORLD");
        let cmp = CmpValues::U64((0x0102_0304_0506_0708, lo_world, false));
        assert_eq!(
            token(&cmp, &[]),
            Some(0x0102_0304_0506_0708_u64.to_le_bytes().to_vec())
        );
        // Both sides in the input: nothing to learn.
        let cmp = CmpValues::U32((worl, u32::from_le_bytes(*b"hell"), false));
        assert_eq!(token(&cmp, &[]), None);
        // Neither side in the input: cannot tell which is the constant.
        let cmp = CmpValues::Bytes((bytes(b"AAAB"), bytes(b"CCCD")));
        assert_eq!(token(&cmp, &[]), None);
        let cmp = CmpValues::U64((1, 2, false));
        assert_eq!(token(&cmp, &[]), None);
        // Zeros teach nothing.
        let cmp = CmpValues::U64((0, 7, true));
        assert_eq!(token(&cmp, &[]), None);
    }
}
