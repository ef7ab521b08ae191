//! The libFuzzer front end's watch over a running campaign, from the supervising process:
//! libFuzzer's status lines from `fuzzer_stats`, new queue entries copied into the first
//! corpus directory, findings reported (and the run stopped) as libFuzzer does.

use std::{
    collections::HashSet,
    fs,
    path::{Path, PathBuf},
    time::{Duration, Instant, SystemTime},
};

use super::{report, write_artifact, Flags};
use crate::{
    minimize::sha1_name,
    platform::output,
    target::{isolated::Outcome, memory},
};

/// How often the watcher looks at the campaign.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// The campaign's numbers as libFuzzer prints them.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Stats {
    pub(super) execs: u64,
    execs_per_sec: u64,
    edges: u64,
    corpus: u64,
    corpus_bytes: u64,
    peak_rss_mb: u64,
}

impl Stats {
    pub(super) fn print(&self, event: &str) {
        eprintln!(
            "#{}\t{event} cov: {} ft: {} corp: {}/{}b exec/s: {} rss: {}Mb",
            self.execs,
            self.edges,
            self.edges,
            self.corpus,
            self.corpus_bytes,
            self.execs_per_sec,
            self.peak_rss_mb
        );
    }

    pub(super) fn print_final(&self, new_units: u64) {
        print_final_stats(self.execs, self.execs_per_sec, new_units, self.peak_rss_mb);
    }
}

/// `-print_final_stats=1`: the lines ClusterFuzz parses.
pub fn print_final_stats(execs: u64, execs_per_sec: u64, new_units: u64, peak_rss_mb: u64) {
    eprintln!("stat::number_of_executed_units: {execs}");
    eprintln!("stat::average_exec_per_sec:     {execs_per_sec}");
    eprintln!("stat::new_units_added:          {new_units}");
    eprintln!("stat::slowest_unit_time_sec:    0");
    eprintln!("stat::peak_rss_mb:              {peak_rss_mb}");
}

/// Watches the campaign from the supervising process.
pub(super) struct Watcher<'a> {
    flags: &'a Flags,
    work: PathBuf,
    pub(super) start: Instant,
    last_look: Instant,
    /// Queue files already copied into the first corpus directory.
    copied: HashSet<PathBuf>,
    /// SHA-1 names of what the corpus directories held at the start (seeds are not new).
    seeds: HashSet<String>,
    /// Findings already reported.
    reported: HashSet<PathBuf>,
    pub(super) new_units: u64,
    inited: bool,
    last_corpus: u64,
    next_pulse: u64,
    peak_rss_mb: u64,
    /// Set by the finding that ends the run.
    pub(super) exit_code: Option<i32>,
}

impl<'a> Watcher<'a> {
    pub(super) fn new(flags: &'a Flags, work: &Path) -> Self {
        Self {
            flags,
            work: work.to_path_buf(),
            start: Instant::now(),
            last_look: Instant::now(),
            copied: HashSet::new(),
            seeds: flags
                .paths
                .iter()
                .flat_map(|dir| output::visible_entries(dir))
                .filter_map(|f| fs::read(f).ok())
                .map(|bytes| sha1_name(&bytes))
                .collect(),
            reported: HashSet::new(),
            new_units: 0,
            inited: false,
            last_corpus: 0,
            next_pulse: 1 << 16,
            peak_rss_mb: 0,
            exit_code: None,
        }
    }

    /// Called between the supervisor's polls (every 50 ms): looks now and then, and for new
    /// findings every time (a client restarted after the crash that ends the run could crash
    /// again before a later look); true ends the campaign.
    pub(super) fn stop_now(&mut self) -> bool {
        if self.last_look.elapsed() >= WATCH_EVERY {
            self.look();
        } else {
            self.report_findings();
        }
        self.exit_code.is_some()
    }

    pub(super) fn stats(&self) -> Stats {
        let text = fs::read_to_string(output::stats_file(&self.work)).unwrap_or_default();
        let stats = output::parse_fuzzer_stats(&text);
        let number = |key: &str| {
            stats
                .get(key)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0) as u64
        };
        Stats {
            execs: number("execs_done"),
            execs_per_sec: number("execs_per_sec"),
            edges: number("edges_found"),
            corpus: number("corpus_count"),
            corpus_bytes: self.corpus_bytes(),
            peak_rss_mb: self.peak_rss_mb,
        }
    }

    pub(super) fn look(&mut self) {
        self.last_look = Instant::now();
        self.peak_rss_mb = self.peak_rss_mb.max(memory::largest_in_process_tree_mb());
        self.copy_new_inputs();
        let stats = self.stats();
        if stats.execs > 0 {
            if !self.inited {
                self.inited = true;
                stats.print("INITED");
            } else if stats.corpus > self.last_corpus {
                stats.print("NEW   ");
            } else if stats.execs >= self.next_pulse {
                stats.print("pulse ");
            }
            while self.next_pulse <= stats.execs {
                self.next_pulse *= 2;
            }
            self.last_corpus = stats.corpus;
        }
        self.report_findings();
    }

    fn corpus_bytes(&self) -> u64 {
        output::client_queue_dirs(&self.work)
            .iter()
            .flat_map(|dir| output::visible_entries(dir))
            .filter_map(|f| fs::metadata(f).ok())
            .map(|m| m.len())
            .sum()
    }

    /// New queue entries into the first corpus directory, as libFuzzer writes them there.
    fn copy_new_inputs(&mut self) {
        let Some(corpus) = self.flags.paths.first() else {
            return;
        };
        for dir in output::client_queue_dirs(&self.work) {
            for file in output::visible_entries(&dir) {
                if self.copied.contains(&file) {
                    continue;
                }
                let Ok(bytes) = fs::read(&file) else {
                    continue;
                };
                let name = sha1_name(&bytes);
                let copy = corpus.join(&name);
                if !self.seeds.contains(&name)
                    && !copy.exists()
                    && output::write_atomic(&copy, &bytes).is_ok()
                {
                    self.new_units += 1;
                }
                self.copied.insert(file);
            }
        }
    }

    /// Each new crash, hang, out-of-memory or leaking input, oldest first: its artifact and
    /// libFuzzer's report; the first ends the run unless `-fork` with the matching `-ignore_*`
    /// says go on (so the artifact is the input whose report the clients printed).
    fn report_findings(&mut self) {
        let flags = self.flags;
        let forked = flags.fork > 0;
        let kinds = [
            (
                output::crashes_dir(&self.work),
                Outcome::Crash(0),
                flags.goes_on_after_crashes(),
            ),
            (
                output::hangs_dir(&self.work),
                Outcome::Timeout,
                forked && flags.ignore_timeouts,
            ),
            (
                output::ooms_dir(&self.work),
                Outcome::OutOfMemory(flags.rss_limit_mb),
                forked && flags.ignore_ooms,
            ),
            (
                output::leaks_dir(&self.work),
                Outcome::Leak,
                flags.goes_on_after_crashes(),
            ),
        ];
        let mut new: Vec<(SystemTime, PathBuf, Outcome, bool)> = kinds
            .iter()
            .flat_map(|(dir, outcome, go_on)| {
                output::visible_entries(dir)
                    .into_iter()
                    .filter(|file| !self.reported.contains(file))
                    .map(move |file| {
                        let saved = fs::metadata(&file).and_then(|m| m.modified());
                        (
                            saved.unwrap_or(SystemTime::UNIX_EPOCH),
                            file,
                            *outcome,
                            *go_on,
                        )
                    })
            })
            .collect();
        new.sort_by_key(|(saved, ..)| *saved);
        for (_, file, outcome, go_on) in new {
            if self.exit_code.is_some() {
                return;
            }
            let Ok(bytes) = fs::read(&file) else {
                continue;
            };
            self.reported.insert(file);
            let (kind, code) = report(outcome, flags);
            if let Err(e) = write_artifact(flags, kind, &bytes) {
                eprintln!("ERROR: {e}");
            }
            if !go_on {
                self.exit_code = Some(code);
            }
        }
    }
}
