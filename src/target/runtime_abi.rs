//! What the fuzzer and the standalone runtime must agree on, read from the runtime's own header
//! (`compiler-wrapper/runtime/lafuzz_runtime.h`) through `src/target/runtime_constants.c`, which the
//! build script compiles: one home for each value, so the two sides cannot drift apart.

use std::ffi::{c_char, CStr};

// Defined in src/target/runtime_constants.c. `size_t` is `usize` on every target this crate builds for.
unsafe extern "C" {
    /// The first byte of a NUL-terminated `const char[]`.
    static lafuzz_ubsan_options: c_char;
    static lafuzz_page_size: usize;
    static lafuzz_map_alignment: usize;
    static lafuzz_cmplog_map_size: usize;
    static lafuzz_rss_limit_env: c_char;
    static lafuzz_oom_shm_env: c_char;
    static lafuzz_cmplog_shm_env: c_char;
    static lafuzz_print_stack_env: c_char;
    static lafuzz_timeout_signal_env: c_char;
}

/// A NUL-terminated `const char[]` of the runtime's header as a `&str`.
///
/// # Safety
/// `first` must be the first byte of such an array, initialized from an ASCII string literal.
unsafe fn header_string(first: *const c_char) -> &'static str {
    // SAFETY: the caller's contract: NUL-terminated, never written, lives as long as the
    // program.
    let text = unsafe { CStr::from_ptr(first) };
    text.to_str()
        .expect("the runtime header's strings are ASCII")
}

/// UBSan's options that make its findings (and the signals it would catch) crash: what the
/// standalone runtime builds in, for targets that do not (AFL++ builds) as `UBSAN_OPTIONS`.
pub fn ubsan_options() -> &'static str {
    // SAFETY: a `const char[]` initialized from a string literal (runtime_constants.c).
    unsafe { header_string(&raw const lafuzz_ubsan_options) }
}

/// The variable that gives a standalone target's children their memory limit, in MiB.
pub fn rss_limit_env() -> &'static str {
    // SAFETY: a `const char[]` initialized from a string literal (runtime_constants.c).
    unsafe { header_string(&raw const lafuzz_rss_limit_env) }
}

/// The variable naming the shared memory where a child over its limit raises a flag.
pub fn oom_shm_env() -> &'static str {
    // SAFETY: a `const char[]` initialized from a string literal (runtime_constants.c).
    unsafe { header_string(&raw const lafuzz_oom_shm_env) }
}

/// The variable that makes a standalone target run alone print its stack on a crash.
pub fn print_stack_env() -> &'static str {
    // SAFETY: a `const char[]` initialized from a string literal (runtime_constants.c).
    unsafe { header_string(&raw const lafuzz_print_stack_env) }
}

/// The variable naming the comparison log's shared memory (the tracing fork server's).
pub fn cmplog_shm_env() -> &'static str {
    // SAFETY: a `const char[]` initialized from a string literal (runtime_constants.c).
    unsafe { header_string(&raw const lafuzz_cmplog_shm_env) }
}

/// The variable that tells a persistent child of our runtime the signal that stops it on a
/// timeout (then it answers the fuzzer itself between inputs).
pub fn timeout_signal_env() -> &'static str {
    // SAFETY: a `const char[]` initialized from a string literal (runtime_constants.c).
    unsafe { header_string(&raw const lafuzz_timeout_signal_env) }
}

/// The page the coverage counters are aligned to: the coverage segment is rounded up to it.
pub fn page_size() -> usize {
    // SAFETY: `lafuzz_page_size` is a `const size_t` with a constant initializer: never
    // written, so reading it races with nothing.
    unsafe { lafuzz_page_size }
}

/// What LibAFL's fork server executor rounds a target's reported map size up to.
pub fn map_alignment() -> usize {
    // SAFETY: `lafuzz_map_alignment` is a `const size_t` with a constant initializer: never
    // written, so reading it races with nothing.
    unsafe { lafuzz_map_alignment }
}

/// The size of the comparison log as the standalone runtime lays it out.
pub fn cmplog_map_size() -> usize {
    // SAFETY: `lafuzz_cmplog_map_size` is a `const size_t` with a constant initializer
    // (`sizeof` the runtime's map): never written, so reading it races with nothing.
    unsafe { lafuzz_cmplog_map_size }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmplog_layout_is_libafls() {
        // The fuzzer reads the runtime's log with LibAFL's observer, through LibAFL's struct.
        assert_eq!(
            cmplog_map_size(),
            std::mem::size_of::<libafl_targets::cmps::CmpLogMap>()
        );
    }

    #[test]
    fn ubsan_options_make_findings_crash() {
        let options = ubsan_options();
        assert!(options.contains("handle_segv=0"), "{options}");
        assert!(options.contains("abort_on_error=1"), "{options}");
    }

    #[test]
    fn whole_pages_hold_an_aligned_map() {
        // A segment of whole pages must also hold the map size LibAFL rounds up to.
        assert!(page_size().is_power_of_two() && map_alignment().is_power_of_two());
        assert_eq!(page_size() % map_alignment(), 0);
    }
}
