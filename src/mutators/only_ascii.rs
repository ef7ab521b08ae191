//! `--only-ascii` (libFuzzer's `-only_ascii=1`) as a wrapper around a mutator.

use std::borrow::Cow;

use libafl::{
    corpus::CorpusId,
    inputs::{BytesInput, HasMutatorBytes},
    mutators::{MutationResult, Mutator},
    Error,
};
use libafl_bolts::Named;

use crate::types::State;

/// `--only-ascii` (libFuzzer's `-only_ascii=1`): every mutated input is made printable ASCII
/// or whitespace after mutation, as libFuzzer does (high bit cleared, other bytes to spaces).
/// Off, it costs one branch per input.
pub struct OnlyAscii<M> {
    inner: M,
    on: bool,
}

impl<M> OnlyAscii<M> {
    pub fn new(inner: M, on: bool) -> Self {
        Self { inner, on }
    }

    pub fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }
}

/// libFuzzer's `ToASCII` for one byte.
fn to_ascii(byte: u8) -> u8 {
    let byte = byte & 0x7f;
    if byte.is_ascii_graphic() || byte == b' ' || byte.is_ascii_whitespace() || byte == 0x0b {
        byte
    } else {
        b' '
    }
}

impl<M: Named> Named for OnlyAscii<M> {
    fn name(&self) -> &Cow<'static, str> {
        self.inner.name()
    }
}

impl<M: Mutator<BytesInput, State>> Mutator<BytesInput, State> for OnlyAscii<M> {
    fn mutate(
        &mut self,
        state: &mut State,
        input: &mut BytesInput,
    ) -> Result<MutationResult, Error> {
        let result = self.inner.mutate(state, input)?;
        if self.on {
            input
                .mutator_bytes_mut()
                .iter_mut()
                .for_each(|b| *b = to_ascii(*b));
        }
        Ok(result)
    }

    fn post_exec(
        &mut self,
        state: &mut State,
        new_corpus_id: Option<CorpusId>,
    ) -> Result<(), Error> {
        self.inner.post_exec(state, new_corpus_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_become_printable_or_whitespace() {
        assert_eq!(to_ascii(b'a'), b'a');
        assert_eq!(to_ascii(b'\n'), b'\n');
        assert_eq!(to_ascii(0xc1), b'A');
        assert_eq!(to_ascii(0x01), b' ');
        assert_eq!(to_ascii(0x7f), b' ');
    }
}
