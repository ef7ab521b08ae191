//! Errors as users read them: one line each, and the first error of a campaign, whichever of
//! its processes it happened in.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::platform::shmem::SharedPages;

/// A LibAFL error as one line: its message without the backtrace LibAFL appends, nor the kind
/// it puts before the errors we raise ourselves (`Error::illegal_state`).
pub fn error_text(e: &libafl::Error) -> String {
    let text = e.to_string();
    let line = text.split("\nBacktrace").next().unwrap_or_default().trim();
    line.strip_prefix("Illegal state: ")
        .unwrap_or(line)
        .to_string()
}

/// The first error of any process of a campaign, in memory shared by all of them (made before
/// they are forked). Not a file: a full disk is one of the errors it must carry.
pub struct FirstError {
    pages: SharedPages,
}

/// Room for the text: one line is enough.
const ERROR_ROOM: usize = 4096 - 8;

impl FirstError {
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            pages: SharedPages::new(ERROR_ROOM + 8)?,
        })
    }

    fn claimed(&self) -> &AtomicU32 {
        // SAFETY: the first 4 bytes of page-aligned, zero-initialized pages that live as long
        // as `self`; an AtomicU32 is valid for any bit pattern.
        unsafe { &*self.pages.as_ptr().cast::<AtomicU32>() }
    }

    /// Keeps `text` unless an error was kept before.
    pub fn record(&self, text: &str) {
        if self.claimed().swap(1, Ordering::SeqCst) != 0 {
            return;
        }
        let bytes = &text.as_bytes()[..text.len().min(ERROR_ROOM)];
        // SAFETY: this process won the claim above, so it alone writes the length (bytes 4..8)
        // and the text (from byte 8, within the mapping); readers look only after the
        // campaign's processes have ended.
        unsafe {
            let base = self.pages.as_ptr();
            base.add(4).cast::<u32>().write(bytes.len() as u32);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(8), bytes.len());
        }
    }

    /// The error kept, if any (once the processes that could record one are gone).
    pub fn take(&self) -> Option<String> {
        if self.claimed().load(Ordering::SeqCst) == 0 {
            return None;
        }
        // SAFETY: the writer finished (it has exited); the length it wrote is at most
        // ERROR_ROOM, so the slice stays within the mapping.
        let text = unsafe {
            let base = self.pages.as_ptr();
            let len = (base.add(4).cast::<u32>().read() as usize).min(ERROR_ROOM);
            std::slice::from_raw_parts(base.add(8), len)
        };
        Some(String::from_utf8_lossy(text).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_first_error_reaches_the_parent() {
        let first = FirstError::new().unwrap();
        // SAFETY: fork in a test; the child only records and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            first.record("disk full");
            first.record("a later error");
            // SAFETY: the child leaves without running the test harness's exit handlers.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(first.take().as_deref(), Some("disk full"));
    }
}
