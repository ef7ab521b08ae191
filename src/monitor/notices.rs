//! What the campaign says as it goes: clients restarted, and each new finding with what it is
//! (its description's kind and top frame, see `triage/`) and the command that reproduces it.

use std::path::{Path, PathBuf};

use super::{Console, Snapshot};
use crate::{
    engine::exec_timeout::HANG_TIMEOUT, platform::output, target::reproduce::Reproduce,
    triage::Description,
};

/// What was already reported.
pub struct Since {
    out: PathBuf,
    reproduce: Reproduce,
    crashes: usize,
    flaky_crashes: usize,
    hangs: usize,
    ooms: usize,
    leaks: usize,
    restarts: usize,
    /// The timeout the clients chose was told (or it was fixed, not chosen: nothing to tell).
    timeout_told: bool,
}

impl Since {
    /// What the output directory holds now is old news (a resumed campaign's findings).
    pub fn new(out: &Path, reproduce: Reproduce, timeout_fixed: bool) -> Self {
        Self {
            out: out.to_path_buf(),
            reproduce,
            crashes: output::count_inputs(&output::crashes_dir(out)),
            flaky_crashes: output::count_inputs(&output::flaky_crashes_dir(out)),
            hangs: output::count_inputs(&output::hangs_dir(out)),
            ooms: output::count_inputs(&output::ooms_dir(out)),
            leaks: output::count_inputs(&output::leaks_dir(out)),
            restarts: restart_lines(out).len(),
            timeout_told: timeout_fixed,
        }
    }

    /// What happened since the last call, as notice lines (no findings with `--quiet`).
    pub fn new_events(&mut self, snap: &Snapshot, console: &Console) -> Vec<String> {
        let restarts = restart_lines(&self.out);
        let mut notices: Vec<String> = restarts
            .iter()
            .skip(self.restarts)
            .map(|line| format!("lafuzz: {line}"))
            .collect();
        self.restarts = self.restarts.max(restarts.len());
        if !self.timeout_told && snap.exec_timeout_ms > 0 && *console != Console::Quiet {
            self.timeout_told = true;
            notices.push(format!(
                "lafuzz: inputs time out after {} ms, chosen from the seeds' run times as AFL++ \
                 does (-t auto, the default; -t MS fixes it); one is saved as a hang when it also runs \
                 past {} ms alone",
                snap.exec_timeout_ms,
                HANG_TIMEOUT.as_millis()
            ));
        }
        let out = &self.out;
        let kinds = [
            (
                snap.saved_crashes,
                &mut self.crashes,
                output::crashes_dir(out),
                "crash",
            ),
            (
                snap.saved_flaky_crashes,
                &mut self.flaky_crashes,
                output::flaky_crashes_dir(out),
                "flaky crash (it does not crash alone; the inputs before it are saved with it)",
            ),
            (
                snap.saved_hangs,
                &mut self.hangs,
                output::hangs_dir(out),
                "hang",
            ),
            (
                snap.saved_ooms,
                &mut self.ooms,
                output::ooms_dir(out),
                "out-of-memory input",
            ),
            (
                snap.saved_leaks,
                &mut self.leaks,
                output::leaks_dir(out),
                "leak",
            ),
        ];
        let new_files: Vec<(PathBuf, &str)> = kinds
            .into_iter()
            .filter_map(|(count, last, dir, what)| {
                let new = count > *last;
                *last = (*last).max(count);
                new.then(|| output::newest_input(&dir).map(|file| (file, what)))
                    .flatten()
            })
            .collect();
        if *console != Console::Quiet {
            for (file, what) in new_files {
                notices.extend(self.finding(&file, what));
            }
        }
        notices
    }

    /// `new crash saved: FILE (KIND at TOP FRAME)`, then the command that reproduces it.
    fn finding(&self, file: &Path, what: &str) -> [String; 2] {
        let sequence = file.is_dir();
        let command = self.reproduce.command(file, sequence);
        let described = std::fs::read_to_string(output::description_file(file))
            .ok()
            .and_then(|text| Description::read_text(&text))
            .map_or_else(String::new, |d| format!(" ({} at {})", d.kind, d.top_frame));
        [
            format!("new {what} saved: {}{described}", file.display()),
            format!("  reproduce with: {command}"),
        ]
    }
}

/// The client restarts logged so far (see `output::log_client_restart`).
pub fn restart_lines(out: &Path) -> Vec<String> {
    std::fs::read_to_string(output::client_restarts_file(out))
        .map(|text| text.lines().map(str::to_string).collect())
        .unwrap_or_default()
}
