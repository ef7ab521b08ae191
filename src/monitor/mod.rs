//! The campaign's monitor, run by the broker: on the console one status line a second, or a
//! status screen redrawn once a second (`screen.rs`, on a terminal), and AFL++'s
//! `fuzzer_stats` and `plot_data` in the output directory (formatted in `stats.rs`); the
//! notices of each new finding, with the command that reproduces it (`notices.rs`).

mod notices;
mod observed;
mod reported;
mod screen;
mod stats;
pub mod terminal;

use std::{
    fs::OpenOptions,
    io::Write as _,
    path::{Path, PathBuf},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use libafl::monitors::{stats::ClientStatsManager, Monitor};
use libafl_bolts::{current_time, ClientId, Error};

pub use stats::Snapshot;

use crate::{
    cmplog::learned_tokens::LEARNED_TOKENS_STAT,
    engine::{exec_timeout::EXEC_TIMEOUT_STAT, CYCLES_DONE_STAT},
    platform::output,
    target::{memory, reproduce::Reproduce},
};

/// Name of the user statistic in which the coverage feedback (`novelty`) reports the map.
pub const EDGES_STAT: &str = "edges";

const PRINT_INTERVAL: Duration = Duration::from_secs(1);
const PLOT_INTERVAL: Duration = Duration::from_secs(5);
/// Notice lines kept for the screen's "latest findings" and printed again when it is left.
const KEPT_NOTICES: usize = 20;

/// How the monitor shows the campaign on stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Console {
    /// `--quiet`: no status lines, no finding notices.
    Quiet,
    /// A status line a second, and the notices as they come.
    Lines,
    /// The status screen; `label` says what the campaign runs (mode, comparison solving).
    Screen { label: String },
}

pub struct CampaignMonitor {
    out: PathBuf,
    cores: usize,
    start_time: u64,
    command_line: String,
    /// What was already reported, to say what is new.
    notices_since: notices::Since,
    console: Console,
    /// The status screen, once the broker first draws it (never in the clients).
    screen: Option<terminal::Screen>,
    /// The latest notice lines, oldest first (see `KEPT_NOTICES`).
    notices: Vec<String>,
    last_print: Duration,
    last_plot: Duration,
    /// What the campaign had done before this run (resumed from the same `-o`).
    before: observed::Before,
    peak_rss_mb: u64,
    /// The most queue cycles reported: a client restarted from older saved state reports fewer.
    cycles_done: u64,
    /// The newest statistics, written once more when the campaign ends. Only the broker's
    /// copy has any: clients are forks that carry a copy of this monitor but never use it.
    latest: Option<Snapshot>,
}

impl CampaignMonitor {
    pub fn new(
        out: &Path,
        cores: usize,
        reproduce: Reproduce,
        timeout_fixed: bool,
        console: Console,
    ) -> Self {
        let start_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let plot = output::plot_file(out);
        // A resumed campaign's lines go on in its file; one in another layout starts again.
        let header = std::fs::read_to_string(&plot)
            .ok()
            .and_then(|t| t.lines().next().map(str::to_string));
        if header.as_deref() != Some(Snapshot::PLOT_HEADER) {
            let _ = std::fs::write(&plot, format!("{}\n", Snapshot::PLOT_HEADER));
        }
        Self {
            out: out.to_path_buf(),
            cores,
            start_time,
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            notices_since: notices::Since::new(out, reproduce, timeout_fixed),
            console,
            screen: None,
            notices: Vec::new(),
            last_print: Duration::ZERO,
            last_plot: Duration::ZERO,
            before: observed::Before::read(out),
            peak_rss_mb: 0,
            cycles_done: 0,
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
        let (edges_found, total_edges) = reported::edges(stats);
        let stability = reported::stability(stats);
        let number = |name| reported::most(stats, name);
        let (cycles_done, cmplog_tokens) = (number(CYCLES_DONE_STAT), number(LEARNED_TOKENS_STAT));
        let exec_timeout_ms = number(EXEC_TIMEOUT_STAT);
        let global = stats.global_stats();
        Snapshot {
            run_time: self.before.run_time + global.run_time,
            execs_done: self.before.execs_done + global.total_execs,
            cycles_done,
            stability,
            peak_rss_mb: self.peak_rss_mb,
            last_find: 0,
            last_crash: 0,
            execs_per_sec: global.execs_per_sec,
            corpus_count: 0,
            saved_crashes: 0,
            saved_flaky_crashes: 0,
            saved_hangs: 0,
            saved_ooms: 0,
            saved_leaks: 0,
            client_restarts: 0,
            edges_found,
            total_edges,
            // A client that was killed and restarted is listed twice by LibAFL: its successor
            // takes its place.
            clients: global.client_stats_count.min(self.cores),
            cmplog_tokens,
            exec_timeout_ms,
        }
    }

    /// The corpus and the solutions are counted on disk: what the user finds there is what we
    /// report.
    fn count_solutions(&self, snap: &mut Snapshot) {
        snap.corpus_count = output::count_inputs(&output::queue_dir(&self.out)) as u64;
        snap.saved_crashes = output::count_inputs(&output::crashes_dir(&self.out));
        snap.saved_flaky_crashes = output::count_inputs(&output::flaky_crashes_dir(&self.out));
        snap.saved_hangs = output::count_inputs(&output::hangs_dir(&self.out));
        snap.saved_ooms = output::count_inputs(&output::ooms_dir(&self.out));
        snap.saved_leaks = output::count_inputs(&output::leaks_dir(&self.out));
        snap.client_restarts = notices::restart_lines(&self.out).len() as u64;
        snap.last_find = observed::newest_save(&output::queue_dir(&self.out));
        snap.last_crash = observed::newest_save(&output::crashes_dir(&self.out));
    }

    /// The peak resident memory of the clients, looked at once a second, and the most queue
    /// cycles so far.
    fn measure_memory(&mut self, snap: &mut Snapshot) {
        self.peak_rss_mb = self.peak_rss_mb.max(memory::largest_in_process_tree_mb());
        snap.peak_rss_mb = self.peak_rss_mb;
        self.cycles_done = self.cycles_done.max(snap.cycles_done);
        snap.cycles_done = self.cycles_done;
    }

    /// Shows the notices and the numbers: on the screen, or as lines.
    fn show(&mut self, snap: &Snapshot, notices: Vec<String>, stats: &mut ClientStatsManager) {
        let Console::Screen { label } = &self.console else {
            for line in &notices {
                println!("{line}");
            }
            if self.console == Console::Lines {
                println!("{}", snap.status_line());
            }
            return;
        };
        self.notices.extend(notices);
        let extra = self.notices.len().saturating_sub(KEPT_NOTICES);
        self.notices.drain(..extra);
        if self.screen.is_none() {
            match terminal::Screen::enter() {
                Ok(screen) => self.screen = Some(screen),
                Err(e) => {
                    // Lines, then: the campaign matters more than its screen.
                    eprintln!("lafuzz: cannot draw the status screen ({e}); status lines follow");
                    self.console = Console::Lines;
                    return;
                }
            }
        }
        let clients = reported::clients(stats);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let view = screen::View {
            snap,
            label,
            clients: &clients,
            findings: &self.notices,
            now,
        };
        if let Some(screen) = &mut self.screen {
            screen.draw(|frame| screen::render(frame, &view));
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
        self.measure_memory(&mut snap);
        let notices = self.notices_since.new_events(&snap, &self.console);
        self.show(&snap, notices, stats);
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
    /// The broker drops its monitor when its loop ends (every client has exited, or the
    /// campaign is stopped): write the final numbers. A screen is left first, and what it
    /// showed last printed, so the scrollback keeps a record.
    fn drop(&mut self) {
        let left_screen = self.screen.take().is_some();
        if let Some(mut snap) = self.latest.take() {
            self.count_solutions(&mut snap);
            let mut notices = self.notices_since.new_events(&snap, &self.console);
            if left_screen {
                notices.splice(0..0, self.notices.drain(..));
            }
            for line in &notices {
                println!("{line}");
            }
            if self.console != Console::Quiet {
                println!("{}", snap.status_line());
            }
            self.write_stats(&snap);
        }
    }
}
