//! The input an in-process client is running, kept where its parent can read it after the
//! client is gone: a client killed from outside (`kill -9`, the kernel's OOM killer, the RSS
//! limit) cannot save anything itself.
//!
//! The restarter maps one shared anonymous page range before it forks its first client; every
//! client inherits it, writes each input there before running it and marks it empty after.
//! Each client also records its LLMP id there, for the one that replaces it after such a death.

use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

use libafl_bolts::ClientId;

use crate::platform::shmem::SharedPages;

/// Inputs longer than this are kept truncated (LibAFL's mutators stay below 1 MiB).
const CAPACITY: usize = 1 << 20;

/// `len` while no input runs (or while one is being copied in).
const EMPTY: usize = usize::MAX;

/// The bytes first, at the start of a page. Behind the length they began 8 bytes into a page,
/// and an input whose bytes began a page was copied 30 times slower (1.7 µs for 5.6 KB, 55 ns
/// otherwise: each store 8 bytes past a load 4 KiB apart, which the processor takes for an
/// alias); on harfbuzz this copy took 7.3% of the samples, 0.5% once aligned.
#[repr(C)]
struct Slot {
    bytes: [u8; CAPACITY],
    len: AtomicUsize,
    /// The LLMP id of the client that last joined the broker, or [`NO_CLIENT`].
    client: AtomicU32,
}

const NO_CLIENT: u32 = u32::MAX;
const _: () = assert!(std::mem::offset_of!(Slot, bytes) == 0);

/// The slot this process writes to, when its parent gave it one.
static INSTALLED: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::null_mut());

/// The shared slot, owned by the restarter (it outlives every client it forks).
pub struct InFlight {
    pages: SharedPages,
}

impl InFlight {
    /// Maps the slot, shared with every process forked after this.
    pub fn new() -> std::io::Result<Self> {
        let in_flight = Self {
            pages: SharedPages::new(size_of::<Slot>())?,
        };
        in_flight.slot().len.store(EMPTY, Ordering::SeqCst);
        in_flight.slot().client.store(NO_CLIENT, Ordering::SeqCst);
        Ok(in_flight)
    }

    fn slot(&self) -> &Slot {
        // SAFETY: the pages are as large as a Slot, page-aligned, live as long as `self`, and
        // a Slot is plain bytes and an atomic, valid for any contents (zeroes included).
        unsafe { &*self.pages.as_ptr().cast::<Slot>() }
    }

    /// In a client: record inputs into this slot from now on.
    pub fn install(&self) {
        INSTALLED.store(self.pages.as_ptr().cast(), Ordering::SeqCst);
    }

    /// The LLMP id of the client that joined the broker last (this process's predecessor, in a
    /// client that has not joined yet), if any.
    pub fn client(&self) -> Option<ClientId> {
        let id = self.slot().client.load(Ordering::SeqCst);
        (id != NO_CLIENT).then_some(ClientId(id))
    }

    /// In a client, once it joined the broker: its LLMP id.
    pub fn set_client(&self, id: ClientId) {
        self.slot().client.store(id.0, Ordering::SeqCst);
    }

    /// In the parent, once the client is gone: the input it was running, if any.
    pub fn take(&self) -> Option<Vec<u8>> {
        let slot = self.slot();
        let len = slot.len.swap(EMPTY, Ordering::SeqCst);
        (len != EMPTY).then(|| slot.bytes[..len.min(CAPACITY)].to_vec())
    }
}

/// Runs `run` on `input`, with `input` recorded as the one in flight while it runs.
pub fn while_running<R>(input: &[u8], run: impl FnOnce() -> R) -> R {
    let slot = INSTALLED.load(Ordering::Relaxed);
    if slot.is_null() {
        return run();
    }
    // SAFETY: a non-null pointer was installed from a live `InFlight` mapping, which the
    // restarter keeps for the life of every client; the length is an atomic, shared.
    let slot_len = unsafe { &(*slot).len };
    let len = input.len().min(CAPACITY);
    slot_len.store(EMPTY, Ordering::Relaxed);
    // SAFETY: the bytes are written through the raw pointer, never a reference: only this
    // (single-threaded) client writes them, while the length says EMPTY, and the parent reads
    // them only after the client is gone; `len` is at most their capacity.
    unsafe {
        let bytes = std::ptr::addr_of_mut!((*slot).bytes).cast::<u8>();
        std::ptr::copy_nonoverlapping(input.as_ptr(), bytes, len);
    }
    slot_len.store(input.len(), Ordering::Release);
    let result = run();
    slot_len.store(EMPTY, Ordering::Relaxed);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_reads_what_a_killed_child_was_running() {
        let in_flight = InFlight::new().unwrap();
        // SAFETY: fork in a test; the child only writes the slot and stops itself.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            in_flight.install();
            while_running(b"the culprit", || unsafe {
                libc::raise(libc::SIGKILL);
            });
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFSIGNALED(status));
        assert_eq!(in_flight.take().as_deref(), Some(&b"the culprit"[..]));
        assert_eq!(in_flight.take(), None, "taken once");
    }

    #[test]
    fn the_next_client_reads_the_llmp_id_its_killed_predecessor_recorded() {
        let in_flight = InFlight::new().unwrap();
        assert_eq!(in_flight.client(), None, "no client joined yet");
        // SAFETY: fork in a test; the child only writes the slot and stops itself.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            in_flight.set_client(ClientId(7));
            unsafe { libc::raise(libc::SIGKILL) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(in_flight.client(), Some(ClientId(7)));
    }

    #[test]
    fn nothing_is_in_flight_between_inputs() {
        let in_flight = InFlight::new().unwrap();
        in_flight.install();
        while_running(b"done", || ());
        INSTALLED.store(std::ptr::null_mut(), Ordering::SeqCst);
        assert_eq!(in_flight.take(), None);
    }
}
