//! The target linked into this binary: libFuzzer's `LLVMFuzzerTestOneInput`, its optional
//! `LLVMFuzzerInitialize`, and our optional `LLVMFuzzerReset` (see `hooks.c`).

use std::{
    cell::RefCell,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};

use libafl::Error;
use libafl_targets::{counters_maps_ptr, libfuzzer_initialize, libfuzzer_test_one_input};

unsafe extern "C" {
    fn lafuzz_has_reset_hook() -> libc::c_int;
    fn lafuzz_call_reset_hook();
    fn lafuzz_set_malloc_limit(bytes: libc::size_t) -> libc::c_int;
    fn lafuzz_malloc_limit_exit() -> libc::c_int;
    fn lafuzz_end_inputs_over_malloc_limit(ender: extern "C" fn());
    fn lafuzz_silence_output(stdout: libc::c_int, stderr: libc::c_int) -> libc::c_int;
    fn lafuzz_asan_linked() -> libc::c_int;
}

/// Sends this process's stdout and (or) stderr, the target's, to /dev/null, keeping the
/// sanitizers' reports on the stderr it had (libFuzzer's `-close_fd_mask`).
pub fn silence_output(stdout: bool, stderr: bool) -> std::io::Result<()> {
    // SAFETY: duplicates and replaces file descriptors of this process only.
    if unsafe { lafuzz_silence_output(stdout.into(), stderr.into()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Makes any single allocation of the target larger than `mb` MiB end this process with
/// [`malloc_limit_exit`] (0: no limit). True when a sanitizer allocator enforces it.
pub fn set_malloc_limit(mb: u64) -> bool {
    let bytes = usize::try_from(mb << 20).unwrap_or(usize::MAX);
    // SAFETY: installs hooks.c's malloc hook into the sanitizer allocator, when there is one;
    // the hook only compares a size and may end the process.
    unsafe { lafuzz_set_malloc_limit(bytes) != 0 }
}

/// The exit status of a process ended by the malloc limit.
pub fn malloc_limit_exit() -> i32 {
    // SAFETY: returns a constant.
    unsafe { lafuzz_malloc_limit_exit() }
}

/// Raised by the in-process modes when an allocation of the running input went over the limit,
/// just before they end it as a crash: the solutions file it as out-of-memory.
static OVER_MALLOC_LIMIT: AtomicBool = AtomicBool::new(false);

/// From now on an allocation over the malloc limit calls `ender` first, which ends the running
/// input (and does not return) or returns when none runs; then it ends the process as before.
pub fn end_inputs_over_malloc_limit(ender: extern "C" fn()) {
    // SAFETY: stores a function pointer the malloc hook calls; `ender` is a plain `extern "C"`
    // function without arguments.
    unsafe { lafuzz_end_inputs_over_malloc_limit(ender) }
}

/// Called by an ender (see [`end_inputs_over_malloc_limit`]) before it ends the input.
pub fn mark_over_malloc_limit() {
    OVER_MALLOC_LIMIT.store(true, Ordering::SeqCst);
}

/// Whether the input that ended last went over the malloc limit; the process ends with it.
pub fn ran_over_malloc_limit() -> bool {
    OVER_MALLOC_LIMIT.load(Ordering::SeqCst)
}

/// The counter region the campaign observes: the largest, when a shared library brought its
/// own. `None` when nothing instrumented is linked.
fn largest_counter_region() -> Option<(*mut u8, usize)> {
    // SAFETY: the instrumented code registered its counter regions before main; the list is
    // not changed afterwards, and reading it does not touch the counters.
    let maps = unsafe { &*counters_maps_ptr() };
    if maps.len() > 1 {
        log::warn!("{} counter regions; observing the largest", maps.len());
    }
    maps.iter()
        .max_by_key(|m| m.len())
        .map(|m| (m.as_ptr().cast_mut(), m.len()))
}

/// How many counters the linked target has (the coverage map's size), without taking them.
pub fn coverage_counter_count() -> Option<usize> {
    largest_counter_region().map(|(_, len)| len)
}

/// Where the target's inline 8-bit coverage counters are: an address, not a reference, since
/// the instrumented code writes them through its own pointers while the fuzzer runs (and fork
/// mode maps shared pages over them in place).
#[derive(Debug, Clone, Copy)]
pub struct CounterRegion {
    start: NonNull<u8>,
    len: usize,
}

impl CounterRegion {
    pub fn as_mut_ptr(self) -> *mut u8 {
        self.start.as_ptr()
    }

    pub fn len(self) -> usize {
        self.len
    }

    /// Zeroes every counter. Only between inputs: the instrumented code writes them while one
    /// runs.
    pub fn clear(self) {
        // SAFETY: `len` valid bytes at `start`, written through the raw pointer only.
        unsafe { self.start.as_ptr().write_bytes(0, self.len) }
    }

    /// A copy of the counters. Only between inputs, as [`clear`](Self::clear).
    pub fn to_vec(self) -> Vec<u8> {
        // SAFETY: `len` valid, initialized bytes at `start`; nothing writes them between
        // inputs, and the slice lives only for the copy.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }.to_vec()
    }
}

static COUNTERS_TAKEN: AtomicBool = AtomicBool::new(false);

/// The target's coverage counters, handed out once per process: whoever takes them (the
/// coverage observer) is the only one in this process that reads them.
pub fn take_coverage_counters() -> Result<CounterRegion, Error> {
    let Some((ptr, len)) = largest_counter_region() else {
        return Err(Error::illegal_state(
            "the target has no coverage counters: build it with libafl_cc/libafl_cxx",
        ));
    };
    let Some(start) = NonNull::new(ptr) else {
        return Err(Error::illegal_state(
            "the coverage counters are at address 0",
        ));
    };
    if COUNTERS_TAKEN.swap(true, Ordering::SeqCst) {
        return Err(Error::illegal_state(
            "the coverage counters were already taken",
        ));
    }
    Ok(CounterRegion { start, len })
}

/// Before the first input in this process: the target's `LLVMFuzzerInitialize`, the malloc limit
/// (see [`set_malloc_limit`]) and leak detection (where LeakSanitizer is linked, see `leaks.rs`).
pub fn set_up(malloc_limit_mb: u64, detect_leaks: bool) {
    initialize();
    set_malloc_limit(malloc_limit_mb);
    super::leaks::enable(detect_leaks);
}

/// Calls the target's `LLVMFuzzerInitialize`, if it has one, with our command line.
pub fn initialize() {
    let args: Vec<String> = std::env::args().collect();
    // SAFETY: the target's initializer runs once per process, before any input.
    if unsafe { libfuzzer_initialize(&args) } == -1 {
        eprintln!("lafuzz: warning: LLVMFuzzerInitialize returned -1");
    }
}

/// Runs one input through the target. With AddressSanitizer linked in, the target gets a copy
/// of the input's exact size from the C allocator, as libFuzzer does: our input buffers have
/// spare capacity (and Rust's allocator is not ASan's), so a read past the input's end would
/// land in memory ASan allows; in the copy it hits ASan's redzone (an Oniguruma bug, ONIG-5,
/// went unseen without it).
pub fn run(input: &[u8]) {
    static ASAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: reads the address of a weak symbol.
    if *ASAN.get_or_init(|| unsafe { lafuzz_asan_linked() != 0 }) {
        run_exact_copy(input);
    } else {
        // SAFETY: the linked harness takes any byte buffer, as libFuzzer's contract says.
        unsafe { libfuzzer_test_one_input(input) };
    }
}

fn run_exact_copy(input: &[u8]) {
    // SAFETY: `copy` is a live allocation of exactly `input.len()` bytes (ASan's malloc gives
    // even 0 bytes a pointer of its own), filled from `input`, lent to the harness for the
    // call only, then freed.
    unsafe {
        let copy = libc::malloc(input.len()).cast::<u8>();
        if copy.is_null() {
            libfuzzer_test_one_input(input);
            return;
        }
        std::ptr::copy_nonoverlapping(input.as_ptr(), copy, input.len());
        libfuzzer_test_one_input(std::slice::from_raw_parts(copy, input.len()));
        libc::free(copy.cast());
    }
}

/// True when the harness defines `LLVMFuzzerReset`.
pub fn has_reset_hook() -> bool {
    // SAFETY: reads the address of a weak symbol.
    unsafe { lafuzz_has_reset_hook() != 0 }
}

/// Calls the harness's `LLVMFuzzerReset`, if it has one.
pub fn reset() {
    // SAFETY: the hook takes no arguments; absent, the shim does nothing.
    unsafe { lafuzz_call_reset_hook() }
}

/// How many of the latest inputs an in-process client remembers: when a crash does not
/// reproduce alone, these are the sequence that led to it.
pub const RECENT_INPUTS: usize = 64;

/// The latest inputs run in this process, in reusable buffers.
#[derive(Default)]
struct RecentInputs {
    slots: Vec<Vec<u8>>,
    next: usize,
}

impl RecentInputs {
    fn push(&mut self, input: &[u8]) {
        if self.slots.len() < RECENT_INPUTS {
            self.slots.push(input.to_vec());
        } else {
            let slot = &mut self.slots[self.next];
            slot.clear();
            slot.extend_from_slice(input);
        }
        self.next = (self.next + 1) % RECENT_INPUTS;
    }

    /// Oldest first.
    fn ordered(&self) -> Vec<Vec<u8>> {
        let (newer, older) = self.slots.split_at(self.next % self.slots.len().max(1));
        older.iter().chain(newer).cloned().collect()
    }
}

thread_local! {
    static RECENT: RefCell<RecentInputs> = RefCell::new(RecentInputs::default());
}

/// Runs one input and remembers it among the recent ones, and as the one in flight while it
/// runs (see `inflight.rs`).
pub fn run_recorded(input: &[u8]) {
    RECENT.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.push(input);
        }
    });
    crate::target::inflight::while_running(input, || run(input));
}

/// The recent inputs, oldest first (the last is the one running or run last).
pub fn recent_inputs() -> Vec<Vec<u8>> {
    RECENT.with(|r| r.try_borrow().map(|r| r.ordered()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_inputs_keep_the_latest_in_order() {
        let mut recent = RecentInputs::default();
        for i in 0..3usize {
            recent.push(&i.to_le_bytes());
        }
        assert_eq!(
            recent.ordered(),
            vec![
                0usize.to_le_bytes(),
                1usize.to_le_bytes(),
                2usize.to_le_bytes()
            ]
        );
        for i in 3..(RECENT_INPUTS + 5) {
            recent.push(&i.to_le_bytes());
        }
        let ordered = recent.ordered();
        assert_eq!(ordered.len(), RECENT_INPUTS);
        assert_eq!(ordered[0], 5usize.to_le_bytes());
        assert_eq!(
            ordered[RECENT_INPUTS - 1],
            (RECENT_INPUTS + 4).to_le_bytes()
        );
    }
}
