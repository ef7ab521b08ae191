//! The `replay` command: runs inputs in a fresh child process and reports what happened, so
//! one crashing input does not hide the others. Exit status: 1 if anything crashed or ran out
//! of memory, else 2 if anything timed out or exited, else 0.

use std::{
    fs,
    path::{Path, PathBuf},
    thread::sleep,
    time::{Duration, Instant},
};

use crate::{harness, memory::resident_mb, options::ReplayOptions};

/// How often a running input's memory is looked at.
const RSS_CHECK_EVERY: Duration = Duration::from_millis(20);

/// What one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Crash(i32),
    Timeout,
    /// Killed for going over the memory limit, having used this many MiB.
    OutOfMemory(u64),
    Exit(i32),
}

impl Outcome {
    fn describe(&self, timeout: Duration) -> String {
        match self {
            Self::Ok => "ok".into(),
            Self::Crash(sig) => format!("CRASH (signal {sig}, {})", signal_name(*sig)),
            Self::Timeout => format!("TIMEOUT (over {} ms)", timeout.as_millis()),
            Self::OutOfMemory(0) => "OUT-OF-MEMORY (an allocation over the malloc limit)".into(),
            Self::OutOfMemory(mb) => format!("OUT-OF-MEMORY ({mb} MiB resident)"),
            Self::Exit(code) => format!("EXIT (the target called exit({code}))"),
        }
    }
}

pub fn run(opts: &ReplayOptions) -> Result<i32, String> {
    let timeout = opts.timeout;
    harness::initialize();
    harness::set_malloc_limit(opts.malloc_limit_mb.unwrap_or(opts.rss_limit_mb));
    let mut outcomes = Vec::new();
    if opts.sequence {
        let mut inputs = Vec::new();
        for path in &opts.files {
            for file in sequence_files(path)? {
                inputs.push(read(&file)?);
            }
        }
        let outcome = run_in_child(&inputs, timeout, opts.rss_limit_mb)?;
        if !opts.quiet {
            println!(
                "sequence of {} input(s): {}",
                inputs.len(),
                outcome.describe(timeout)
            );
        }
        outcomes.push(outcome);
    } else {
        for file in &opts.files {
            let outcome = run_in_child(&[read(file)?], timeout, opts.rss_limit_mb)?;
            if !opts.quiet {
                println!("{}: {}", file.display(), outcome.describe(timeout));
            }
            outcomes.push(outcome);
        }
    }
    let failed = outcomes.iter().filter(|o| **o != Outcome::Ok).count();
    if !opts.quiet && !opts.sequence {
        println!("{} input(s), {failed} failed", outcomes.len());
    }
    Ok(
        if outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Crash(_) | Outcome::OutOfMemory(_)))
        {
            1
        } else if failed > 0 {
            2
        } else {
            0
        },
    )
}

fn read(file: &Path) -> Result<Vec<u8>, String> {
    fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))
}

/// A sequence argument: a file, or a directory's inputs in name order.
fn sequence_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    crate::output::collect_files(path, &mut files)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(files)
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTRAP => "SIGTRAP",
        _ => "signal",
    }
}

/// Runs `inputs` one after another in a forked child, killing it after `timeout` (per input)
/// or when its resident memory goes over `rss_limit_mb` (0: no limit).
fn run_in_child(
    inputs: &[Vec<u8>],
    timeout: Duration,
    rss_limit_mb: u64,
) -> Result<Outcome, String> {
    // SAFETY: fork in a single-threaded process; the child only runs the harness and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        for input in inputs {
            harness::run(input);
        }
        // SAFETY: leave without running the parent's exit handlers a second time.
        unsafe { libc::_exit(0) };
    }
    let limit = timeout * u32::try_from(inputs.len().max(1)).unwrap_or(u32::MAX);
    let start = Instant::now();
    let mut last_rss_check = start;
    loop {
        let mut status = 0;
        // SAFETY: non-blocking wait for our own child.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            return Ok(if libc::WIFSIGNALED(status) {
                Outcome::Crash(libc::WTERMSIG(status))
            } else if libc::WEXITSTATUS(status) == harness::malloc_limit_exit() {
                Outcome::OutOfMemory(0)
            } else if libc::WEXITSTATUS(status) != 0 {
                Outcome::Exit(libc::WEXITSTATUS(status))
            } else {
                Outcome::Ok
            });
        }
        let over_memory = (rss_limit_mb > 0 && last_rss_check.elapsed() >= RSS_CHECK_EVERY)
            .then(|| {
                last_rss_check = Instant::now();
                resident_mb(pid).filter(|&mb| mb > rss_limit_mb)
            })
            .flatten();
        if let Some(mb) = over_memory {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Ok(Outcome::OutOfMemory(mb));
        }
        if start.elapsed() > limit {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Ok(Outcome::Timeout);
        }
        sleep(Duration::from_micros(200));
    }
}
