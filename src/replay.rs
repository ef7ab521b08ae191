//! The `replay` command: runs each input once in a fresh child process and reports what
//! happened, so one crashing input does not hide the others.

use std::{
    fs,
    thread::sleep,
    time::{Duration, Instant},
};

use crate::{harness, options::ReplayOptions};

/// What one input did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Crash(i32),
    Timeout,
    Exit(i32),
}

pub fn run(opts: &ReplayOptions) -> Result<i32, String> {
    let timeout = Duration::from_millis(opts.timeout_ms);
    let mut failed = 0;
    harness::initialize();
    for file in &opts.files {
        let input = fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let outcome = run_one(&input, timeout)?;
        let what = match outcome {
            Outcome::Ok => "ok".to_string(),
            Outcome::Crash(sig) => format!("CRASH (signal {sig}, {})", signal_name(sig)),
            Outcome::Timeout => format!("TIMEOUT (over {} ms)", opts.timeout_ms),
            Outcome::Exit(code) => format!("EXIT (target called exit({code}))"),
        };
        println!("{}: {what}", file.display());
        if outcome != Outcome::Ok {
            failed += 1;
        }
    }
    println!("{} input(s), {failed} failed", opts.files.len());
    Ok(i32::from(failed > 0))
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

/// Runs one input in a forked child, killing it after `timeout`.
fn run_one(input: &[u8], timeout: Duration) -> Result<Outcome, String> {
    // SAFETY: fork in a single-threaded process; the child only runs the harness and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        harness::run(input);
        // SAFETY: leave without running the parent's atexit handlers twice.
        unsafe { libc::_exit(0) };
    }
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: non-blocking wait for our own child.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            return Ok(if libc::WIFSIGNALED(status) {
                Outcome::Crash(libc::WTERMSIG(status))
            } else if libc::WEXITSTATUS(status) != 0 {
                Outcome::Exit(libc::WEXITSTATUS(status))
            } else {
                Outcome::Ok
            });
        }
        if start.elapsed() > timeout {
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
