//! Shared memory that cannot outlive the campaign.
//!
//! LibAFL's System V segments are removed when their owner drops them, which never happens when
//! a process is killed: every SIGKILL left segments behind. On Linux a segment may be marked for
//! removal (`IPC_RMID`) at once and still be attached by id afterwards; the kernel frees it when
//! the last process using it goes away, however that process ends.

use std::ptr::NonNull;

use libafl_bolts::{
    shmem::{ShMem, ShMemId, ShMemProvider, UnixShMemProvider},
    Error,
};

#[derive(Clone, Debug, Default)]
pub struct SelfCleaningShMemProvider {
    inner: UnixShMemProvider,
}

impl ShMemProvider for SelfCleaningShMemProvider {
    type ShMem = <UnixShMemProvider as ShMemProvider>::ShMem;

    fn new() -> Result<Self, Error> {
        Ok(Self {
            inner: UnixShMemProvider::new()?,
        })
    }

    fn new_shmem(&mut self, map_size: usize) -> Result<Self::ShMem, Error> {
        let shmem = self.inner.new_shmem(map_size)?;
        let id: i32 = shmem.id().into();
        // SAFETY: shmctl(2) on a segment we just created and are attached to; IPC_RMID takes
        // no buffer.
        if unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) } != 0 {
            return Err(Error::illegal_state(format!(
                "cannot mark shared memory {id} for removal: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(shmem)
    }

    fn shmem_from_id_and_size(&mut self, id: ShMemId, size: usize) -> Result<Self::ShMem, Error> {
        self.inner.shmem_from_id_and_size(id, size)
    }
}

/// Anonymous memory shared with every process forked after it was made: how a parent reads
/// what a child wrote, even after the child is gone. Unmapped on drop (in this process only).
pub struct SharedPages {
    ptr: NonNull<u8>,
    len: usize,
}

impl SharedPages {
    /// `len` zeroed bytes.
    pub fn new(len: usize) -> std::io::Result<Self> {
        // SAFETY: a fresh anonymous mapping (no fd, no fixed address); the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(std::io::Error::last_os_error)?;
        Ok(Self { ptr, len })
    }

    /// The start of the mapping, valid for `len` bytes as long as `self` lives.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for SharedPages {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses after `self`
        // (other processes have their own mapping of the same pages).
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_is_usable_by_id_after_marking_and_gone_after_drop() {
        let mut provider = SelfCleaningShMemProvider::new().unwrap();
        let mut first = provider.new_shmem(4096).unwrap();
        first[0] = 42;
        let id = first.id();
        let second = provider.shmem_from_id_and_size(id, 4096).unwrap();
        assert_eq!(second[0], 42);
        drop(second);
        drop(first);
        let raw: i32 = id.into();
        // SAFETY: querying a segment id; failure is the expected outcome.
        let gone = unsafe {
            let mut ds: libc::shmid_ds = std::mem::zeroed();
            libc::shmctl(raw, libc::IPC_STAT, &mut ds) == -1
        };
        assert!(
            gone,
            "segment {raw} still exists after its last user detached"
        );
    }
}
