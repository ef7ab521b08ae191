//! One snapshot of the campaign's statistics, and its three renderings: AFL++'s
//! `fuzzer_stats` and `plot_data` lines, and the console status line.

use std::{
    fmt::Write as _,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

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
    /// Inputs that took a client over the memory limit.
    pub saved_ooms: usize,
    /// Inputs that leaked memory.
    pub saved_leaks: usize,
    /// Clients started again after dying without saving their state.
    pub client_restarts: u64,
    pub edges_found: u64,
    pub total_edges: u64,
    pub clients: usize,
    /// Dictionary tokens learned from comparisons (the most any client learned).
    pub cmplog_tokens: u64,
    /// The scheduler's passes over the whole queue (the most any client made).
    pub cycles_done: u64,
    /// When the newest queue entry and crash were saved (seconds since the epoch; 0: none).
    pub last_find: u64,
    pub last_crash: u64,
    /// The share of edges that behaved the same in calibration's repeated runs, in percent
    /// (averaged over the clients; None before any calibration).
    pub stability: Option<f64>,
    /// The largest resident memory a client has had, in MiB.
    pub peak_rss_mb: u64,
    /// The per-input timeout in milliseconds, `-t`'s or chosen from the seeds (the longest
    /// over the clients; 0 before a client reported it).
    pub exec_timeout_ms: u64,
}

impl Snapshot {
    /// `fuzzer_stats`: AFL++'s `key : value` lines.
    pub fn fuzzer_stats(&self, start_time: u64, cores: usize, command_line: &str) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let bitmap_cvg = self.bitmap_cvg();
        let mut s = String::new();
        let stability = self.stability.map(|p| format!("{p:.2}%"));
        // AFL++'s keys for what we measure (afl-whatsup reads them), then ours.
        for (key, value) in [
            ("start_time", start_time.to_string()),
            ("last_update", now.to_string()),
            ("run_time", self.run_time.as_secs().to_string()),
            ("fuzzer_pid", std::process::id().to_string()),
            ("cycles_done", self.cycles_done.to_string()),
            ("execs_done", self.execs_done.to_string()),
            ("execs_per_sec", format!("{:.2}", self.execs_per_sec)),
            ("corpus_count", self.corpus_count.to_string()),
            ("saved_crashes", self.saved_crashes.to_string()),
            ("saved_hangs", self.saved_hangs.to_string()),
            ("last_find", self.last_find.to_string()),
            ("last_crash", self.last_crash.to_string()),
            ("bitmap_cvg", format!("{bitmap_cvg:.2}%")),
            ("edges_found", self.edges_found.to_string()),
            ("total_edges", self.total_edges.to_string()),
            ("peak_rss_mb", self.peak_rss_mb.to_string()),
            ("exec_timeout", self.exec_timeout_ms.to_string()),
            ("cores", cores.to_string()),
            ("clients", self.clients.to_string()),
            ("saved_flaky_crashes", self.saved_flaky_crashes.to_string()),
            ("saved_ooms", self.saved_ooms.to_string()),
            ("saved_leaks", self.saved_leaks.to_string()),
            ("client_restarts", self.client_restarts.to_string()),
            ("cmplog_tokens", self.cmplog_tokens.to_string()),
            ("command_line", command_line.to_string()),
        ]
        .into_iter()
        .chain(stability.map(|s| ("stability", s)))
        {
            let _ = writeln!(s, "{key:<19}: {value}");
        }
        s
    }

    /// AFL++'s columns first, in its order (afl-plot reads them by position; `cur_item`,
    /// `pending_total`, `pending_favs` and `max_depth`, which this engine has no counterpart of,
    /// are 0), then ours.
    pub const PLOT_HEADER: &'static str = "# relative_time, cycles_done, cur_item, corpus_count, pending_total, pending_favs, map_size, saved_crashes, saved_hangs, max_depth, execs_per_sec, total_execs, edges_found, total_edges, saved_flaky_crashes, saved_ooms, saved_leaks";

    /// One `plot_data` line.
    pub fn plot_line(&self) -> String {
        format!(
            "{}, {}, 0, {}, 0, 0, {:.2}%, {}, {}, 0, {:.2}, {}, {}, {}, {}, {}, {}",
            self.run_time.as_secs(),
            self.cycles_done,
            self.corpus_count,
            self.bitmap_cvg(),
            self.saved_crashes,
            self.saved_hangs,
            self.execs_per_sec,
            self.execs_done,
            self.edges_found,
            self.total_edges,
            self.saved_flaky_crashes,
            self.saved_ooms,
            self.saved_leaks,
        )
    }

    /// The share of the map's entries found, in percent.
    fn bitmap_cvg(&self) -> f64 {
        if self.total_edges == 0 {
            0.0
        } else {
            100.0 * self.edges_found as f64 / self.total_edges as f64
        }
    }

    /// The console status line.
    pub fn status_line(&self) -> String {
        format!(
            "[{}] clients {} | execs {} | {}/s | corpus {} | edges {}/{} | crashes {} (+{} flaky) | hangs {} | ooms {} | leaks {}",
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
            self.saved_ooms,
            self.saved_leaks,
        )
    }
}

pub(super) fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
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
            saved_ooms: 4,
            saved_leaks: 6,
            client_restarts: 5,
            edges_found: 30,
            total_edges: 120,
            clients: 2,
            cmplog_tokens: 9,
            cycles_done: 4,
            last_find: 1_700_000_000,
            last_crash: 0,
            stability: Some(99.5),
            peak_rss_mb: 64,
            exec_timeout_ms: 20,
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
        assert_eq!(get("saved_ooms").as_deref(), Some("4"));
        assert_eq!(get("saved_leaks").as_deref(), Some("6"));
        assert_eq!(get("cycles_done").as_deref(), Some("4"));
        assert_eq!(get("last_find").as_deref(), Some("1700000000"));
        assert_eq!(get("stability").as_deref(), Some("99.50%"));
        assert_eq!(get("peak_rss_mb").as_deref(), Some("64"));
        assert_eq!(get("client_restarts").as_deref(), Some("5"));
        assert_eq!(get("exec_timeout").as_deref(), Some("20"));
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
            .starts_with("75, 4, 0, 7, 0, 0, 25.00%, 2, 1, 0, 13.33, 1000, 30, 120, 3"));
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
