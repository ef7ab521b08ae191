//! When the target's comparison hooks run. The cmp-guard pass (compiler-wrapper/pass) calls
//! them only while `lafuzz_comparison_hooks_on` is set: during tracing runs (libafl_targets'
//! comparison log is on), and, with value profile, during every run: libafl_targets' hooks then
//! record in `libafl_cmp_map`, for each comparison site, the most operand bits found equal,
//! which the value-profile observer makes coverage (libFuzzer's `-use_value_profile=1`).

use std::sync::atomic::{AtomicBool, Ordering};

use libafl::observers::StdMapObserver;
use libafl_targets::{CMPLOG_ENABLED, CMP_MAP, CMP_MAP_SIZE};

unsafe extern "C" {
    /// The byte the pass tests (src/target/hooks.c).
    static mut lafuzz_comparison_hooks_on: u8;
}

static VALUE_PROFILE: AtomicBool = AtomicBool::new(false);

fn set_hooks(on: bool) {
    // SAFETY: a byte the instrumented code only reads; this client runs one input at a time,
    // and the flag changes between inputs only.
    unsafe { std::ptr::addr_of_mut!(lafuzz_comparison_hooks_on).write_volatile(u8::from(on)) };
}

/// Starts (or ends) a tracing run: comparisons are logged, and the hooks called.
pub fn set_tracing(on: bool) {
    // SAFETY: libafl_targets' byte-sized switch, as its own observer sets it; see `set_hooks`.
    unsafe { std::ptr::addr_of_mut!(CMPLOG_ENABLED).write_volatile(u8::from(on)) };
    set_hooks(on || VALUE_PROFILE.load(Ordering::Relaxed));
}

/// Whether a tracing run is on.
pub fn tracing() -> bool {
    // SAFETY: reads libafl_targets' byte-sized switch.
    unsafe { std::ptr::addr_of!(CMPLOG_ENABLED).read_volatile() != 0 }
}

/// Value profile on: the hooks run for every input, into the value-profile map.
pub fn enable_value_profile() {
    VALUE_PROFILE.store(true, Ordering::Relaxed);
    set_hooks(true);
}

fn value_profile() -> bool {
    VALUE_PROFILE.load(Ordering::Relaxed)
}

/// The observer over the value-profile map: empty with value profile off, so that it costs
/// nothing then.
pub fn value_profile_observer() -> StdMapObserver<'static, u8, false> {
    let len = if value_profile() { CMP_MAP_SIZE } else { 0 };
    // SAFETY: a static of libafl_targets, valid for the whole process; the hooks write it only
    // while an input runs, when the observer does not read it, and this client makes one
    // observer over it.
    unsafe {
        StdMapObserver::from_mut_ptr("value_profile", std::ptr::addr_of_mut!(CMP_MAP).cast(), len)
    }
}
