//! Running a finding again, alone in a fresh process, to describe it: this binary's `replay`
//! for the modes that link the harness, the standalone target's own command line for the
//! others. In-process modes also learn from it whether a crash reproduces alone.

use std::{
    io::Read as _,
    path::Path,
    process::{Child, Command, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

use super::{description::Description, symbolize};
use crate::target::{reproduce::Reproduce, runtime_abi};

/// Runs one input alone and reads what it printed.
#[derive(Debug, Clone)]
pub struct Describer {
    /// How the finding's own reproduce line runs it: this binary's `replay` (its children
    /// print their stack, `target/stack.rs`), under the campaign's memory limits so that an
    /// input over the malloc limit ends as out-of-memory, as in the campaign; or the
    /// standalone target's command line (`@@` is the input, else stdin).
    how: Reproduce,
    timeout: Duration,
}

/// What running a finding again showed.
#[derive(Debug, Clone)]
pub struct Rerun {
    /// It failed again (crash, out of memory or leak; for a hang, it timed out again).
    pub failed: bool,
    pub description: Description,
}

/// How long a timed-out target may take to print its stack (our runtime's printer).
const STACK_PRINT_TIME: Duration = Duration::from_secs(5);

/// A run's output is cut here: the report is at its start.
const MAX_OUTPUT: u64 = 1 << 20;

impl Describer {
    /// Runs findings as `how` reproduces them, a hang being one that runs past `timeout`.
    pub fn new(how: Reproduce, timeout: Duration) -> Self {
        Self { how, timeout }
    }

    /// How a described finding is reproduced.
    pub fn reproduce(&self) -> &Reproduce {
        &self.how
    }

    /// How long an input may run before it is a hang.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `input` (a saved file) and describes what it did.
    pub fn run(&self, input: &Path) -> Rerun {
        match &self.how {
            Reproduce::Replay { exe, memory_args } => {
                let mut replay = Command::new(exe);
                // The running symbolizer knows the binary already (see `symbolize.rs`).
                if symbolize::shared_running() {
                    let options = std::env::var("ASAN_OPTIONS").unwrap_or_default();
                    replay.env("ASAN_OPTIONS", format!("{options}:symbolize=0"));
                }
                let output = replay
                    .args(["replay", "-t", &self.timeout.as_millis().to_string()])
                    .args(memory_args)
                    .arg(input)
                    .stdin(Stdio::null())
                    .output();
                let Ok(output) = output else {
                    return unknown();
                };
                let text = String::from_utf8_lossy(&output.stderr).into_owned()
                    + &String::from_utf8_lossy(&output.stdout);
                let mut description = Description::parse(&text);
                symbolize::symbolize(&mut description.frames);
                // `replay` exits with 1 for a crash, out of memory or a leak, 2 for a hang.
                let failed = match description.kind.as_str() {
                    "timeout" => output.status.code() == Some(2),
                    _ => output.status.code() == Some(1),
                };
                Rerun {
                    failed,
                    description,
                }
            }
            Reproduce::Target { command } => self.run_target(command, input),
        }
    }

    fn run_target(&self, command: &[String], input: &Path) -> Rerun {
        let with_file = command.iter().any(|a| a == "@@");
        let args = command.iter().map(|a| {
            if a == "@@" {
                input.as_os_str()
            } else {
                a.as_ref()
            }
        });
        let mut args = args.collect::<Vec<_>>().into_iter();
        let Some(program) = args.next() else {
            return unknown();
        };
        let stdin = match with_file {
            true => Ok(Stdio::null()),
            false => std::fs::File::open(input).map(Stdio::from),
        };
        let mut target = Command::new(program);
        // Run alone: not as the fork server's child this client's environment would make it,
        // and printing its stack on a crash (our runtime's; a sanitizer's prints its own).
        for (name, _) in std::env::vars_os() {
            let name_text = name.to_string_lossy();
            if name_text.starts_with("__AFL") || name_text.starts_with("__LAFUZZ") {
                target.env_remove(&name);
            }
        }
        target.env(runtime_abi::print_stack_env(), "1");
        let child = stdin.and_then(|stdin| {
            target
                .args(args)
                .stdin(stdin)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
        });
        match child {
            Ok(child) => self.wait_described(child),
            Err(_) => unknown(),
        }
    }

    /// Waits for the target within the timeout; a signal or a sanitizer's exit is a failure.
    fn wait_described(&self, mut child: Child) -> Rerun {
        use std::os::unix::process::ExitStatusExt;
        let stderr = child.stderr.take();
        // Read while it runs: a long report would fill the pipe and block the target.
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(stderr) = stderr {
                let _ = stderr.take(MAX_OUTPUT).read_to_string(&mut text);
            }
            text
        });
        let start = Instant::now();
        let mut alarmed = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) if !alarmed => break Some(status),
                // Ended by the alarm below: a timeout, whose stack it printed.
                Ok(Some(_)) => break None,
                Ok(None) if start.elapsed() < self.timeout => sleep(Duration::from_millis(5)),
                // Out of time: SIGALRM first, which our runtime's stack printer takes, then
                // SIGKILL once it had the time to print.
                Ok(None) if !alarmed => {
                    alarmed = true;
                    // SAFETY: kill(2) on our own child, still unreaped.
                    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGALRM) };
                }
                Ok(None) if start.elapsed() < self.timeout + STACK_PRINT_TIME => {
                    sleep(Duration::from_millis(5));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let mut text = reader.join().unwrap_or_default();
        let failed = match status {
            None => {
                text.push_str("\ninput: TIMEOUT\n");
                true
            }
            Some(status) => match status.signal() {
                Some(sig) => {
                    let name = crate::target::stack::signal_name(sig);
                    text.push_str(&format!("\ninput: CRASH (signal {sig}, {name})\n"));
                    true
                }
                None => !status.success() && text.contains("ERROR: "),
            },
        };
        let mut description = Description::parse(&text);
        symbolize::symbolize(&mut description.frames);
        Rerun {
            failed,
            description,
        }
    }
}

fn unknown() -> Rerun {
    Rerun {
        failed: false,
        description: Description::parse(""),
    }
}
