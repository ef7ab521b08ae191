//! Runs a campaign in its own process group and makes sure nothing of it outlives the command.
//!
//! LibAFL's broker, its restarting managers and the clients are several generations of forked
//! processes. The supervisor forks the campaign as the leader of a new process group, becomes
//! the subreaper of everything below it, and on Ctrl-C, SIGTERM, SIGHUP or `--max-time` stops
//! the whole group (SIGTERM, then SIGKILL) and reaps it. Processes that left the group (a
//! standalone target's fork server runs in a session of its own, with its children) come back
//! to the supervisor as orphans, and are killed too. Shared memory goes with the processes
//! (see `shmem.rs`).

use std::{
    sync::atomic::{AtomicI32, Ordering},
    thread::sleep,
    time::{Duration, Instant},
};

/// The signal that asked us to stop, or 0.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::SeqCst);
}

const POLL: Duration = Duration::from_millis(50);
const GRACE: Duration = Duration::from_secs(2);

const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn set_handler(sig: libc::c_int, handler: libc::sighandler_t) {
    // SAFETY: `action` is a zeroed, then filled sigaction that outlives the call; the handler
    // is async-signal-safe (it only stores to an atomic) or the default.
    let failed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut()) != 0
    };
    if failed {
        eprintln!(
            "lafuzz: warning: cannot handle signal {sig}: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// How a supervised campaign ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It ended by itself with this exit code.
    Exited(i32),
    /// It was stopped by a signal to the command or by `--max-time`.
    Stopped,
}

/// Runs `campaign` in a child process group until it ends or is stopped: by a signal, by
/// `max_time`, or when `stop_now` (called between polls, in this process) says so.
pub fn run(
    max_time: Option<Duration>,
    campaign: impl FnOnce() -> i32,
    mut stop_now: impl FnMut() -> bool,
) -> Result<Ending, String> {
    for sig in STOP_SIGNALS {
        set_handler(sig, on_stop_signal as *const () as libc::sighandler_t);
    }
    become_subreaper();
    // SAFETY: fork(2) while single-threaded: the child gets a consistent copy of everything.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: process-control calls on ourselves, in the child before anything else runs;
        // no memory is passed.
        let (group, death_signal) = unsafe {
            (
                libc::setpgid(0, 0),
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0),
            )
        };
        if group != 0 || death_signal != 0 {
            // Stopping the campaign signals its whole group: never run in someone else's.
            eprintln!(
                "lafuzz: error: cannot give the campaign a process group of its own: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(1);
        }
        for sig in STOP_SIGNALS {
            set_handler(sig, libc::SIG_DFL);
        }
        let code = campaign();
        std::process::exit(code);
    }
    // SAFETY: setpgid(2) on our own child, to the group it sets itself (so neither of us
    // races the other); a failure here means the child already did it.
    unsafe {
        libc::setpgid(pid, pid);
    }
    let deadline = max_time.map(|t| Instant::now() + t);
    let ending = loop {
        if let Some(status) = reap(pid) {
            break Ending::Exited(exit_code(status));
        }
        let signal = STOP_SIGNAL.load(Ordering::SeqCst);
        if signal != 0 || deadline.is_some_and(|d| Instant::now() >= d) || stop_now() {
            if signal != 0 {
                eprintln!("lafuzz: stopping (signal {signal})");
            }
            break Ending::Stopped;
        }
        sleep(POLL);
    };
    stop_group(pid);
    kill_remaining_descendants();
    Ok(ending)
}

/// Orphaned descendants become our children (and ours to reap and kill), not init's.
pub fn become_subreaper() {
    // SAFETY: sets a process-control flag on ourselves; no memory is passed.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        // Without it, what escapes the process group (a fork server's children) could be left.
        eprintln!(
            "lafuzz: warning: cannot become the campaign's subreaper: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Every process as (pid, parent pid), from /proc.
fn processes() -> Vec<(libc::pid_t, libc::pid_t)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| {
            // Field 4 of /proc/PID/stat, after the parenthesised command name.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let after_name = stat.rsplit_once(')')?.1.to_string();
            let ppid = after_name.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// Our direct children.
fn children() -> Vec<libc::pid_t> {
    let me = std::process::id() as libc::pid_t;
    processes()
        .into_iter()
        .filter(|&(_, ppid)| ppid == me)
        .map(|(pid, _)| pid)
        .collect()
}

/// Every process below us (children, their children, ...).
pub fn descendants() -> Vec<libc::pid_t> {
    let all = processes();
    let mut found = vec![std::process::id() as libc::pid_t];
    let mut at = 0;
    while at < found.len() {
        let parent = found[at];
        found.extend(
            all.iter()
                .filter(|&&(_, ppid)| ppid == parent)
                .map(|&(pid, _)| pid),
        );
        at += 1;
    }
    found.split_off(1)
}

/// Kills and reaps every process still below us (we are their subreaper) until none is left.
pub fn kill_remaining_descendants() {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        for child in children() {
            // SAFETY: signalling a process whose parent we are.
            unsafe {
                libc::kill(child, libc::SIGKILL);
            }
        }
        reap(0);
        // SAFETY: checks whether any child is left, without waiting.
        let left = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
        if left < 0 {
            return; // ECHILD: nothing left below us
        }
        sleep(POLL);
    }
}

/// Reaps every finished descendant; returns the wait status of `leader` if it has ended.
fn reap(leader: libc::pid_t) -> Option<libc::c_int> {
    let mut leader_status = None;
    loop {
        let mut status = 0;
        // SAFETY: non-blocking wait for any child (we are their subreaper).
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return leader_status;
        }
        if pid == leader {
            leader_status = Some(status);
        }
    }
}

fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// True while any process of the group exists (zombies included, until reaped).
fn group_alive(pgid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Stops every process of the group: SIGTERM, a grace period, then SIGKILL; reaps them all.
fn stop_group(pgid: libc::pid_t) {
    for (signal, wait) in [
        (libc::SIGTERM, GRACE),
        (libc::SIGKILL, Duration::from_secs(10)),
    ] {
        if !group_alive(pgid) {
            return;
        }
        // SAFETY: signalling our own campaign's process group.
        unsafe {
            libc::kill(-pgid, signal);
        }
        let until = Instant::now() + wait;
        while group_alive(pgid) && Instant::now() < until {
            reap(pgid);
            sleep(POLL);
        }
    }
}
