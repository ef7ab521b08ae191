//! Helpers for end-to-end tests: run the real fuzzer binaries in their own process group,
//! stop them like a user would, and read what they left on disk.
#![allow(dead_code)]

use std::{
    collections::HashMap,
    fs,
    io::Read,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Output, Stdio},
    sync::{
        atomic::{AtomicUsize, Ordering},
        mpsc,
    },
    thread::sleep,
    time::{Duration, Instant},
};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where cargo builds: `CARGO_TARGET_DIR` when set (relative to the repository root, where the
/// tests run), else `target/`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), |d| root().join(d))
}

/// A fuzzer built by `cargo make build` (`target/fuzzers/NAME`).
pub fn fuzzer(name: &str) -> PathBuf {
    let path = target_dir().join("fuzzers").join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo make build` (or `cargo make test`) first",
        path.display()
    );
    path
}

/// `compiler FLAGS harnesses/SOURCE -o OUT LIBS`, which must succeed (`AFL_QUIET` keeps AFL++'s
/// compilers as quiet as the others).
pub fn compile(compiler: &Path, flags: &[&str], source: &str, out: &Path, libs: &[&str]) {
    let status = Command::new(compiler)
        .args(flags)
        .arg(root().join("harnesses").join(source))
        .arg("-o")
        .arg(out)
        .args(libs)
        .env("AFL_QUIET", "1")
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", compiler.display()));
    assert!(
        status.success(),
        "{} {} {source} failed: {status}",
        compiler.display(),
        flags.join(" ")
    );
}

/// Our compiler wrapper, built by `cargo make build`.
pub fn libafl_cc() -> PathBuf {
    target_dir().join("release/libafl_cc")
}

/// The crashme harness built by a peer's `compiler` with `flags` into `dir/name`.
pub fn crashme_build(compiler: &str, flags: &[&str], dir: &Path, name: &str) -> PathBuf {
    let binary = dir.join(name);
    compile(
        Path::new(compiler),
        flags,
        "crashme/crashme.c",
        &binary,
        &[],
    );
    binary
}

/// The crashme harness built with libFuzzer itself, the control.
pub fn libfuzzer_build(dir: &Path) -> PathBuf {
    let flags = ["-g", "-fsanitize=fuzzer,address"];
    crashme_build("clang-19", &flags, dir, "crashme-libfuzzer")
}

pub fn corpus(name: &str) -> PathBuf {
    root().join("corpus").join(name)
}

/// A fresh, empty directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lafuzz-test-{tag}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A seed directory `seeds/` in here holding `files` (name, contents).
    pub fn seeds<C: AsRef<[u8]>>(&self, files: &[(&str, C)]) -> PathBuf {
        let seeds = self.0.join("seeds");
        fs::create_dir_all(&seeds).unwrap();
        for (name, contents) in files {
            fs::write(seeds.join(name), contents).unwrap();
        }
        seeds
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A running campaign, started in its own process group so the test can always clean up.
pub struct Campaign {
    pub child: Child,
    pub out: PathBuf,
    log: PathBuf,
}

/// The plain driver (`target/release/fuzzer`): no harness linked, it fuzzes standalone targets.
pub fn driver() -> PathBuf {
    target_dir().join("release/fuzzer")
}

impl Campaign {
    /// `binary fuzz --mode MODE -i SEEDS -o OUT EXTRA...`, in its own process group.
    pub fn fuzz(binary: &Path, mode: &str, seeds: &Path, out: &Path, extra: &[&str]) -> Self {
        Self::fuzz_with_env(binary, mode, seeds, out, extra, &[])
    }

    /// [`Self::fuzz`] with `env` added to the fuzzer's environment.
    pub fn fuzz_with_env(
        binary: &Path,
        mode: &str,
        seeds: &Path,
        out: &Path,
        extra: &[&str],
        env: &[(&str, &Path)],
    ) -> Self {
        let mut args = vec![
            "fuzz",
            "--mode",
            mode,
            "-i",
            seeds.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        Self::start_with_env(binary, &args, out, env)
    }

    pub fn start(binary: &Path, args: &[&str], out: &Path) -> Self {
        Self::start_with_env(binary, args, out, &[])
    }

    /// [`Self::start`] with `env` added to the fuzzer's environment.
    pub fn start_with_env(binary: &Path, args: &[&str], out: &Path, env: &[(&str, &Path)]) -> Self {
        let log = out.with_extension("log");
        let file = fs::File::create(&log).unwrap();
        let child = Command::new(binary)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .process_group(0)
            .spawn()
            .unwrap();
        Self {
            child,
            out: out.to_path_buf(),
            log,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn stats(&self) -> HashMap<String, String> {
        stats(&self.out)
    }

    /// Polls `fuzzer_stats` until `done` holds, or panics after `limit`.
    pub fn wait_for(
        &mut self,
        limit: Duration,
        what: &str,
        done: impl Fn(&HashMap<String, String>) -> bool,
    ) {
        let start = Instant::now();
        while start.elapsed() < limit {
            if done(&self.stats()) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("campaign exited ({status}) before {what}\n{}", self.log());
            }
            sleep(Duration::from_millis(200));
        }
        panic!(
            "no {what} within {limit:?}; stats {:?}\n{}",
            self.stats(),
            self.log()
        );
    }

    /// Sends `signal` to the fuzzer process (as Ctrl-C or `kill` would) and waits for it.
    pub fn stop_with(&mut self, signal: i32) -> ExitStatus {
        // SAFETY: kill(2) on the fuzzer process this test started.
        unsafe {
            libc::kill(self.pid(), signal);
        }
        self.wait(Duration::from_secs(20))
    }

    /// Waits for the campaign to end by itself, checks it succeeded, and returns its stats.
    pub fn finish(&mut self, limit: Duration) -> HashMap<String, String> {
        let status = self.wait(limit);
        assert!(status.success(), "{status}\n{}", self.log());
        self.stats()
    }

    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "campaign did not exit within {limit:?}\n{}",
                self.log()
            );
            sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Campaign {
    fn drop(&mut self) {
        // Whatever happened in the test, leave nothing running: the campaign's own process
        // group, then the command's.
        for group in children(self.pid()) {
            // SAFETY: kill(2) on a process group of the campaign this test started.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        // SAFETY: kill(2) on the process group of the command this test started.
        unsafe {
            libc::kill(-self.pid(), libc::SIGKILL);
        }
        let _ = self.child.wait();
        let _ = fs::remove_file(&self.log);
    }
}

/// `fuzzer_stats` as a map.
pub fn stats(out: &Path) -> HashMap<String, String> {
    lafuzz::platform::output::parse_fuzzer_stats(
        &fs::read_to_string(out.join("fuzzer_stats")).unwrap_or_default(),
    )
}

pub fn stat(stats: &HashMap<String, String>, key: &str) -> u64 {
    stats.get(key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Runs a command to completion; one that does not end within a minute fails the test.
pub fn run(binary: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(binary);
    command.args(args);
    run_limited(command, Duration::from_secs(60))
}

/// Runs `command` to completion in its own process group; killed (and the test failed, with
/// the end of what it printed) if it does not end within `limit`. Its output is read while it
/// runs: a command blocked on a full pipe (64 KiB: two crash reports) would never end.
pub fn run_limited(mut command: Command, limit: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            // SAFETY: kill(2) on the process group of the command this test started.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            // What it printed, unless something outside its group still holds the pipes.
            let printed = [stdout, stderr].map(|r| r.recv_timeout(Duration::from_secs(5)));
            let printed: Vec<u8> = printed.into_iter().flatten().flatten().collect();
            let tail = &printed[printed.len().saturating_sub(4000)..];
            panic!(
                "{command:?} did not end within {limit:?}; it printed, at the end:\n{}",
                String::from_utf8_lossy(tail)
            );
        }
        sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.recv().unwrap_or_default(),
        stderr: stderr.recv().unwrap_or_default(),
    }
}

/// Everything `pipe` gives until its end, read by a thread of its own.
fn drain(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = send.send(bytes);
    });
    receive
}

/// A finished command's stdout, then its stderr.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `fuzz -i CORPUS -o OUT EXTRA...`, for commands run to completion (see `Campaign::fuzz` for
/// campaigns watched while they run).
pub fn fuzz_args<'a>(corpus: &'a Path, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "fuzz",
        "-i",
        corpus.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args
}

/// Runs `binary` with `args` and checks it fails with one line on stderr containing `expect`.
pub fn assert_one_line_error(binary: &Path, args: &[&str], expect: &str) {
    let out = run(binary, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains(expect), "{args:?}: {stderr}");
}

/// Saved inputs (non-hidden files) in a directory.
pub fn inputs(dir: &Path) -> Vec<PathBuf> {
    lafuzz::platform::output::visible_entries(dir)
}

/// The first saved input in `dir` whose bytes start with `prefix`.
pub fn input_starting_with(dir: &Path, prefix: &[u8]) -> Option<PathBuf> {
    inputs(dir)
        .into_iter()
        .find(|f| fs::read(f).is_ok_and(|bytes| bytes.starts_with(prefix)))
}

/// System V shared memory segment ids that exist now.
pub fn shm_ids() -> Vec<String> {
    let out = Command::new("ipcs").arg("-m").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.len() >= 2 && cols[0].starts_with("0x")).then(|| cols[1].to_string())
        })
        .collect()
}

/// Processes in a process group.
pub fn group_members(pgid: i32) -> Vec<String> {
    let out = Command::new("pgrep")
        .arg("-g")
        .arg(pgid.to_string())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A process's children.
pub fn children(pid: i32) -> Vec<i32> {
    fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(Result::ok)
                .map(|t| fs::read_to_string(t.path().join("children")).unwrap_or_default())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The campaign's first process (its broker) under the command `pid`, which runs the campaign in
/// a process group of its own: the one child leading its own group. Orphans of the campaign (a
/// symbolizer a described hang left) pass through as the command's children too: it reaps them.
pub fn campaign_broker(pid: i32) -> i32 {
    let children = children(pid);
    // SAFETY: getpgid(2) reads a process's group; a process gone meanwhile gives -1.
    let leaders: Vec<i32> = children
        .iter()
        .copied()
        .filter(|&child| unsafe { libc::getpgid(child) } == child)
        .collect();
    assert_eq!(
        leaders.len(),
        1,
        "children {children:?}, group leaders {leaders:?}"
    );
    leaders[0]
}

/// The clients of the in-process campaign the command `pid` supervises: the childless
/// processes of the campaign's process group.
pub fn campaign_clients(pid: i32) -> Vec<i32> {
    leaf_processes(campaign_broker(pid))
}

/// The processes of a group that have no children: in an in-process campaign, the clients
/// (and not the symbolizer each client's parent keeps for them).
pub fn leaf_processes(pgid: i32) -> Vec<i32> {
    group_members(pgid)
        .iter()
        .filter_map(|p| p.parse::<i32>().ok())
        .filter(|&pid| children(pid).is_empty())
        .filter(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            comm.trim() != "llvm-symbolizer"
        })
        .collect()
}
