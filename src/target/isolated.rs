//! Runs inputs through the linked harness in a forked child, so a crash, a hang or a memory
//! blow-up ends the child and is reported, never the caller. Optionally the child sends back
//! the coverage its last input reached (corpus minimization compares those features).
//! Used by `replay`, by the minimizers and by the libFuzzer front end.

use std::{
    collections::BTreeSet,
    thread::sleep,
    time::{Duration, Instant},
};

use crate::{
    coverage::buckets::bucket,
    target::{harness, leaks, memory::resident_mb, profile, stack},
};

/// How long after its last input's timeout a child that has not ended is killed.
const BACKSTOP_MARGIN: Duration = Duration::from_secs(6);

/// How often a running input's memory is looked at.
const RSS_CHECK_EVERY: Duration = Duration::from_millis(20);

/// What one run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Ended by this signal.
    Crash(i32),
    Timeout,
    /// Killed for going over the memory limit, having used this many MiB (0: one allocation
    /// over the sanitizer's malloc limit).
    OutOfMemory(u64),
    /// The target called `exit` with this code (or a sanitizer reported and exited).
    Exit(i32),
    /// LeakSanitizer found memory nothing points to after the input (see `leaks.rs`).
    Leak,
}

impl Outcome {
    /// A crash, out-of-memory or exit: what a fuzzer saves as a finding (hangs apart).
    pub fn is_failure(self) -> bool {
        !matches!(self, Self::Ok | Self::Timeout)
    }

    /// Whether the child printed its report (first line and stack, `stack.rs`) as it ended. A
    /// child that ignored its timer and was killed by the backstop did not.
    pub fn reported_by_child(self) -> bool {
        match self {
            Self::Crash(sig) => stack::handles(sig),
            Self::Timeout => stack::handles(libc::SIGALRM),
            _ => false,
        }
    }

    /// The same kind of failure: the same signal, or both out of memory, or both exits.
    pub fn same_kind(self, other: Self) -> bool {
        match (self, other) {
            (Self::OutOfMemory(_), Self::OutOfMemory(_)) => true,
            (Self::Exit(_), Self::Exit(_)) => true,
            (a, b) => a == b,
        }
    }
}

/// Limits of one child.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Per input.
    pub timeout: Duration,
    /// 0: none.
    pub rss_limit_mb: u64,
}

/// Coverage features of one run: (counter index, hit-count bucket) pairs as `index * 8 +
/// bucket`, as libFuzzer counts them.
pub type Features = BTreeSet<u32>;

/// Distinct counters (edges) among features.
pub fn edges(features: &Features) -> usize {
    let mut indices: Vec<u32> = features.iter().map(|f| f / 8).collect();
    indices.dedup();
    indices.len()
}

/// Runs `inputs` one after another in one forked child, killing it after `limits.timeout` per
/// input or when its resident memory goes over the limit. With `coverage`, the features of
/// the last input (counters cleared before it) come back with an `Ok` outcome.
pub fn run(
    inputs: &[&[u8]],
    limits: Limits,
    coverage: bool,
) -> Result<(Outcome, Features), String> {
    let mut pipe = [-1; 2];
    // SAFETY: pipe(2) fills the two descriptors of `pipe`.
    if coverage && unsafe { libc::pipe(pipe.as_mut_ptr()) } != 0 {
        return Err(format!("pipe failed: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fork in a single-threaded process; the child only runs the harness and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        run_child(inputs, limits.timeout, coverage.then_some(pipe[1]));
    }
    let mut sent = Vec::new();
    if coverage {
        // SAFETY: closing our copy of the write end, and making the read end non-blocking so
        // the wait below can also watch time and memory.
        unsafe {
            libc::close(pipe[1]);
            libc::fcntl(pipe[0], libc::F_SETFL, libc::O_NONBLOCK);
        }
    }
    // The child times each input itself (see `run_child`); this is the backstop, late enough
    // for `replay`'s child to print its stack (`stack.rs`) on a busy machine.
    let limit =
        limits.timeout * u32::try_from(inputs.len().max(1)).unwrap_or(u32::MAX) + BACKSTOP_MARGIN;
    let outcome = wait(pid, limit, limits.rss_limit_mb, || {
        if coverage {
            drain(pipe[0], &mut sent);
        }
    });
    if coverage {
        drain(pipe[0], &mut sent);
        // SAFETY: our read end, no longer used.
        unsafe { libc::close(pipe[0]) };
    }
    let features = sent
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok((outcome, features))
}

/// The child: runs the inputs, each within `timeout` (SIGALRM, whose default action ends the
/// child, is reported as a timeout), sends the last one's features, leaves.
fn run_child(inputs: &[&[u8]], timeout: Duration, features_to: Option<libc::c_int>) -> ! {
    unblock_ending_signals();
    profile::child_started();
    let counters = features_to.and_then(|_| harness::take_coverage_counters().ok());
    for (at, input) in inputs.iter().enumerate() {
        arm_timeout(timeout);
        if at + 1 == inputs.len() {
            if let Some(counters) = counters {
                counters.clear();
            }
        }
        leaks::run_in_child(|| run_checked(input));
    }
    profile::write_in_child();
    if let (Some(counters), Some(fd)) = (counters, features_to) {
        let bytes: Vec<u8> = counters
            .to_vec()
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .flat_map(|(i, &c)| (i as u32 * 8 + bucket(c)).to_le_bytes())
            .collect();
        write_all(fd, &bytes);
    }
    // SAFETY: leave without running the parent's exit handlers a second time.
    unsafe { libc::_exit(0) }
}

/// A child forked from a signal handler, or from a process started by one (a fuzzing client
/// describes a hang from within its timeout handler), inherits its blocked signals: its timer
/// would never end it, nor would a crash reach the stack printer (`stack.rs`).
fn unblock_ending_signals() {
    // SAFETY: sigset operations on a local set, then pthread_sigmask(2) for this thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in stack::FATAL {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// In a forked child about to run one input: (re-)arms its real-time timer, whose SIGALRM
/// (default action: the child ends) its parent reports as a timeout.
pub fn arm_timeout(timeout: Duration) {
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_usec: timeout.subsec_micros() as libc::suseconds_t,
        },
    };
    // SAFETY: setitimer(2) from a live struct; the old value is not wanted.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) };
}

/// Exit code of a child whose target wrote into its input (libFuzzer's error exit code).
const INPUT_OVERWRITTEN_EXIT: i32 = 77;

/// Runs one input on a copy, and fails as libFuzzer does when the target writes into it (the
/// harness receives a `const` buffer; fuzzing would go wrong silently).
fn run_checked(input: &[u8]) {
    let copy = input.to_vec();
    harness::run(&copy);
    if copy != input {
        eprintln!(
            "=={}== ERROR: libFuzzer: fuzz target overwrites its const input",
            std::process::id()
        );
        // SAFETY: leave at once, as a crash would.
        unsafe { libc::_exit(INPUT_OVERWRITTEN_EXIT) }
    }
}

fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice to our pipe.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Reads what is in the (non-blocking) pipe now.
fn drain(fd: libc::c_int, into: &mut Vec<u8>) {
    let mut buf = [0u8; 65536];
    loop {
        // SAFETY: reads into a live buffer of the given length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return;
        }
        into.extend_from_slice(&buf[..n as usize]);
    }
}

/// Waits for the child, killing it at `limit` or over `rss_limit_mb`.
fn wait(pid: libc::pid_t, limit: Duration, rss_limit_mb: u64, mut each: impl FnMut()) -> Outcome {
    let start = Instant::now();
    let mut last_rss_check = start;
    let mut pause = Duration::from_micros(20);
    loop {
        each();
        let mut status = 0;
        // SAFETY: non-blocking wait for our own child.
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            return if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGALRM {
                Outcome::Timeout
            } else if libc::WIFSIGNALED(status) {
                Outcome::Crash(libc::WTERMSIG(status))
            } else if libc::WEXITSTATUS(status) == harness::malloc_limit_exit() {
                Outcome::OutOfMemory(0)
            } else if libc::WEXITSTATUS(status) == leaks::LEAK_EXIT {
                Outcome::Leak
            } else if libc::WEXITSTATUS(status) != 0 {
                Outcome::Exit(libc::WEXITSTATUS(status))
            } else {
                Outcome::Ok
            };
        }
        let over_memory = (rss_limit_mb > 0 && last_rss_check.elapsed() >= RSS_CHECK_EVERY)
            .then(|| {
                last_rss_check = Instant::now();
                resident_mb(pid).filter(|&mb| mb > rss_limit_mb)
            })
            .flatten();
        let outcome = match over_memory {
            Some(mb) => Some(Outcome::OutOfMemory(mb)),
            None => (start.elapsed() > limit).then_some(Outcome::Timeout),
        };
        if let Some(outcome) = outcome {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return outcome;
        }
        // Most inputs end within microseconds: poll fast first, then back off.
        sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_edges() {
        assert_eq!(
            [1u8, 2, 3, 4, 7, 8, 16, 32, 128, 255].map(bucket),
            [0, 1, 2, 3, 3, 4, 5, 6, 7, 7]
        );
        let features: Features = [8, 9, 16, 40].into_iter().collect();
        assert_eq!(edges(&features), 3);
    }
}
