//! The campaign's monitor, run by the broker: one status line a second on the console, and
//! AFL++'s `fuzzer_stats` and `plot_data` in the output directory.

use std::{
    fmt::Write as _,
    fs::OpenOptions,
    io::Write as _,
    path::{Path, PathBuf},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use libafl::monitors::{
    stats::{user_stats::UserStatsValue, ClientStatsManager},
    Monitor,
};
use libafl_bolts::{current_time, ClientId, Error};

use crate::{cmplog::LEARNED_TOKENS_STAT, output};

/// Name of the user statistic in which `MaxMapFeedback` reports the coverage map.
pub const EDGES_STAT: &str = "edges";

const PRINT_INTERVAL: Duration = Duration::from_secs(1);
const PLOT_INTERVAL: Duration = Duration::from_secs(5);

/// One snapshot of the whole campaign, all clients together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub run_time: Duration,
    pub execs_done: u64,
    pub execs_per_sec: f64,
    pub corpus_count: u64,
    pub saved_crashes: usize,
    pub saved_flaky_crashes: usize,
    pub saved_hangs: usize,
    pub edges_found: u64,
    pub total_edges: u64,
    pub clients: usize,
    /// Dictionary tokens learned from comparisons (the most any client learned).
    pub cmplog_tokens: u64,
}

impl Snapshot {
    /// `fuzzer_stats`: AFL++'s `key : value` lines.
    pub fn fuzzer_stats(&self, start_time: u64, cores: usize, command_line: &str) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let bitmap_cvg = if self.total_edges == 0 {
            0.0
        } else {
            100.0 * self.edges_found as f64 / self.total_edges as f64
        };
        let mut s = String::new();
        for (key, value) in [
            ("start_time", start_time.to_string()),
            ("last_update", now.to_string()),
            ("run_time", self.run_time.as_secs().to_string()),
            ("fuzzer_pid", std::process::id().to_string()),
            ("cores", cores.to_string()),
            ("clients", self.clients.to_string()),
            ("execs_done", self.execs_done.to_string()),
            ("execs_per_sec", format!("{:.2}", self.execs_per_sec)),
            ("corpus_count", self.corpus_count.to_string()),
            ("saved_crashes", self.saved_crashes.to_string()),
            ("saved_flaky_crashes", self.saved_flaky_crashes.to_string()),
            ("saved_hangs", self.saved_hangs.to_string()),
            ("edges_found", self.edges_found.to_string()),
            ("total_edges", self.total_edges.to_string()),
            ("bitmap_cvg", format!("{bitmap_cvg:.2}%")),
            ("cmplog_tokens", self.cmplog_tokens.to_string()),
            ("command_line", command_line.to_string()),
        ] {
            let _ = writeln!(s, "{key:<18}: {value}");
        }
        s
    }

    pub const PLOT_HEADER: &'static str = "# relative_time, execs_done, execs_per_sec, corpus_count, saved_crashes, saved_flaky_crashes, saved_hangs, edges_found, total_edges";

    /// One `plot_data` line.
    pub fn plot_line(&self) -> String {
        format!(
            "{}, {}, {:.2}, {}, {}, {}, {}, {}, {}",
            self.run_time.as_secs(),
            self.execs_done,
            self.execs_per_sec,
            self.corpus_count,
            self.saved_crashes,
            self.saved_flaky_crashes,
            self.saved_hangs,
            self.edges_found,
            self.total_edges
        )
    }

    /// The console status line.
    pub fn status_line(&self) -> String {
        format!(
            "[{}] clients {} | execs {} | {}/s | corpus {} | edges {}/{} | crashes {} (+{} flaky) | hangs {}",
            format_duration(self.run_time),
            self.clients,
            self.execs_done,
            self.execs_per_sec.round() as u64,
            self.corpus_count,
            self.edges_found,
            self.total_edges,
            self.saved_crashes,
            self.saved_flaky_crashes,
            self.saved_hangs,
        )
    }
}

fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// How a user reproduces a saved input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reproduce {
    /// This fuzzer binary's `replay` command.
    Replay { exe: String },
    /// The standalone target's own command line (`@@` is the input file, else stdin).
    Target { command: Vec<String> },
}

impl Reproduce {
    pub fn for_this_binary() -> Self {
        let exe = std::env::current_exe()
            .map_or_else(|_| "./fuzzer".to_string(), |p| p.display().to_string());
        Self::Replay { exe }
    }

    /// The command to paste; `sequence`: the file is a flaky crash's sequence directory.
    pub fn command(&self, file: &Path, sequence: bool) -> String {
        let file = file.display().to_string();
        match self {
            Self::Replay { exe } if sequence => format!("{exe} replay --sequence {file}"),
            Self::Replay { exe } => format!("{exe} replay {file}"),
            Self::Target { command } if command.iter().any(|a| a == "@@") => command
                .iter()
                .map(|a| if a == "@@" { file.as_str() } else { a.as_str() })
                .collect::<Vec<_>>()
                .join(" "),
            Self::Target { command } => format!("{} < {file}", command.join(" ")),
        }
    }
}

pub struct CampaignMonitor {
    out: PathBuf,
    cores: usize,
    start_time: u64,
    command_line: String,
    reproduce: Reproduce,
    last_print: Duration,
    last_plot: Duration,
    last_crashes: usize,
    last_flaky_crashes: usize,
    last_hangs: usize,
    /// The newest statistics, written once more when the campaign ends. Only the broker's
    /// copy has any: clients are forks that carry a copy of this monitor but never use it.
    latest: Option<Snapshot>,
}

impl CampaignMonitor {
    pub fn new(out: &Path, cores: usize, reproduce: Reproduce) -> Self {
        let start_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let plot = output::plot_file(out);
        if !plot.exists() {
            let _ = std::fs::write(&plot, format!("{}\n", Snapshot::PLOT_HEADER));
        }
        Self {
            out: out.to_path_buf(),
            cores,
            start_time,
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            reproduce,
            last_print: Duration::ZERO,
            last_plot: Duration::ZERO,
            last_crashes: output::count_inputs(&output::crashes_dir(out)),
            last_flaky_crashes: output::count_inputs(&output::flaky_crashes_dir(out)),
            last_hangs: output::count_inputs(&output::hangs_dir(out)),
            latest: None,
        }
    }

    fn write_stats(&self, snap: &Snapshot) {
        let text = snap.fuzzer_stats(self.start_time, self.cores, &self.command_line);
        if let Err(e) = output::write_atomic(&output::stats_file(&self.out), text.as_bytes()) {
            eprintln!("lafuzz: cannot write fuzzer_stats: {e}");
        }
    }

    fn snapshot(&self, stats: &mut ClientStatsManager) -> Snapshot {
        let (edges_found, total_edges) = stats
            .client_stats()
            .values()
            .filter_map(|c| match c.get_user_stats(EDGES_STAT).map(|s| s.value()) {
                Some(UserStatsValue::Ratio(hit, total)) => Some((*hit, *total)),
                _ => None,
            })
            .max()
            .unwrap_or_default();
        let cmplog_tokens = stats
            .client_stats()
            .values()
            .filter_map(
                |c| match c.get_user_stats(LEARNED_TOKENS_STAT).map(|s| s.value()) {
                    Some(UserStatsValue::Number(n)) => Some(*n),
                    _ => None,
                },
            )
            .max()
            .unwrap_or_default();
        let global = stats.global_stats();
        Snapshot {
            run_time: global.run_time,
            execs_done: global.total_execs,
            execs_per_sec: global.execs_per_sec,
            corpus_count: 0,
            saved_crashes: 0,
            saved_flaky_crashes: 0,
            saved_hangs: 0,
            edges_found,
            total_edges,
            clients: global.client_stats_count,
            cmplog_tokens,
        }
    }

    /// The corpus and the solutions are counted on disk: what the user finds there is what we
    /// report.
    fn count_solutions(&self, snap: &mut Snapshot) {
        snap.corpus_count = output::count_inputs(&output::queue_dir(&self.out)) as u64;
        snap.saved_crashes = output::count_inputs(&output::crashes_dir(&self.out));
        snap.saved_flaky_crashes = output::count_inputs(&output::flaky_crashes_dir(&self.out));
        snap.saved_hangs = output::count_inputs(&output::hangs_dir(&self.out));
    }

    fn report_new_solutions(&mut self, snap: &Snapshot) {
        let out = &self.out;
        let kinds = [
            (
                snap.saved_crashes,
                &mut self.last_crashes,
                output::crashes_dir(out),
                "crash",
                false,
            ),
            (
                snap.saved_flaky_crashes,
                &mut self.last_flaky_crashes,
                output::flaky_crashes_dir(out),
                "flaky crash (it does not crash alone; the inputs before it are saved with it)",
                true,
            ),
            (
                snap.saved_hangs,
                &mut self.last_hangs,
                output::hangs_dir(out),
                "hang",
                false,
            ),
        ];
        for (count, last, dir, what, sequence) in kinds {
            if count > *last {
                *last = count;
                if let Some(file) = output::newest_input(&dir) {
                    println!(
                        "new {what} saved: {}\n  reproduce with: {}",
                        file.display(),
                        self.reproduce.command(&file, sequence)
                    );
                }
            }
        }
    }
}

impl Monitor for CampaignMonitor {
    fn display(
        &mut self,
        stats: &mut ClientStatsManager,
        _event_msg: &str,
        _sender_id: ClientId,
    ) -> Result<(), Error> {
        let now = current_time();
        let mut snap = self.snapshot(stats);
        if now.saturating_sub(self.last_print) < PRINT_INTERVAL {
            self.latest = Some(snap);
            return Ok(());
        }
        self.last_print = now;
        self.count_solutions(&mut snap);
        self.report_new_solutions(&snap);
        println!("{}", snap.status_line());
        self.write_stats(&snap);
        let plot_line = snap.plot_line();
        self.latest = Some(snap);
        if now.saturating_sub(self.last_plot) >= PLOT_INTERVAL {
            self.last_plot = now;
            if let Ok(mut plot) = OpenOptions::new()
                .append(true)
                .open(output::plot_file(&self.out))
            {
                let _ = writeln!(plot, "{plot_line}");
            }
        }
        Ok(())
    }
}

impl Drop for CampaignMonitor {
    /// The broker drops its monitor when every client has exited: write the final numbers.
    fn drop(&mut self) {
        if let Some(mut snap) = self.latest.take() {
            self.count_solutions(&mut snap);
            println!("{}", snap.status_line());
            self.write_stats(&snap);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        Snapshot {
            run_time: Duration::from_secs(75),
            execs_done: 1000,
            execs_per_sec: 13.333,
            corpus_count: 7,
            saved_crashes: 2,
            saved_flaky_crashes: 3,
            saved_hangs: 1,
            edges_found: 30,
            total_edges: 120,
            clients: 2,
            cmplog_tokens: 9,
        }
    }

    #[test]
    fn fuzzer_stats_has_afl_keys() {
        let text = sample().fuzzer_stats(1, 2, "fuzz");
        let get = |key: &str| {
            text.lines()
                .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim() == key))
                .map(|(_, v)| v.trim().to_string())
        };
        assert_eq!(get("run_time").as_deref(), Some("75"));
        assert_eq!(get("execs_done").as_deref(), Some("1000"));
        assert_eq!(get("execs_per_sec").as_deref(), Some("13.33"));
        assert_eq!(get("corpus_count").as_deref(), Some("7"));
        assert_eq!(get("saved_crashes").as_deref(), Some("2"));
        assert_eq!(get("saved_hangs").as_deref(), Some("1"));
        assert_eq!(get("saved_flaky_crashes").as_deref(), Some("3"));
        assert_eq!(get("edges_found").as_deref(), Some("30"));
        assert_eq!(get("total_edges").as_deref(), Some("120"));
        assert_eq!(get("cores").as_deref(), Some("2"));
        assert_eq!(get("bitmap_cvg").as_deref(), Some("25.00%"));
        assert_eq!(get("cmplog_tokens").as_deref(), Some("9"));
    }

    #[test]
    fn plot_line_matches_header_columns() {
        let columns = Snapshot::PLOT_HEADER
            .trim_start_matches("# ")
            .split(", ")
            .count();
        assert_eq!(sample().plot_line().split(", ").count(), columns);
        assert!(sample()
            .plot_line()
            .starts_with("75, 1000, 13.33, 7, 2, 3, 1, 30, 120"));
    }

    #[test]
    fn reproduce_commands_are_ready_to_paste() {
        let file = Path::new("out/crashes/abc");
        let replay = Reproduce::Replay { exe: "./fz".into() };
        assert_eq!(replay.command(file, false), "./fz replay out/crashes/abc");
        assert_eq!(
            replay.command(file, true),
            "./fz replay --sequence out/crashes/abc"
        );
        let with_file = Reproduce::Target {
            command: vec!["./t".into(), "-x".into(), "@@".into()],
        };
        assert_eq!(with_file.command(file, false), "./t -x out/crashes/abc");
        let with_stdin = Reproduce::Target {
            command: vec!["./t".into()],
        };
        assert_eq!(with_stdin.command(file, false), "./t < out/crashes/abc");
    }

    #[test]
    fn status_line_shows_edges_and_solutions() {
        let line = sample().status_line();
        assert!(line.contains("edges 30/120"), "{line}");
        assert!(
            line.contains("crashes 2") && line.contains("hangs 1"),
            "{line}"
        );
        assert!(line.starts_with("[0:01:15]"), "{line}");
    }
}
