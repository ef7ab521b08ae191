//! libFuzzer's fuzzing run on our campaign: the corpus directories are the seeds, new inputs
//! are copied into the first one (named by SHA-1), and the first finding stops the run with
//! libFuzzer's lines, artifact and exit code (with `-fork=N`, `-ignore_*` keep it going).
//! The campaign runs with a private output directory, removed at the end; a watcher in the
//! supervising process turns its `fuzzer_stats` and finding directories into libFuzzer's
//! output.

use std::{
    collections::HashSet,
    fs,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use clap::Parser;

use super::{report, write_artifact, Flags};
use crate::{
    campaign,
    isolated::Outcome,
    memory,
    minimize::sha1_name,
    options::{Cli, Command},
    output, supervisor,
};

/// How often the watcher looks at the campaign.
const WATCH_EVERY: Duration = Duration::from_millis(500);

pub fn run(flags: &Flags) -> Result<i32, String> {
    if flags.reports_missing_directory() {
        return Ok(1);
    }
    let work = std::env::temp_dir().join(format!("lafuzz-libfuzzer-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    let mut opts = match Cli::try_parse_from(native_command_line(flags, &work)) {
        Ok(Cli {
            command: Command::Fuzz(opts),
        }) => *opts,
        Ok(_) => unreachable!("the command line starts with `fuzz`"),
        Err(e) => return Err(e.render().to_string().lines().next().unwrap_or("").into()),
    };
    opts.empty_corpus_ok = true;
    if let Some(seed) = opts.seed {
        eprintln!("INFO: Seed: {seed}");
    }
    eprintln!(
        "INFO: fuzzing with lafuzz ({} core(s)); new inputs go to {}",
        opts.clients(),
        flags
            .paths
            .first()
            .map_or("nowhere".into(), |d| d.display().to_string())
    );
    let mut watcher = Watcher::new(flags, &work);
    let ended = campaign::run_watched(opts, || watcher.stop_now());
    watcher.look();
    let stats = watcher.stats();
    let _ = fs::remove_dir_all(&work);
    let code = ended?;
    if let Some(code) = watcher.exit_code {
        if flags.print_final_stats {
            stats.print_final(watcher.new_units);
        }
        return Ok(code);
    }
    if code != 0 {
        return Ok(code);
    }
    stats.print("DONE");
    eprintln!(
        "Done {} runs in {} second(s)",
        stats.execs,
        watcher.start.elapsed().as_secs()
    );
    if flags.print_final_stats {
        stats.print_final(watcher.new_units);
    }
    Ok(0)
}

/// Our `fuzz` command line for these flags.
fn native_command_line(flags: &Flags, work: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["lafuzz", "fuzz", "--mode", "direct", "--quiet", "-o"]
        .map(String::from)
        .into();
    args.push(work.display().to_string());
    for dir in &flags.paths {
        args.extend(["-i".into(), dir.display().to_string()]);
    }
    for dict in &flags.dicts {
        args.extend(["-x".into(), dict.display().to_string()]);
    }
    let timeout_ms = flags.limits().timeout.as_millis().max(1);
    args.extend(["-t".into(), timeout_ms.to_string()]);
    args.extend(["--rss-limit-mb".into(), flags.rss_limit_mb.to_string()]);
    if let Some(mb) = flags.malloc_limit_mb {
        args.extend(["--malloc-limit-mb".into(), mb.to_string()]);
    }
    if let Some(len) = flags.max_len {
        args.extend(["--max-len".into(), len.to_string()]);
    }
    if let Some(seed) = flags.seed {
        args.extend(["--seed".into(), seed.to_string()]);
    }
    if let Some(runs) = flags.runs.filter(|&r| r > 0) {
        args.extend(["--runs".into(), runs.to_string()]);
    }
    if let Some(time) = flags.max_total_time {
        args.extend(["--max-time".into(), time.as_secs().to_string()]);
    }
    let cores = cores_for(flags);
    args.extend(["--cores".into(), format!("0-{}", cores - 1)]);
    if flags.only_ascii {
        args.push("--only-ascii".into());
    }
    if flags.close_fd_mask & 1 == 0 {
        args.push("--show-output".into());
    }
    args
}

/// Cores for `-fork=N`, or `-jobs=N` with `-workers=M` (libFuzzer's default workers:
/// min(jobs, cores / 2)); one campaign on them.
fn cores_for(flags: &Flags) -> u64 {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let wanted = if flags.fork > 0 {
        flags.fork
    } else if flags.jobs > 0 {
        if flags.workers > 0 {
            flags.workers
        } else {
            flags.jobs.min(available / 2)
        }
    } else {
        1
    };
    wanted.clamp(1, available)
}

/// The campaign's numbers as libFuzzer prints them.
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    execs: u64,
    execs_per_sec: u64,
    edges: u64,
    corpus: u64,
    corpus_bytes: u64,
    peak_rss_mb: u64,
}

impl Stats {
    fn print(&self, event: &str) {
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

    fn print_final(&self, new_units: u64) {
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
struct Watcher<'a> {
    flags: &'a Flags,
    work: PathBuf,
    start: Instant,
    last_look: Instant,
    /// Queue files already copied into the first corpus directory.
    copied: HashSet<PathBuf>,
    /// SHA-1 names of what the corpus directories held at the start (seeds are not new).
    seeds: HashSet<String>,
    /// Findings already reported.
    reported: HashSet<PathBuf>,
    new_units: u64,
    inited: bool,
    last_corpus: u64,
    next_pulse: u64,
    peak_rss_mb: u64,
    /// Set by the finding that ends the run.
    exit_code: Option<i32>,
}

impl<'a> Watcher<'a> {
    fn new(flags: &'a Flags, work: &Path) -> Self {
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

    /// Called between the supervisor's polls: looks now and then; true ends the campaign.
    fn stop_now(&mut self) -> bool {
        if self.last_look.elapsed() >= WATCH_EVERY {
            self.look();
        }
        self.exit_code.is_some()
    }

    fn stats(&self) -> Stats {
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

    fn look(&mut self) {
        self.last_look = Instant::now();
        self.peak_rss_mb = self.peak_rss_mb.max(
            supervisor::descendants()
                .into_iter()
                .filter_map(memory::resident_mb)
                .max()
                .unwrap_or(0),
        );
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

    /// Each new crash, hang or out-of-memory input: its artifact and libFuzzer's report; the
    /// first ends the run unless `-fork` with the matching `-ignore_*` says go on.
    fn report_findings(&mut self) {
        let flags = self.flags;
        let forked = flags.fork > 0;
        let kinds = [
            (
                output::crashes_dir(&self.work),
                Outcome::Crash(0),
                forked && flags.ignore_crashes,
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
        ];
        for (dir, outcome, go_on) in kinds {
            for file in output::visible_entries(&dir) {
                if self.exit_code.is_some() || !self.reported.insert(file.clone()) {
                    continue;
                }
                let Ok(bytes) = fs::read(&file) else {
                    continue;
                };
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
}
