//! What the monitor reads itself, beside LibAFL's statistics: when the newest queue entry and
//! crash were saved (on disk, where the user finds them), and what a resumed campaign had done
//! before (its last `fuzzer_stats`), so run time, executions and `plot_data` go on from there.
//! The clients' peak memory is `target::memory`'s.

use std::{
    path::Path,
    time::{Duration, UNIX_EPOCH},
};

use crate::platform::output;

/// Seconds since the epoch at which the newest input in `dir` was saved; 0 for none.
pub fn newest_save(dir: &Path) -> u64 {
    output::newest_input(dir)
        .and_then(|file| file.metadata().ok()?.modified().ok())
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_secs())
}

/// What an earlier run of a campaign in `out` had done: its run time and executions.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Before {
    pub run_time: Duration,
    pub execs_done: u64,
}

impl Before {
    pub fn read(out: &Path) -> Self {
        let text = std::fs::read_to_string(output::stats_file(out)).unwrap_or_default();
        let stats = output::parse_fuzzer_stats(&text);
        let number = |key: &str| stats.get(key).and_then(|v| v.parse::<u64>().ok());
        Self {
            run_time: Duration::from_secs(number("run_time").unwrap_or(0)),
            execs_done: number("execs_done").unwrap_or(0),
        }
    }
}
