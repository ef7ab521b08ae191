//! Starting a fuzzer in its own process group on a log file, stopping the whole group, and
//! accounting its CPU time.

use std::{
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
    child: std::process::Child,
    start: Instant,
    cpu_before: f64,
}

/// Starts `cmd` in a process group of its own, its output to `log`.
pub fn start(mut cmd: Command, log: &Path) -> Result<Started, String> {
    let file = fs::File::create(log).map_err(|e| e.to_string())?;
    let cpu_before = children_cpu_secs();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    Ok(Started {
        child,
        start: Instant::now(),
        cpu_before,
    })
}

impl Started {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }
    /// Waits until it exits or `until` holds or `limit` passes; then stops the group.
    /// Returns (wall seconds, CPU seconds of the whole group).
    pub fn finish(mut self, limit: Duration, until: impl Fn() -> bool) -> (f64, f64) {
        while self.start.elapsed() < limit && !until() {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            sleep(Duration::from_millis(100));
        }
        let wall = self.start.elapsed().as_secs_f64();
        // SAFETY: signalling the group we started.
        unsafe { libc::kill(-self.pid(), libc::SIGINT) };
        let grace = Instant::now();
        while grace.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; whatever is left of the group goes.
        unsafe { libc::kill(-self.pid(), libc::SIGKILL) };
        let _ = self.child.wait();
        // And what left the group (AFL++'s fork servers and their stopped children).
        lafuzz::supervisor::kill_remaining_descendants();
        (wall, children_cpu_secs() - self.cpu_before)
    }
}
