//! Searches of an input's windows: where one of a few short byte strings of one length first
//! occurs (run by input-to-state replacement, [`crate::cmplog::i2s`], for every integer operand
//! it tries), and which of a trace's integer operands occur at all (run by
//! [`crate::cmplog::learned_tokens`] once per trace).

/// The first position of `hay` where an `N`-byte window equals one of `needles` (one to four),
/// and the first needle that does there. One pass for all needles: separate SIMD substring
/// searches, one per needle and replacement, took more of a font-shaping harness's
/// input-to-state stage than its executions (5 KB inputs, about 40 replacements per execution,
/// most operands not in the input).
pub fn first_window_of<const N: usize>(hay: &[u8], needles: &[[u8; N]]) -> Option<(usize, usize)> {
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
///
/// # Safety
/// The processor must have AVX2.
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
///
/// # Safety
/// The processor must have AVX2, and `block` be readable for `LANES + prefix - 1` bytes.
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

/// The integer operands of a trace that are windows of the input. The windows are checked
/// against a filter of the operands (a bit per hash), so nearly every window costs one load.
/// Sorting the windows instead, for a binary search per operand, took 2.6% of a font-shaping
/// harness's samples in a 15 s profile (22 KB inputs), 0.9% in a 20 s one, where this pass
/// took 0.27%.
pub struct FoundIntegers<T> {
    found: Vec<T>,
}

/// Bits in the operand filter: a trace's few thousand operands leave most of them clear.
const FILTER_BITS: usize = 1 << 16;

fn filter_bit(value: u64) -> usize {
    // Fibonacci hashing: the top 16 bits of the product.
    (value.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as usize
}

impl<T: Copy + Ord + Into<u64>> FoundIntegers<T> {
    /// Which of `operands` the input has as an `N`-byte window (`value_of`: native byte order).
    pub fn new<const N: usize>(
        input: &[u8],
        mut operands: Vec<T>,
        value_of: fn([u8; N]) -> T,
    ) -> Self {
        let mut found = Vec::new();
        if !operands.is_empty() {
            operands.sort_unstable();
            operands.dedup();
            let mut filter = vec![0_u64; FILTER_BITS / 64];
            for &operand in &operands {
                let bit = filter_bit(operand.into());
                filter[bit / 64] |= 1 << (bit % 64);
            }
            for window in input.windows(N) {
                let value = value_of(window.try_into().expect("N bytes"));
                let bit = filter_bit(value.into());
                if filter[bit / 64] & (1 << (bit % 64)) != 0
                    && operands.binary_search(&value).is_ok()
                {
                    found.push(value);
                }
            }
            found.sort_unstable();
            found.dedup();
        }
        Self { found }
    }

    pub fn contains(&self, value: T) -> bool {
        self.found.binary_search(&value).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::FoundIntegers;

    #[test]
    fn every_window_of_the_input_is_found_among_many_operands() {
        let input: Vec<u8> = (0..3000_u32)
            .flat_map(|n| n.wrapping_mul(2_654_435_761).to_le_bytes())
            .collect();
        let windows: Vec<u32> = input
            .windows(4)
            .map(|w| u32::from_ne_bytes(w.try_into().unwrap()))
            .collect();
        let mut sorted = windows.clone();
        sorted.sort_unstable();
        // Every window, and as many values that are not windows.
        let absent: Vec<u32> = (0..12_000_u32)
            .map(|n| n.wrapping_mul(40_503) ^ 0x8000_0001)
            .filter(|v| sorted.binary_search(v).is_err())
            .collect();
        let mut operands = windows.clone();
        operands.extend(&absent);
        let found = FoundIntegers::new(&input, operands, u32::from_ne_bytes);
        assert!(windows.iter().all(|&w| found.contains(w)));
        assert!(absent.iter().all(|&v| !found.contains(v)));
    }
}
