//! clang's profile runtime, linked into a `libafl_cc --coverage` build (see `profile.c`): the
//! `coverage` command points it at a scratch directory, and each forked child of `isolated.rs`
//! writes its counters there before it ends, by crash or timeout too.

use std::{
    ffi::CString,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, Ordering},
};

unsafe extern "C" {
    fn lafuzz_profile_linked() -> libc::c_int;
    fn lafuzz_profile_set_filename(pattern: *const libc::c_char);
    fn lafuzz_profile_write() -> libc::c_int;
    fn lafuzz_profile_write_on_fatal_signals();
}

/// Set by [`write_into`]: children write their profile (other commands' children do not).
static WRITING: AtomicBool = AtomicBool::new(false);

/// True when this binary has clang's profile runtime (was built with `libafl_cc --coverage`).
pub fn linked() -> bool {
    // SAFETY: reads the addresses of two weak symbols.
    unsafe { lafuzz_profile_linked() != 0 }
}

/// From now on this process and its children write their counters into `dir`, merged into one
/// raw profile by the runtime (`%m`: each writer adds its counts to the file, under a lock), so
/// a corpus of any size takes one file's room. Returns the pattern.
pub fn write_into(dir: &Path) -> Result<PathBuf, String> {
    if !linked() {
        return Err("no profile runtime linked".into());
    }
    let pattern = dir.join("lafuzz-%m.profraw");
    let c_pattern = CString::new(pattern.as_os_str().as_bytes())
        .map_err(|_| format!("bad profile path {}", pattern.display()))?;
    // SAFETY: a NUL-terminated string that is never freed: LLVM 19's runtime copies it, older
    // ones kept the pointer (one small string leaked, once).
    unsafe { lafuzz_profile_set_filename(c_pattern.into_raw()) };
    WRITING.store(true, Ordering::SeqCst);
    Ok(pattern)
}

/// In a forked child about to run inputs: a crash or timeout writes the counters first.
pub fn child_started() {
    if WRITING.load(Ordering::SeqCst) {
        // SAFETY: installs signal handlers in this child only; they write and re-raise.
        unsafe { lafuzz_profile_write_on_fatal_signals() };
    }
}

/// In a forked child whose inputs all ran: writes the counters (it leaves with `_exit`, which
/// skips the runtime's own write at exit).
pub fn write_in_child() {
    if WRITING.load(Ordering::SeqCst) {
        // SAFETY: the runtime writes (merges) its counters into the file set by `write_into`.
        if unsafe { lafuzz_profile_write() } != 0 {
            eprintln!("lafuzz: warning: the profile of an input could not be written");
        }
    }
}

/// This process's own write at exit goes to /dev/null: after `write_into`, its scratch
/// directory is gone by then (the runtime would make it again).
pub fn discard_at_exit() {
    if linked() {
        // SAFETY: as in `write_into`; a static string.
        unsafe { lafuzz_profile_set_filename(c"/dev/null".as_ptr()) };
    }
}

/// A coverage build run for any command leaves no `default.profraw` in the working directory
/// (the runtime's default when `LLVM_PROFILE_FILE` is unset): only the `coverage` command's
/// children write a profile. The runtime made the file empty at start; that is removed.
pub fn no_default_file() {
    if !linked() || std::env::var_os("LLVM_PROFILE_FILE").is_some() {
        return;
    }
    discard_at_exit();
    let default = Path::new("default.profraw");
    if std::fs::metadata(default).is_ok_and(|m| m.is_file() && m.len() == 0) {
        let _ = std::fs::remove_file(default);
    }
}
