//! AFL's hit-count buckets over a coverage map, for the observer in `hitcounts.rs`: the bucket
//! of a count, bucketing a whole map in place where it is non-zero (byte shuffles where the
//! processor has them), and the hash of a map's non-zero part.

/// The hit-count bucket of a counter value, as AFL and libFuzzer count them: 0 for 0 and 1,
/// then 2, 3, 4-7, 8-15, 16-31, 32-127 and 128+ as 1 to 7.
pub const fn bucket(count: u8) -> u32 {
    match count {
        0 | 1 => 0,
        2 => 1,
        3 => 2,
        4..=7 => 3,
        8..=15 => 4,
        16..=31 => 5,
        32..=127 => 6,
        _ => 7,
    }
}

/// AFL's hit-count classes: each non-zero count becomes the bit of its [`bucket`].
const CLASS_OF: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut count = 1;
    while count < 256 {
        table[count] = 1 << bucket(count as u8);
        count += 1;
    }
    table
};

/// Counters are skipped or visited this many at a time.
pub const BLOCK: usize = 32;

/// Most blocks of counters are all zero: one OR of four words tells.
fn is_zero(block: &[u8]) -> bool {
    let words: [u64; BLOCK / 8] = std::array::from_fn(|i| {
        u64::from_ne_bytes(block[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
    });
    words.iter().fold(0, |any, w| any | w) == 0
}

/// A hash of 64-bit words by their positions: the sum of each word's mix with its position
/// (a folded 128-bit multiply, as wyhash). A sum, so the words' multiplies are independent
/// and pipeline, where a chained hash waits on each one (a quarter less time for a map with
/// many non-zero blocks).
#[derive(Default)]
struct Mix(u64);

impl Mix {
    fn add(&mut self, position: usize, word: u64) {
        let key = (position as u64 ^ 0x2d35_8dcc_aa6c_78a5).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let product = u128::from(word ^ 0x8bb8_4b93_962e_acc9) * u128::from(key | 1);
        self.0 = self
            .0
            .wrapping_add((product as u64) ^ ((product >> 64) as u64));
    }

    /// Block `at`, which is not all zero, of the map.
    fn add_block(&mut self, at: usize, block: &[u8]) {
        for (i, word) in block.chunks_exact(8).enumerate() {
            let word = u64::from_ne_bytes(word.try_into().expect("8 bytes"));
            self.add(at * (BLOCK / 8) + i, word);
        }
    }

    /// The counters after the `blocks` whole blocks, one position each.
    fn add_rest(&mut self, blocks: usize, rest: &[u8]) {
        for (i, &counter) in rest.iter().enumerate() {
            self.add(blocks * (BLOCK / 8) + i, u64::from(counter));
        }
    }
}

/// Buckets every non-zero counter of `map` in place, and returns the hash of the result (see
/// [`hash_non_zero`]), computed in the same pass; `touched` gets the indices of the blocks of
/// [`BLOCK`] counters that are not all zero.
pub fn classify(map: &mut [u8], touched: &mut Vec<u32>) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (and so SSSE3), checked above.
            return unsafe { classify_avx2(map, touched) };
        }
        if std::arch::is_x86_feature_detected!("ssse3") {
            // SAFETY: the processor has SSSE3, checked above.
            return unsafe { classify_ssse3(map, touched) };
        }
    }
    classify_with(map, touched, |block| classify_each(block))
}

/// [`classify`] compiled for AVX2: the scan for zero blocks 32 counters per instruction, and
/// the byte shuffles inlined (an eighth less time on a 35,000-counter map).
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify_avx2(map: &mut [u8], touched: &mut Vec<u32>) -> u64 {
    // SAFETY: AVX2 implies SSSE3.
    classify_with(map, touched, |block| unsafe { classify_block_ssse3(block) })
}

/// [`classify`] with the byte shuffles of SSSE3 (processors without AVX2).
///
/// # Safety
/// The processor must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn classify_ssse3(map: &mut [u8], touched: &mut Vec<u32>) -> u64 {
    // SAFETY: the caller checked SSSE3.
    classify_with(map, touched, |block| unsafe { classify_block_ssse3(block) })
}

#[inline(always)]
fn classify_with(
    map: &mut [u8],
    touched: &mut Vec<u32>,
    classify_block: impl Fn(&mut [u8; BLOCK]),
) -> u64 {
    touched.clear();
    let mut mix = Mix::default();
    let whole_blocks = map.len() / BLOCK;
    let mut blocks = map.chunks_exact_mut(BLOCK);
    for (at, block) in (&mut blocks).enumerate() {
        if !is_zero(block) {
            classify_block(block.try_into().expect("a whole block"));
            mix.add_block(at, block);
            touched.push(at as u32);
        }
    }
    let rest = blocks.into_remainder();
    classify_each(rest);
    mix.add_rest(whole_blocks, rest);
    mix.0
}

/// A hash of where the map is non-zero and what it holds there: equal maps hash equal, as for
/// a hash of the whole map, at the cost of the non-zero part. (The power schedule hashes the
/// map after every execution to count how often each path runs: 8% of an SQL harness's time
/// for a hash of all its counters.)
pub fn hash_non_zero(map: &[u8]) -> u64 {
    let mut mix = Mix::default();
    let mut blocks = map.chunks_exact(BLOCK);
    for (at, block) in (&mut blocks).enumerate() {
        if !is_zero(block) {
            mix.add_block(at, block);
        }
    }
    mix.add_rest(map.len() / BLOCK, blocks.remainder());
    mix.0
}

/// The class of a counter by its low nibble when its high nibble is zero, and by its high
/// nibble otherwise (16-31, 32-127, 128+).
#[cfg(target_arch = "x86_64")]
const CLASS_BY_LOW_NIBBLE: [u8; 16] = [0, 1, 2, 4, 8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 16, 16];
#[cfg(target_arch = "x86_64")]
const CLASS_BY_HIGH_NIBBLE: [u8; 16] = [
    0, 32, 64, 64, 64, 64, 64, 64, 128, 128, 128, 128, 128, 128, 128, 128,
];

/// Buckets a block that is not all zero, 16 counters per table lookup (SSSE3's byte shuffle)
/// where the processor has it; [`classify`] picks it once per map. (One lookup per counter,
/// with a check for zero words, took 8 ns per non-zero word: most of the classification's
/// time on a large map.)
///
/// # Safety
/// The processor must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn classify_block_ssse3(block: &mut [u8; BLOCK]) {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128, _mm_shuffle_epi8, _mm_srli_epi16, _mm_storeu_si128,
    };
    // SAFETY (all below): loads and stores of 16 bytes within the block, unaligned variants.
    let by_low = _mm_loadu_si128(CLASS_BY_LOW_NIBBLE.as_ptr().cast());
    let by_high = _mm_loadu_si128(CLASS_BY_HIGH_NIBBLE.as_ptr().cast());
    let nibble = _mm_set1_epi8(0x0f);
    for half in block.chunks_exact_mut(16) {
        let at = half.as_mut_ptr().cast::<__m128i>();
        let counts = _mm_loadu_si128(at);
        let low = _mm_and_si128(counts, nibble);
        let high = _mm_and_si128(_mm_srli_epi16(counts, 4), nibble);
        let small = _mm_cmpeq_epi8(high, _mm_setzero_si128());
        let class = _mm_or_si128(
            _mm_shuffle_epi8(by_high, high),
            _mm_and_si128(_mm_shuffle_epi8(by_low, low), small),
        );
        _mm_storeu_si128(at, class);
    }
}

fn classify_each(counters: &mut [u8]) {
    for counter in counters {
        *counter = CLASS_OF[usize::from(*counter)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_as_afl_does_and_leaves_zeros() {
        // 45 counters: a whole block and a remainder, zeros in between.
        let mut map = [0u8; 45];
        let counts = [
            (0, 1),
            (3, 3),
            (8, 0),
            (9, 5),
            (15, 200),
            (37, 16),
            (44, 127),
        ];
        for (at, count) in counts {
            map[at] = count;
        }
        let mut touched = Vec::new();
        let _ = classify(&mut map, &mut touched);
        assert_eq!(touched, [0], "the remainder is not a block");
        let mut want = [0u8; 45];
        for (at, class) in [(0, 1), (3, 4), (9, 8), (15, 128), (37, 32), (44, 64)] {
            want[at] = class;
        }
        assert_eq!(map, want);
    }

    #[test]
    fn hashes_tell_maps_apart_by_their_non_zero_blocks() {
        let hash = hash_non_zero;
        let mut a = [0u8; 100];
        a[40] = 1;
        let mut moved = [0u8; 100];
        moved[72] = 1;
        let mut other = a;
        other[99] = 2;
        assert_eq!(hash(&a), hash(&a.clone()));
        assert_ne!(hash(&a), hash(&moved), "same block content, another block");
        assert_ne!(hash(&a), hash(&other), "differs in the remainder");
        // Bucketing hashes what it leaves.
        let mut counts = [0u8; 100];
        counts[40] = 3;
        counts[99] = 200;
        let bucketed_hash = classify(&mut counts, &mut Vec::new());
        assert_eq!(bucketed_hash, hash(&counts));
    }

    #[test]
    fn every_count_falls_in_its_class() {
        let classes = [
            (1, 1),
            (2, 2),
            (3, 4),
            (7, 8),
            (8, 16),
            (31, 32),
            (32, 64),
            (128, 128),
        ];
        for (count, class) in classes {
            assert_eq!(CLASS_OF[count], class, "count {count}");
        }
        assert_eq!(CLASS_OF[0], 0);
        assert_eq!(CLASS_OF[255], 128);
    }

    #[test]
    fn a_block_is_bucketed_as_each_counter_alone() {
        for first in (0..256).step_by(BLOCK) {
            let counts: [u8; BLOCK] = std::array::from_fn(|i| (first + i) as u8);
            let want = counts.map(|c| CLASS_OF[usize::from(c)]);
            let mut block = counts;
            classify_with(&mut block, &mut Vec::new(), |b| classify_each(b));
            assert_eq!(block, want, "one at a time, counts {first}..");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("ssse3") {
                let mut block = counts;
                // SAFETY: the processor has SSSE3, checked above.
                unsafe { classify_block_ssse3(&mut block) };
                assert_eq!(block, want, "by byte shuffles, counts {first}..");
            }
            let mut block = counts;
            classify(&mut block, &mut Vec::new());
            assert_eq!(block, want, "as dispatched, counts {first}..");
        }
    }
}
