//! End-to-end: `forkserver` and `persistent` modes on standalone targets, ours
//! (`libafl_cc --standalone`) and AFL++'s (`afl-clang-fast`).

mod common;

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use common::*;

/// Seeds one byte away from each of crashme's bugs keep the tests short at fork speed.
fn near_bug_seeds(tmp: &TempDir) -> PathBuf {
    tmp.seeds(&[("CRAX", "CRAX"), ("BOOX", "BOOX"), ("HANX", "HANX")])
}

/// Fuzzes `target` with the plain driver until a crash and a hang are saved and the campaign
/// has gone on after them; checks the saved crash crashes the target when run by hand.
fn finds_crash_and_hang(mode: &str, target: &[&str], tag: &str) {
    let tmp = TempDir::new(tag);
    let seeds = near_bug_seeds(&tmp);
    let out = tmp.path().join("out");
    // The default timeout (1000 ms in these modes): at `-t 100` the timeout is wall time, and
    // two campaigns beside the other tests on two cores slowed an input past it now and then,
    // saved as a hang that then did not hang (as `-t` documents; a real hang costs a second).
    let mut args = vec!["--max-time", "300", "--"];
    args.extend(target);
    let mut campaign = Campaign::fuzz(&driver(), mode, &seeds, &out, &args);
    // Both planted crashes: abort() and a write through NULL (a SIGSEGV, which UBSan's runtime,
    // linked into every coverage build, must not turn into a report and exit(1)).
    // AFL++'s builds log no comparisons: their crashes take havoc's luck (usually seconds).
    campaign.wait_for(Duration::from_secs(200), "both crashes and a hang", |s| {
        stat(s, "saved_crashes") >= 2 && stat(s, "saved_hangs") >= 1
    });
    let after_find = stat(&campaign.stats(), "execs_done");
    campaign.wait_for(Duration::from_secs(60), "executions after the crash", |s| {
        stat(s, "execs_done") > after_find + 500
    });
    let stats = campaign.stats();
    let total = stat(&stats, "total_edges");
    assert!(stat(&stats, "edges_found") > 0 && total > 0, "{stats:?}");
    assert!(
        total < 1000,
        "map size should come from the target, not 65536: {stats:?}"
    );
    assert!(campaign.stop_with(libc::SIGINT).success());
    assert!(
        campaign.log().contains("reproduce with:"),
        "{}",
        campaign.log()
    );

    for crash in inputs(&out.join("crashes")) {
        let status = Command::new(target[0]).arg(&crash).status().unwrap();
        assert!(
            status.code().is_none(),
            "{crash:?} must crash {}: {status}",
            target[0]
        );
    }
    for hang in inputs(&out.join("hangs")) {
        assert!(
            still_running_after(target[0], &hang, Duration::from_secs(1)),
            "{hang:?} must hang {}",
            target[0]
        );
    }
}

/// Runs `program input` and tells whether it is still running after `wait` (then kills it).
fn still_running_after(program: &str, input: &Path, wait: Duration) -> bool {
    let mut child = Command::new(program)
        .arg(input)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(wait);
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    running
}

#[test]
fn forkserver_mode_on_our_standalone_target() {
    let target = fuzzer("crashme-standalone");
    finds_crash_and_hang("forkserver", &[target.to_str().unwrap(), "@@"], "fs-ours");
}

#[test]
fn persistent_mode_on_our_standalone_target() {
    // No @@: testcases go through shared memory.
    let target = fuzzer("crashme-standalone");
    finds_crash_and_hang("persistent", &[target.to_str().unwrap()], "persistent-ours");
}

/// crashme built by AFL++'s afl-clang-fast with its libFuzzer driver.
fn afl_build(dir: &Path) -> PathBuf {
    crashme_build(
        "afl-clang-fast",
        &["-O2", "-fsanitize=fuzzer"],
        dir,
        "crashme-afl",
    )
}

#[test]
#[cfg_attr(
    not(aflpp),
    ignore = "afl-clang-fast not found: the Debian package afl++ is not installed"
)]
fn afl_clang_fast_targets_work_in_both_modes() {
    let tmp = TempDir::new("afl-build");
    let target = afl_build(tmp.path());
    let target = target.to_str().unwrap();
    // Side by side: each waits on havoc's luck (AFL++'s builds log no comparisons).
    std::thread::scope(|both| {
        both.spawn(|| finds_crash_and_hang("forkserver", &[target], "fs-afl"));
        finds_crash_and_hang("persistent", &[target], "persistent-afl");
    });
}

#[test]
fn targets_that_are_not_fuzzing_targets_give_a_clear_error() {
    let tmp = TempDir::new("fs-errors");
    let out = tmp.path().join("out");
    let out = out.to_str().unwrap();
    let corpus = corpus("crashme");
    let corpus = corpus.to_str().unwrap();
    let driver = driver();
    let base = ["fuzz", "--mode", "forkserver", "-i", corpus, "-o", out];
    let with = |extra: &[&'static str]| {
        base.iter()
            .copied()
            .chain(extra.iter().copied())
            .collect::<Vec<_>>()
    };
    assert_one_line_error(&driver, &with(&[]), "need a target");
    assert_one_line_error(
        &driver,
        &with(&["--", "/nonexistent/target"]),
        "cannot run target",
    );
    // Exits at start without a word.
    assert_one_line_error(
        &driver,
        &with(&["--", "/bin/true"]),
        "is not a fuzzing target",
    );
    // A program that ignores the fork server protocol and waits forever (the probe gives up
    // after 10 s; `run` fails the test if the command does not end).
    assert_one_line_error(
        &driver,
        &with(&["--", "/bin/sleep", "600"]),
        "is not a fuzzing target",
    );
    // In-process modes need a harness linked into the binary.
    assert_one_line_error(
        &driver,
        &["fuzz", "-i", corpus, "-o", out],
        "no instrumented harness",
    );
    let crashme = fuzzer("crashme");
    assert_one_line_error(
        &crashme,
        &["fuzz", "-i", corpus, "-o", out, "--", "./x"],
        "needs --mode forkserver",
    );
}

#[test]
fn afl_style_program_with_its_own_main_builds_and_fuzzes_unchanged() {
    // harnesses/aflstyle uses __AFL_FUZZ_INIT, __AFL_INIT, __AFL_LOOP and the shared-memory
    // testcase macros, as written for afl-clang-fast.
    let tmp = TempDir::new("aflstyle");
    let seeds = near_bug_seeds(&tmp);
    let out = tmp.path().join("out");
    let target = fuzzer("aflstyle-standalone");
    let args = ["--max-time", "150", "--", target.to_str().unwrap()];
    let mut campaign = Campaign::fuzz(&driver(), "persistent", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(120), "a crash", |s| {
        stat(s, "saved_crashes") >= 1
    });
    assert!(campaign.stop_with(libc::SIGINT).success());
    let crash = inputs(&out.join("crashes"))[0].clone();
    assert!(std::fs::read(&crash).unwrap().starts_with(b"CRAS"));
    // Run by hand, the program reads its input from stdin.
    let status = Command::new(&target)
        .stdin(std::fs::File::open(&crash).unwrap())
        .status()
        .unwrap();
    assert!(status.code().is_none(), "{status}");
}

#[test]
fn asan_reports_are_crashes_in_persistent_mode() {
    let tmp = TempDir::new("asan");
    let target = tmp.path().join("overflow-asan");
    let flags = ["--standalone", "-O1", "-fsanitize=address"];
    compile(&libafl_cc(), &flags, "asan/overflow.c", &target, &[]);
    let seeds = tmp.seeds(&[("near", "OVEX")]);
    let out = tmp.path().join("out");
    let args = ["--max-time", "120", "--", target.to_str().unwrap()];
    let mut campaign = Campaign::fuzz(&driver(), "persistent", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(90), "the ASan crash", |s| {
        stat(s, "saved_crashes") >= 1
    });
    assert!(campaign.stop_with(libc::SIGINT).success());
    let crash = inputs(&out.join("crashes"))[0].clone();
    assert!(std::fs::read(&crash).unwrap().starts_with(b"OVER"));
    // By hand, the target reports it and aborts (the runtime's abort_on_error=1).
    let by_hand = Command::new(&target).arg(&crash).output().unwrap();
    assert!(by_hand.status.code().is_none(), "{}", by_hand.status);
    assert!(String::from_utf8_lossy(&by_hand.stderr).contains("heap-buffer-overflow"));
}

/// The fuzzer's ends of a fork server's pipes, driven by hand as LibAFL's executor drives them.
struct FuzzerEnds {
    ctl: std::io::PipeWriter,
    st: std::io::PipeReader,
}

impl FuzzerEnds {
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        std::io::Read::read_exact(&mut self.st, &mut buf).unwrap();
        buf
    }

    fn word(&mut self) -> u32 {
        u32::from_ne_bytes(self.bytes(4).try_into().unwrap())
    }

    fn send(&mut self, word: u32) {
        std::io::Write::write_all(&mut self.ctl, &word.to_ne_bytes()).unwrap();
    }

    /// The fork server's hello: the version, its complement back, the options, the map size,
    /// a dictionary when offered, the version again.
    fn hello(&mut self) {
        let version = self.word();
        self.send(!version);
        let options = self.word();
        self.word();
        if options & 0x800 != 0 {
            let len = self.word() as usize;
            self.bytes(len);
        }
        assert_eq!(self.word(), version);
    }
}

/// What waitpid reports of a stopped child, and a persistent child's answer.
const STOPPED: u32 = ((libc::SIGSTOP as u32) << 8) | 0x7f;

fn signal(pid: u32, signal: i32) -> i32 {
    // SAFETY: kill(2) has no memory effects; the pids are this test's own children.
    unsafe { libc::kill(pid as libc::pid_t, signal) }
}

/// One persistent child of ours through the two ways a timeout can end: one that raced the
/// child's answer (the child answered, then the signal came) leaves the same child running the
/// next input; one that caught the child in a hang gets its death reported and a fresh child.
#[test]
fn a_timeout_that_raced_the_answer_leaves_the_persistent_child_running() {
    use std::os::fd::AsRawFd;
    let tmp = TempDir::new("raced-timeout");
    let input = tmp.path().join("input");
    std::fs::write(&input, "hello").unwrap();
    let (ctl_read, ctl) = std::io::pipe().unwrap();
    let (st, st_write) = std::io::pipe().unwrap();
    let (ctl_fd, st_fd) = (ctl_read.as_raw_fd(), st_write.as_raw_fd());
    let mut command = Command::new(fuzzer("crashme-standalone"));
    command
        .arg(&input)
        .env("__AFL_PERSISTENT", "1")
        .env("__LAFUZZ_TIMEOUT_SIGNAL", libc::SIGSTKFLT.to_string());
    // SAFETY: only dup2, async-signal-safe, between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            if libc::dup2(ctl_fd, 198) < 0 || libc::dup2(st_fd, 199) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut server = command.spawn().unwrap();
    drop((ctl_read, st_write));
    let mut fuzzer = FuzzerEnds { ctl, st };
    fuzzer.hello();

    fuzzer.send(0);
    let child = fuzzer.word();
    assert_eq!(
        fuzzer.word(),
        STOPPED,
        "a persistent child's answer reads as a stop"
    );
    // The timeout comes after the answer, before the fuzzer read it.
    fuzzer.send(0);
    assert_eq!(fuzzer.word(), child);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(signal(child, libc::SIGSTKFLT), 0);
    assert_eq!(
        fuzzer.word(),
        STOPPED,
        "the answer was written before the signal"
    );
    fuzzer.send(1);
    assert_eq!(
        fuzzer.word(),
        child,
        "the child took the go and dropped the signal"
    );
    assert_eq!(fuzzer.word(), STOPPED);
    assert_eq!(signal(child, 0), 0, "the child is still running");

    // A real hang: the signal ends the child, its fork server reports it, a fresh child follows.
    std::fs::write(&input, "HANG").unwrap();
    fuzzer.send(0);
    assert_eq!(fuzzer.word(), child);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(signal(child, libc::SIGSTKFLT), 0);
    let status = fuzzer.word() as i32;
    assert!(
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSTKFLT,
        "{status:#x}"
    );
    std::fs::write(&input, "hello").unwrap();
    fuzzer.send(1);
    let fresh = fuzzer.word();
    assert_ne!(fresh, child);
    assert_eq!(fuzzer.word(), STOPPED);

    // The fuzzer stops sending: the child and its fork server end.
    let FuzzerEnds { ctl, st: _st } = fuzzer;
    drop(ctl);
    assert!(server.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(100));
    assert_ne!(signal(fresh, 0), 0, "the child outlived its fork server");
}
