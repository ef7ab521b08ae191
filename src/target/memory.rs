//! How much memory a process uses, and whether the kernel killed one for memory: what the
//! memory limits of every mode read.

use std::{ffi::CStr, fs, path::Path};

/// The resident pages of the process whose `statm` file is `statm`, read with
/// async-signal-safe calls only (fork mode's children call it from a signal handler).
fn resident_pages_in(statm: &CStr) -> Option<u64> {
    let mut buf = [0u8; 128];
    // SAFETY: a NUL-terminated path; the fd is closed below.
    let fd = unsafe { libc::open(statm.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: reads at most `buf.len()` bytes into `buf`, from the fd opened above.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: closes the fd opened above.
    unsafe { libc::close(fd) };
    let text = buf.get(..usize::try_from(n).ok()?)?;
    // "size resident shared ...": the second field.
    let resident = text.split(|&b| b == b' ').nth(1)?;
    resident.iter().try_fold(0u64, |acc, &digit| {
        digit
            .is_ascii_digit()
            .then(|| acc * 10 + u64::from(digit - b'0'))
    })
}

/// This process's resident pages; async-signal-safe.
pub fn own_resident_pages() -> Option<u64> {
    resident_pages_in(c"/proc/self/statm")
}

/// A process's resident memory in MiB.
pub fn resident_mb(pid: libc::pid_t) -> Option<u64> {
    let statm = std::ffi::CString::new(format!("/proc/{pid}/statm")).ok()?;
    let pages = resident_pages_in(&statm)?;
    Some((pages * crate::target::runtime_abi::page_size() as u64) >> 20)
}

/// How many processes of our memory cgroup the kernel has killed for memory (v2's
/// The largest resident memory of this process and its descendants, in MiB (0 when none could
/// be read): a campaign's peak, sampled.
pub fn largest_in_process_tree_mb() -> u64 {
    crate::platform::supervisor::descendants()
        .into_iter()
        .filter_map(resident_mb)
        .max()
        .unwrap_or(0)
}

/// `memory.events`, v1's `memory.oom_control`); 0 when neither can be read.
pub fn kernel_oom_kills() -> u64 {
    let Ok(cgroups) = fs::read_to_string("/proc/self/cgroup") else {
        return 0;
    };
    let files = cgroups.lines().filter_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let path = path.trim_start_matches('/');
        match controllers {
            "" => Some(Path::new("/sys/fs/cgroup").join(path).join("memory.events")),
            c if c.split(',').any(|c| c == "memory") => Some(
                Path::new("/sys/fs/cgroup/memory")
                    .join(path)
                    .join("memory.oom_control"),
            ),
            _ => None,
        }
    });
    files
        .filter_map(|file| fs::read_to_string(file).ok())
        .filter_map(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("oom_kill "))
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_grows_with_touched_pages() {
        let me = std::process::id() as libc::pid_t;
        let before = resident_mb(me).unwrap();
        let pages_before = own_resident_pages().unwrap();
        // Far more than the other tests of this process may free meanwhile (with 64 MiB, one
        // CI run saw 120 -> 160 MiB).
        let touched = std::hint::black_box(vec![1u8; 256 << 20]);
        let after = resident_mb(me).unwrap();
        assert!(after >= before + 192, "{before} -> {after} MiB");
        assert!(own_resident_pages().unwrap() > pages_before);
        drop(touched);
    }
}
