//! One build at a time in a build folder: two bench runs, or a run and the builds made ahead
//! of it (`--build-only`), would otherwise write the same objects at once.

use std::{
    fs::File,
    io,
    os::fd::AsRawFd,
    path::{Path, PathBuf},
};

/// Holds the folder's lock until dropped (the kernel releases it when the file closes, also
/// when the process dies).
pub struct BuildLock {
    _file: File,
}

impl BuildLock {
    /// Takes `dir`'s lock, first saying so when another build holds it.
    pub fn take(dir: &Path) -> Result<Self, String> {
        let path: PathBuf = dir.join(".build-lock");
        let file =
            File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        if !flock(&file, libc::LOCK_EX | libc::LOCK_NB)? {
            println!("bench: waiting for another build in {}", dir.display());
            flock(&file, libc::LOCK_EX)?;
        }
        Ok(Self { _file: file })
    }
}

/// `flock(2)` on `file`: false when `LOCK_NB` was asked and another holds the lock.
fn flock(file: &File, operation: libc::c_int) -> Result<bool, String> {
    loop {
        // SAFETY: the descriptor is `file`'s, open for the whole call; flock only locks it.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(true);
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => return Ok(false),
            _ => return Err(format!("cannot lock the build folder: {error}")),
        }
    }
}
