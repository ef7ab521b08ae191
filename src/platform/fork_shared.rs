//! A flag that a process and every process it forks afterwards share: one anonymous shared
//! mapping, made before the forks (`share`), never unmapped. The status screen's "still shown"
//! (`monitor/terminal.rs`) and the libFuzzer front end's "first crash reported"
//! (`target/first_report.rs`) live in one each.

use std::{
    ptr::null_mut,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
};

pub struct ForkSharedFlag(AtomicPtr<AtomicBool>);

impl ForkSharedFlag {
    /// Not shared yet: `get` gives nothing until `share`.
    pub const fn new() -> Self {
        Self(AtomicPtr::new(null_mut()))
    }

    /// Maps the flag (false), once; processes forked from now on share it.
    pub fn share(&self) {
        if !self.0.load(Ordering::SeqCst).is_null() {
            return;
        }
        // SAFETY: a fresh anonymous shared mapping, never unmapped (it lives as long as the
        // process); zeroed memory is a valid, false AtomicBool.
        let page = unsafe {
            libc::mmap(
                null_mut(),
                std::mem::size_of::<AtomicBool>(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page != libc::MAP_FAILED {
            self.0.store(page.cast(), Ordering::SeqCst);
        }
    }

    /// The flag, once shared.
    pub fn get(&self) -> Option<&'static AtomicBool> {
        // SAFETY: the pointer is null or the mapping made in `share`, which is never unmapped.
        unsafe { self.0.load(Ordering::SeqCst).as_ref() }
    }
}
