//! The status screen end to end: a real campaign under a pseudo-terminal draws it, Ctrl-C stops
//! the campaign and leaves the terminal as it was; without a terminal, or with `--no-tui`, the
//! status lines are printed as before.

mod common;

use std::{
    fs::File,
    io::{Read as _, Write as _},
    os::{
        fd::FromRawFd as _,
        unix::process::{CommandExt as _, ExitStatusExt as _},
    },
    path::Path,
    process::{Child, Command, ExitStatus},
    sync::{Arc, Mutex},
    thread::sleep,
    time::{Duration, Instant},
};

use common::{corpus, fuzz_args, fuzzer, run, text, TempDir};

const ENTER_ALTERNATE_SCREEN: &str = "\x1b[?1049h";
const LEAVE_ALTERNATE_SCREEN: &str = "\x1b[?1049l";
const SHOW_CURSOR: &str = "\x1b[?25h";
/// What every status line holds (`Snapshot::status_line`).
const STATUS_LINE: &str = "clients 1 | execs ";

/// A command running as the leader of a new session whose controlling terminal is a pty, as
/// in a terminal window; everything it writes is collected.
struct PtyRun {
    child: Child,
    master: File,
    output: Arc<Mutex<Vec<u8>>>,
}

impl PtyRun {
    fn start(binary: &Path, args: &[&str]) -> Self {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty(3) writes the two descriptors into our locals; no name buffer, the
        // default line settings, and `size` is only read.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned by nothing else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        let mut command = Command::new(binary);
        command
            .args(args)
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        // SAFETY: only async-signal-safe calls between fork and exec: a new session, and the
        // pty (now stdin) made its controlling terminal, so Ctrl-C on it signals the command.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().unwrap();
        // The pty's slave side is now the command's alone: reading ends when it is closed.
        drop(command);
        let output = Arc::new(Mutex::new(Vec::new()));
        let (mut reader, collected) = (master.try_clone().unwrap(), output.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                collected.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self {
            child,
            master,
            output,
        }
    }

    fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits until the output holds all of `expected`, or panics after `limit`.
    fn wait_for_output(&mut self, limit: Duration, expected: &[&str]) {
        let start = Instant::now();
        while !expected.iter().all(|e| self.output().contains(e)) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "exited ({status}) before {expected:?}:\n{:?}",
                    self.output()
                );
            }
            assert!(
                start.elapsed() < limit,
                "no {expected:?} within {limit:?}:\n{:?}",
                self.output()
            );
            sleep(Duration::from_millis(100));
        }
    }

    fn wait(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // What was written last may still be on its way through the pty.
                sleep(Duration::from_millis(300));
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "did not exit within {limit:?}:\n{:?}",
                self.output()
            );
            sleep(Duration::from_millis(50));
        }
    }

    /// Processes still in the command's session (the campaign's group is in it too).
    fn session_members(&self) -> Vec<i32> {
        let session = self.child.id() as i32;
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                // Field 6 of /proc/PID/stat, after the parenthesised command name.
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| Some(s.rsplit_once(')')?.1.split_whitespace().nth(3)?.parse()))
                    .is_some_and(|sid: Result<i32, _>| sid == Ok(session))
            })
            .collect()
    }
}

impl Drop for PtyRun {
    fn drop(&mut self) {
        // Whatever happened in the test, leave nothing running.
        for pid in self.session_members() {
            // SAFETY: kill(2) on a process of the session this test started.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_screen_is_drawn_and_ctrl_c_restores_the_terminal() {
    let dir = TempDir::new("screen");
    let out = dir.path().join("out");
    let seeds = corpus("crashme");
    let args = fuzz_args(&seeds, &out, &["--mode", "direct"]);
    let mut pty = PtyRun::start(&fuzzer("crashme"), &args);
    let labels = [
        ENTER_ALTERNATE_SCREEN,
        "mode: direct, comparisons: on",
        "process timing",
        "overall results",
        "findings",
        "clients",
        // A client's line (ratatui moves the cursor over spaces, so one word).
        "│client",
    ];
    pty.wait_for_output(Duration::from_secs(60), &labels);
    // Ctrl-C as typed: the pty is still in cooked mode, so it is SIGINT for the command.
    pty.master.write_all(b"\x03").unwrap();
    let asked = Instant::now();
    let status = pty.wait(Duration::from_secs(20));
    assert!(
        asked.elapsed() < Duration::from_secs(6),
        "took {:?} to stop",
        asked.elapsed()
    );
    assert!(
        status.success() || status.signal() == Some(libc::SIGINT),
        "{status}"
    );
    let output = pty.output();
    let left = output
        .rfind(LEAVE_ALTERNATE_SCREEN)
        .unwrap_or_else(|| panic!("the screen was never left:\n{output:?}"));
    assert!(
        output.rfind(ENTER_ALTERNATE_SCREEN) < Some(left),
        "{output:?}"
    );
    let after = &output[left..];
    assert!(
        after.contains(SHOW_CURSOR),
        "cursor hidden at the end:\n{after:?}"
    );
    // The final status line is in the scrollback, after the screen.
    assert!(
        after.contains(STATUS_LINE),
        "no final status line:\n{after:?}"
    );
    let start = Instant::now();
    while !pty.session_members().is_empty() && start.elapsed() < Duration::from_secs(5) {
        sleep(Duration::from_millis(100));
    }
    assert_eq!(pty.session_members(), Vec::<i32>::new(), "left running");
}

#[test]
fn status_lines_without_a_terminal_and_with_no_tui() {
    let dir = TempDir::new("lines");
    let (out, seeds) = (dir.path().join("out"), corpus("crashme"));
    let piped = run(
        &fuzzer("crashme"),
        &fuzz_args(&seeds, &out, &["--max-time", "3"]),
    );
    let piped = text(&piped);
    assert!(piped.contains(STATUS_LINE), "{piped}");
    assert!(!piped.contains('\x1b'), "escape sequences in\n{piped:?}");

    let out = dir.path().join("out-no-tui");
    let args = fuzz_args(&seeds, &out, &["--max-time", "3", "--no-tui"]);
    let mut pty = PtyRun::start(&fuzzer("crashme"), &args);
    pty.wait(Duration::from_secs(60));
    let output = pty.output();
    assert!(output.contains(STATUS_LINE), "{output:?}");
    assert!(!output.contains('\x1b'), "escape sequences in\n{output:?}");
}
