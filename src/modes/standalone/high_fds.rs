//! LibAFL's fork server waits for each execution's status with `pselect`, and sizes the fd set
//! by scanning it bit by bit down from `FD_SETSIZE` to the status pipe (nix's
//! `FdSet::highest`): with the low fd a pipe usually gets, a thousand tests per execution,
//! 3.5% of `persistent`'s time on libpng. Built while the low fds are taken, the executor's
//! pipes get fds near the top of the set, where the scan ends after a few dozen.

use std::os::fd::{AsRawFd, OwnedFd};

/// The lowest fd left free for the build: the placeholders take those below. What building an
/// executor opens (its pipes, the test case's segment, /dev/null for the target's output) fits
/// in the 64 above, all below `FD_SETSIZE` as `pselect` needs.
const FIRST_FREE_FD: i32 = libc::FD_SETSIZE as i32 - 64;

/// Runs `build` with the fds below [`FIRST_FREE_FD`] taken, so that what it opens gets fds
/// from there up; they are released afterwards. Without room (a soft fd limit under
/// `FD_SETSIZE`, or fds already taken up there), `build` runs as it would anyway.
pub fn build_with_high_fds<T>(build: impl FnOnce() -> T) -> T {
    let placeholders = take_low_fds();
    let built = build();
    drop(placeholders);
    built
}

/// Duplicates of /dev/null on every free fd below [`FIRST_FREE_FD`] (close-on-exec: the
/// target the build starts inherits none of them).
fn take_low_fds() -> Vec<OwnedFd> {
    let mut taken = Vec::new();
    if !fd_limit_reaches_fd_setsize() {
        return taken;
    }
    let Ok(null) = std::fs::File::open("/dev/null") else {
        return taken;
    };
    let null = OwnedFd::from(null);
    let null_fd = null.as_raw_fd();
    if null_fd >= FIRST_FREE_FD {
        return taken;
    }
    taken.push(null);
    loop {
        // SAFETY: duplicating an fd this function owns; the result is owned below.
        let fd = unsafe { libc::fcntl(null_fd, libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            break;
        }
        // SAFETY: `fd` was just opened and nothing else owns it.
        let owned = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        if fd >= FIRST_FREE_FD {
            break;
        }
        taken.push(owned);
    }
    taken
}

fn fd_limit_reaches_fd_setsize() -> bool {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    got && limit.rlim_cur >= libc::FD_SETSIZE as libc::rlim_t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_build_opens_gets_a_high_fd_and_the_placeholders_are_released() {
        if !fd_limit_reaches_fd_setsize() {
            return;
        }
        let file = build_with_high_fds(|| std::fs::File::open("/dev/null").unwrap());
        assert!(file.as_raw_fd() >= FIRST_FREE_FD, "fd {}", file.as_raw_fd());
        assert!(file.as_raw_fd() < libc::FD_SETSIZE as i32);
        let after = std::fs::File::open("/dev/null").unwrap();
        assert!(
            after.as_raw_fd() < FIRST_FREE_FD,
            "fd {}",
            after.as_raw_fd()
        );
    }
}
