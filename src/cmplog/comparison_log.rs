//! The comparison log observer: LibAFL's `CmpLogObserver`, with the log's 65,536 headers
//! reset and read only where the last traced execution logged something.
//!
//! LibAFL resets every header before each traced execution (256 KiB) and reads every one after
//! it, an index at a time: on a fast target (zlib, 500k executions/s, an entry traced every
//! fourth time it is fuzzed) the two walks took about a tenth of the client's time. Only traced
//! executions write the log (the hooks log while tracing is on; fork mode's template passes
//! that on per input), so one walk over the headers eight bytes at a time finds what was hit,
//! and the next reset clears only that.

use std::borrow::Cow;

use libafl::{
    executors::ExitKind,
    observers::{
        cmp::{CmpMap, CmpObserver, CmpValues, CmpValuesMetadata},
        Observer,
    },
    Error, HasMetadata,
};
use libafl_bolts::Named;
use libafl_targets::{CmpLogObserver, CMPLOG_MAP_W};

use crate::target::comparison_hooks;

/// One header of the log (hits, shape, kind), as `libafl_targets` lays it out.
type Header = u32;

pub struct ComparisonLog {
    inner: CmpLogObserver,
    /// The headers the last traced execution hit; None: not known, reset them all.
    hit: Option<Vec<usize>>,
}

impl ComparisonLog {
    pub fn new(inner: CmpLogObserver) -> Self {
        Self { inner, hit: None }
    }

    fn headers(&mut self) -> &mut [Header; CMPLOG_MAP_W] {
        let map = std::ptr::from_mut(self.inner.cmp_map_mut());
        // SAFETY: `CmpLogMap` is `repr(C)` and starts with its `CMPLOG_MAP_W` headers of
        // 4 bytes each (`repr(C)` u16, u8, u8); it is 8-aligned (its values hold u64s); the
        // borrow of `self` keeps the map borrowed.
        unsafe { &mut *map.cast::<[Header; CMPLOG_MAP_W]>() }
    }
}

/// The indices of the headers that are not zero, found eight bytes at a time.
fn hit_headers(headers: &[Header; CMPLOG_MAP_W]) -> Vec<usize> {
    let mut hit = Vec::new();
    for (pair, words) in headers.chunks_exact(2).enumerate() {
        if words[0] | words[1] != 0 {
            hit.extend((0..2).filter(|i| words[*i] != 0).map(|i| pair * 2 + i));
        }
    }
    hit
}

/// What `CmpValuesMetadata::add_from` keeps of one header: its logged values, unless they
/// count up or down by one from execution to execution (a loop counter).
fn values_of(map: &impl CmpMap, index: usize, into: &mut Vec<CmpValues>) {
    let executions = map.usable_executions_for(index);
    if executions == 0 {
        return;
    }
    let values = (0..executions).filter_map(|j| map.values_of(index, j));
    if executions > 4 {
        let mut steps = [0usize; 4];
        let pairs = values.clone().filter_map(|v| v.to_u64_tuple());
        for (last, now) in pairs.clone().zip(pairs.skip(1)) {
            steps[0] += usize::from(last.0.wrapping_add(1) == now.0);
            steps[1] += usize::from(last.1.wrapping_add(1) == now.1);
            steps[2] += usize::from(last.0.wrapping_sub(1) == now.0);
            steps[3] += usize::from(last.1.wrapping_sub(1) == now.1);
        }
        // `executions - 2`: the log wraps (8 9 10 3 4 5 6 7).
        if steps.iter().any(|&s| s >= executions - 2) {
            return;
        }
    }
    for value in values {
        let narrowed = narrowed(&value);
        into.push(value);
        into.extend(narrowed);
    }
}

/// A 32- or 64-bit comparison once more at 16 bits where both operands fit and one needs both
/// bytes: a character decoded into an `int` (a regular expression's UTF-16 code unit) or a
/// 16-bit field read into an `unsigned` (a font table's) is compared at 32 bits or more but
/// lies in the input as two bytes, where input-to-state replacement, which searches for as many
/// bytes as the comparison's width, never finds it. AFL++'s comparison solving tries narrower
/// widths too. Not for operands that fit in one byte: as two bytes (the byte and a zero) or
/// one, they are found nearly anywhere, and side by side stb_image lost 4.5-6.5% of its edges
/// to the replacements made there.
fn narrowed(cmp: &CmpValues) -> Option<CmpValues> {
    let (a, b, a_is_const) = cmp.to_u64_tuple()?;
    let wide = matches!(cmp, CmpValues::U32(_) | CmpValues::U64(_));
    #[allow(clippy::cast_possible_truncation)] // Both operands fit: checked just before.
    (wide && (0x100..=0xffff).contains(&a.max(b)))
        .then_some(CmpValues::U16((a as u16, b as u16, a_is_const)))
}

impl Named for ComparisonLog {
    fn name(&self) -> &Cow<'static, str> {
        self.inner.name()
    }
}

impl<I, S: HasMetadata> Observer<I, S> for ComparisonLog {
    fn pre_exec(&mut self, state: &mut S, input: &I) -> Result<(), Error> {
        match self.hit.take() {
            Some(hit) => {
                let headers = self.headers();
                for index in hit {
                    headers[index] = 0;
                }
                comparison_hooks::set_tracing(true);
                Ok(())
            }
            None => {
                self.inner.pre_exec(state, input)?;
                comparison_hooks::set_tracing(true);
                Ok(())
            }
        }
    }

    fn post_exec(&mut self, state: &mut S, _input: &I, _exit_kind: &ExitKind) -> Result<(), Error> {
        comparison_hooks::set_tracing(false);
        let hit = hit_headers(self.headers());
        let map = self.inner.cmp_map();
        let meta = state.metadata_or_insert_with(CmpValuesMetadata::new);
        meta.list.clear();
        for &index in &hit {
            values_of(map, index, &mut meta.list);
        }
        self.hit = Some(hit);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use libafl_targets::CMPLOG_ENABLED;

    use super::*;

    #[test]
    fn a_wide_comparison_of_16_bit_values_is_kept_also_at_16_bits() {
        let cases = [
            // A UTF-16 code unit compared as a 32-bit code point against '['.
            (
                CmpValues::U32((0x3f28, 0x5b, false)),
                Some(CmpValues::U16((0x3f28, 0x5b, false))),
            ),
            (
                CmpValues::U64((0x141, 0x5b, true)),
                Some(CmpValues::U16((0x141, 0x5b, true))),
            ),
            (CmpValues::U32((0x41, 0x5b, false)), None),
            (CmpValues::U16((0x41, 0x5b, false)), None),
            (CmpValues::U32((0x1_0000, 0x5b, false)), None),
            (CmpValues::U8((1, 2, false)), None),
        ];
        for (logged, expected) in cases {
            assert_eq!(narrowed(&logged), expected, "{logged:?}");
        }
    }

    #[test]
    fn hit_headers_are_found_in_either_half_of_a_word() {
        let mut headers = Box::new([0 as Header; CMPLOG_MAP_W]);
        headers[0] = 1;
        headers[7] = 0x0100_0003;
        headers[CMPLOG_MAP_W - 1] = 2;
        assert_eq!(hit_headers(&headers), [0, 7, CMPLOG_MAP_W - 1]);
    }

    unsafe extern "C" {
        /// The in-process switch hook (src/target/hooks.c) that instrumented switches call.
        fn lafuzz_trace_switch(val: u64, cases: *const u64);
    }

    /// The logged values of every site of the in-process log that was hit.
    fn logged() -> Vec<Vec<CmpValues>> {
        // SAFETY: the log is libafl_targets' static; no other test of this crate writes it.
        let map = unsafe { &*libafl_targets::CMPLOG_MAP_PTR };
        // SAFETY: the map starts with its headers (see `ComparisonLog::headers`).
        let headers = unsafe { &*std::ptr::from_ref(map).cast::<[Header; CMPLOG_MAP_W]>() };
        hit_headers(headers)
            .into_iter()
            .map(|index| {
                (0..map.usable_executions_for(index))
                    .filter_map(|j| map.values_of(index, j))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_switch_in_a_loop_logs_each_case_for_its_first_executions_only() {
        // Three 32-bit cases: 10, 20 and 30.
        let cases: [u64; 5] = [3, 32, 10, 20, 30];
        // One call site (its address tells the switch apart), as a switch in a loop.
        #[inline(never)]
        fn switch_on(val: u64, cases: &[u64; 5]) {
            // SAFETY: a valid case table.
            unsafe { lafuzz_trace_switch(val, cases.as_ptr()) };
            // Not a tail call: the hook's return address stays in this function.
            std::hint::black_box(val);
        }
        let run = |values: std::ops::Range<u64>| values.for_each(|val| switch_on(val, &cases));
        // SAFETY: the map is libafl_targets' static; the flag is read by the hook only.
        unsafe { (*libafl_targets::CMPLOG_MAP_PTR).reset().unwrap() };
        run(0..5);
        assert!(logged().is_empty(), "nothing logged outside tracing runs");
        // SAFETY: a byte the hook reads; this test is the only one that runs the hook.
        unsafe { CMPLOG_ENABLED = 1 };
        run(100..140);
        // SAFETY: as above.
        unsafe { CMPLOG_ENABLED = 0 };
        let mut sites = logged();
        // While the flag is on, the interceptors also log the memcmp and strcmp calls of the
        // other tests' threads (a clean-clone CI run saw one).
        sites.retain(|values| !matches!(values[0], CmpValues::Bytes(_)));
        sites.sort_by_key(|values| format!("{:?}", values[0]));
        assert_eq!(sites.len(), 3, "one site per case: {sites:?}");
        for (site, case) in sites.iter().zip([10u32, 20, 30]) {
            let expected: Vec<CmpValues> = (100..132)
                .map(|val| CmpValues::U32((case, val, true)))
                .collect();
            assert_eq!(
                *site, expected,
                "the first 32 executions, the case as the constant"
            );
        }
    }
}
