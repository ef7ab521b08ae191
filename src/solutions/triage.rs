//! Re-running a crash alone in a fresh process, to tell reproducible crashes from flaky ones.

use std::{
    io,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use serde::{Deserialize, Serialize};

/// Re-runs a crashing input alone in a fresh process of this same binary (`replay`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Triage {
    exe: PathBuf,
    timeout: Duration,
}

impl Triage {
    pub fn for_this_binary(timeout: Duration) -> io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            timeout,
        })
    }

    /// True when `input` crashes on its own (`replay` exits with 1 for a crash).
    pub fn reproduces(&self, input: &Path) -> bool {
        Command::new(&self.exe)
            .args([
                "replay",
                "--quiet",
                "-t",
                &self.timeout.as_millis().to_string(),
            ])
            .arg(input)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.code() == Some(1))
    }
}
