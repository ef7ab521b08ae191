//! The bug benchmark (`--bugs`): every fuzzer on every bug target (`harness_builder::bugs`),
//! each on its AddressSanitizer build, one pinned core each, from the same seeds, until the
//! cap; the time to each real bug is when the fuzzer saved the first input that the judge
//! build shows to be that bug (its oracle: the report's kind and top frame).

mod check;
mod found;
mod oracle;
mod table;

use std::{
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use harness_builder::{
    bugs::{Bug, BUGS},
    Library,
};

pub use check::check;
pub use table::{plot, summary};

use crate::{
    builds,
    command::command,
    fuzzers::{bug_fuzzers, bug_judge, Fuzzer, Kind},
    paths::Paths,
    supervise::{finish_together, pair_cores, start},
};

/// One fuzzer's run on one bug target: when it found each bug it found.
#[derive(Debug, Clone)]
pub struct BugRun {
    pub target: &'static str,
    pub fuzzer: &'static str,
    pub trial: usize,
    /// (bug id, seconds from the start).
    pub found: Vec<(&'static str, f64)>,
}

/// The bugs of `target`.
pub fn bugs_of(target: &str) -> Vec<&'static Bug> {
    BUGS.iter().filter(|b| b.target == target).collect()
}

/// The chosen fuzzers of the bug benchmark on `target` (AFL++'s only where it is installed,
/// and where a bug is not a leak: AFL++ turns LeakSanitizer off, `detect_leaks=0` in the
/// `ASAN_OPTIONS` it sets, so its run on a target of leaks alone could find nothing).
fn fuzzers_on(target: &'static str, names: &[&str], afl: bool) -> Vec<Fuzzer> {
    let leaks_only = bugs_of(target).iter().all(|b| b.is_leak());
    bug_fuzzers(target)
        .into_iter()
        .filter(|f| names.is_empty() || names.contains(&f.name))
        .filter(|f| !f.needs_afl() || (afl && !leaks_only))
        .collect()
}

/// What one run of the bug benchmark does.
pub struct BugBench<'a> {
    pub paths: &'a Paths,
    pub targets: Vec<&'static Library>,
    pub fuzzer_names: Vec<&'a str>,
    pub afl: bool,
    pub trials: usize,
    /// Seconds each fuzzer gets per target and trial.
    pub cap: u64,
    pub out: PathBuf,
}

impl BugBench<'_> {
    /// Builds every bug target for every fuzzer, runs them all, and returns the runs.
    pub fn run(&self) -> Result<Vec<BugRun>, String> {
        builds::build_bug_targets(self.paths, self.afl, &self.targets)?;
        let mut runs = Vec::new();
        for trial in 0..self.trials {
            let all: Vec<(&'static Library, Fuzzer)> = self
                .targets
                .iter()
                .flat_map(|lib| {
                    fuzzers_on(lib.name, &self.fuzzer_names, self.afl)
                        .into_iter()
                        .map(move |f| (*lib, f))
                })
                .collect();
            // Two at a time, each on its own core, whatever their targets: a bug run measures
            // time to a bug, which the other core's run does not change (no ratio of speeds
            // is taken here).
            for pair in all.chunks(2) {
                runs.extend(self.run_pair(pair, trial)?);
            }
        }
        Ok(runs)
    }

    fn run_pair(
        &self,
        pair: &[(&'static Library, Fuzzer)],
        trial: usize,
    ) -> Result<Vec<BugRun>, String> {
        let names: Vec<String> = pair
            .iter()
            .map(|(lib, f)| format!("{} on {}", f.name, lib.name))
            .collect();
        println!(
            "bench: bugs: {} (trial {}/{}, up to {} s)",
            names.join(" and "),
            trial + 1,
            self.trials,
            self.cap
        );
        let cores = pair_cores(trial);
        let mut started = Vec::new();
        let mut works = Vec::new();
        let start_time = SystemTime::now();
        for ((lib, f), core) in pair.iter().zip(cores) {
            let work = self
                .out
                .join("work")
                .join(format!("{}-{}-{trial}", lib.name, f.name));
            let _ = fs::remove_dir_all(&work);
            fs::create_dir_all(&work).map_err(|e| e.to_string())?;
            let seeds = lib.seeds(&self.paths.root);
            let mut cmd = command(self.paths, f, &work, &seeds, self.cap, Some(core));
            if f.kind == Kind::LibFuzzer {
                // As FuzzBench runs libFuzzer for bugs: on past a crash, a timeout or an OOM.
                cmd.args([
                    "-fork=1",
                    "-ignore_crashes=1",
                    "-ignore_timeouts=1",
                    "-ignore_ooms=1",
                ]);
            }
            started.push(start(cmd, &work.join("log"))?);
            works.push(work);
        }
        finish_together(started, Duration::from_secs(self.cap + 30), || false);
        let mut runs = Vec::new();
        for ((lib, f), work) in pair.iter().zip(&works) {
            let judge = bug_judge(lib.name).path(self.paths);
            let found = found::first_times(f.kind, work, start_time, &judge, &bugs_of(lib.name));
            let found: Vec<(&str, f64)> = found
                .into_iter()
                .filter(|(_, secs)| *secs <= self.cap as f64)
                .collect();
            println!("  {} on {}: {}", f.name, lib.name, describe(&found));
            runs.push(BugRun {
                target: lib.name,
                fuzzer: f.name,
                trial,
                found,
            });
            let _ = fs::remove_dir_all(work);
        }
        Ok(runs)
    }
}

fn describe(found: &[(&str, f64)]) -> String {
    if found.is_empty() {
        return "no bug".into();
    }
    let mut text = String::new();
    for (id, secs) in found {
        let _ = write!(text, "{id} at {secs:.0} s  ");
    }
    text.trim_end().to_string()
}

/// `bugs.csv`: one row per run and bug of its target (seconds empty: not found).
pub fn csv(runs: &[BugRun]) -> String {
    let mut text = String::from("target,fuzzer,trial,bug,seconds\n");
    for r in runs {
        for bug in bugs_of(r.target) {
            let secs = r
                .found
                .iter()
                .find(|(id, _)| *id == bug.id)
                .map_or(String::new(), |(_, s)| format!("{s:.1}"));
            let _ = writeln!(
                text,
                "{},{},{},{},{secs}",
                r.target, r.fuzzer, r.trial, bug.id
            );
        }
    }
    text
}

/// Writes `bugs.csv`, the summary and the survival plot into `out`; returns the summary.
pub fn write(runs: &[BugRun], cap: u64, trials: usize, out: &Path) -> Result<String, String> {
    fs::write(out.join("bugs.csv"), csv(runs)).map_err(|e| e.to_string())?;
    let text = summary(runs, cap, trials);
    fs::write(out.join("bugs.md"), &text).map_err(|e| e.to_string())?;
    if let Err(e) = plot(runs, cap, trials, out) {
        println!("bench: no survival plot: {e}");
    }
    let _ = fs::remove_dir_all(out.join("work"));
    Ok(text)
}
