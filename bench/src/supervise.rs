//! Starting a fuzzer in its own process group on a log file, stopping the whole group, and
//! accounting its CPU time.

use std::{
    collections::HashSet,
    fs,
    os::unix::process::CommandExt,
    path::Path,
    process::{Command, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

/// The core every fuzzer is pinned to: the last one (the first is busiest on a shared machine).
pub fn bench_core() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
}

/// The two cores of a side-by-side pair in `trial`: the bench's core and the one before it,
/// swapped on every other trial (one core of a shared machine may be busier); on a one-core
/// machine both share it.
pub fn pair_cores(trial: usize) -> [usize; 2] {
    let last = bench_core();
    let other = last.saturating_sub(1);
    if trial.is_multiple_of(2) {
        [last, other]
    } else {
        [other, last]
    }
}

/// CPU seconds (user and system) of every child the bench has waited for.
pub fn children_cpu_secs() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}

/// A started fuzzer process group.
pub struct Started {
    /// Its leader, whose process group id is the same.
    pid: i32,
    start: Instant,
    /// Every process seen in its group or below one of its processes: what it leaves behind
    /// is reaped by the bench (their subreaper), and its CPU time counted to this run.
    members: HashSet<i32>,
    cpu: f64,
    /// Wall seconds, once the leader has exited.
    ended: Option<f64>,
}

/// Starts `cmd` in a process group of its own, its output to `log`.
pub fn start(mut cmd: Command, log: &Path) -> Result<Started, String> {
    let file = fs::File::create(log).map_err(|e| e.to_string())?;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let pid = child.id() as i32;
    Ok(Started {
        pid,
        start: Instant::now(),
        members: HashSet::from([pid]),
        cpu: 0.0,
        ended: None,
    })
}

impl Started {
    /// Waits until it exits or `until` holds or `limit` passes; then stops the group.
    /// Returns (wall seconds, CPU seconds of the whole group).
    pub fn finish(self, limit: Duration, until: impl Fn() -> bool) -> (f64, f64) {
        finish_together(vec![self], limit, until)[0]
    }
}

/// (pid, parent pid, process group id) of every process.
fn processes() -> Vec<(i32, i32, i32)> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // After the command name in parentheses: state, ppid, pgrp.
            let mut rest = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().skip(1);
            Some((pid, rest.next()?.parse().ok()?, rest.next()?.parse().ok()?))
        })
        .collect()
}

/// Adds to each run the processes now in its group or below one of its members.
fn track(runs: &mut [Started]) {
    let all = processes();
    for r in runs.iter_mut() {
        loop {
            let before = r.members.len();
            for &(pid, ppid, pgrp) in &all {
                if pgrp == r.pid || r.members.contains(&ppid) {
                    r.members.insert(pid);
                }
            }
            if r.members.len() == before {
                break;
            }
        }
    }
}

/// Reaps every child that has ended, without waiting, adding its CPU time (and that of the
/// descendants it waited for) to the run it belongs to. Returns false once the bench has no
/// child left.
fn reap(runs: &mut [Started]) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: wait4 fills the struct we pass.
        let (pid, usage) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            let pid = libc::wait4(-1, &mut status, libc::WNOHANG, &mut usage);
            (pid, usage)
        };
        if pid <= 0 {
            return pid == 0;
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        if let Some(r) = runs.iter_mut().find(|r| r.members.contains(&pid)) {
            r.cpu += t(usage.ru_utime) + t(usage.ru_stime);
            if pid == r.pid {
                r.ended = Some(r.start.elapsed().as_secs_f64());
            }
        }
    }
}

/// Waits until every one of `runs` has exited, or `until` holds, or `limit` passes; then stops
/// their groups and whatever left them. Returns each one's (wall seconds, CPU seconds).
pub fn finish_together(
    mut runs: Vec<Started>,
    limit: Duration,
    until: impl Fn() -> bool,
) -> Vec<(f64, f64)> {
    let start = runs
        .iter()
        .map(|r| r.start)
        .min()
        .unwrap_or_else(Instant::now);
    let all_ended = |runs: &[Started]| runs.iter().all(|r| r.ended.is_some());
    while start.elapsed() < limit && !until() {
        track(&mut runs);
        reap(&mut runs);
        if all_ended(&runs) {
            break;
        }
        sleep(Duration::from_millis(100));
    }
    // Wall time counts until the stop signal; shutting down is not fuzzing.
    let stopped_at: Vec<f64> = runs
        .iter()
        .map(|r| r.start.elapsed().as_secs_f64())
        .collect();
    track(&mut runs);
    let signal_groups = |runs: &[Started], signal| {
        for r in runs.iter().filter(|r| r.ended.is_none()) {
            // SAFETY: signalling a group we started.
            unsafe { libc::kill(-r.pid, signal) };
        }
    };
    signal_groups(&runs, libc::SIGINT);
    let grace = Instant::now();
    while grace.elapsed() < Duration::from_secs(10) && !all_ended(&runs) {
        track(&mut runs);
        reap(&mut runs);
        sleep(Duration::from_millis(50));
    }
    // Whatever is left: the groups, then what left them (AFL++'s fork servers, in sessions of
    // their own, and their stopped children), each reaped here so its CPU time is counted.
    signal_groups(&runs, libc::SIGKILL);
    let bench = std::process::id() as i32;
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        track(&mut runs);
        for (pid, _, _) in processes().into_iter().filter(|&(pid, ppid, _)| {
            ppid == bench && runs.iter().any(|r| r.members.contains(&pid))
        }) {
            // SAFETY: signalling our own child, a process of a run we started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if !reap(&mut runs) {
            break;
        }
        sleep(Duration::from_millis(50));
    }
    lafuzz::platform::supervisor::kill_remaining_descendants();
    runs.iter()
        .zip(stopped_at)
        .map(|(r, at)| (r.ended.unwrap_or(at).min(at), r.cpu))
        .collect()
}
