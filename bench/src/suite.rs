//! The suite's runs: every chosen fuzzer on one target per trial, alone or side by side.

use std::{
    fs,
    path::{Path, PathBuf},
};

use harness_builder::Library;

use crate::{
    cmplog_cost, coverage,
    fuzzers::{suite, Fuzzer},
    paths::Paths,
    report::Run,
    run, supervise, Options,
};

/// What one bench run does on every target of the suite.
pub struct Bench<'a> {
    pub paths: &'a Paths,
    pub opts: &'a Options,
    pub fuzzer_names: Vec<&'static str>,
    /// afl-fuzz is installed.
    pub afl: bool,
    pub out: PathBuf,
    /// The core a fuzzer that runs alone is pinned to.
    pub core: usize,
}

/// `--in-pairs`: the fuzzers that would run alone, two at a time.
fn in_pairs(groups: Vec<Vec<&Fuzzer>>) -> Vec<Vec<&Fuzzer>> {
    let (alone, together): (Vec<_>, Vec<_>) = groups.into_iter().partition(|g| g.len() == 1);
    let alone: Vec<&Fuzzer> = alone.into_iter().flatten().collect();
    together
        .into_iter()
        .chain(alone.chunks(2).map(<[&Fuzzer]>::to_vec))
        .collect()
}

impl Bench<'_> {
    /// One trial of the chosen fuzzers on `lib`: alone, or side by side where a pair is
    /// compared (see `cmplog_cost.rs`).
    pub fn suite_on(&self, lib: &Library, trial: usize) -> Result<Vec<Run>, String> {
        let seeds = lib.seeds(&self.paths.root);
        let seeds_branches = coverage::of_dir(
            self.paths,
            lib,
            &seeds,
            &self.out.join("seeds").join(lib.name),
        )?;
        let all = suite(lib.name);
        let chosen: Vec<&Fuzzer> = all
            .iter()
            .filter(|f| self.fuzzer_names.contains(&f.name))
            .filter(|f| self.afl || !f.needs_afl())
            .collect();
        let mut runs = Vec::new();
        let mut groups = cmplog_cost::side_by_side_groups(&chosen);
        if self.opts.in_pairs {
            groups = in_pairs(groups);
        }
        for group in groups {
            let cores: Vec<Option<usize>> = match group.len() {
                1 => vec![Some(self.core)],
                _ => supervise::pair_cores(trial).map(Some).to_vec(),
            };
            let names: Vec<&str> = group.iter().map(|f| f.name).collect();
            println!(
                "bench: {} on {} (trial {}/{}, {} s{})",
                names.join(" and "),
                lib.name,
                trial + 1,
                self.opts.trials,
                self.opts.time,
                if group.len() > 1 {
                    ", side by side"
                } else {
                    ""
                }
            );
            let works: Vec<PathBuf> = names
                .iter()
                .map(|name| {
                    self.out
                        .join("work")
                        .join(format!("{}-{name}-{trial}", lib.name))
                })
                .collect();
            let group_runs = run::fuzz_side_by_side(
                self.paths,
                &group,
                &works,
                &cores,
                &seeds,
                self.opts.time,
                lib.name,
            )?;
            // Measured side by side too: replaying each corpus into the coverage build four
            // times (the curve's quarters) took most of a short run's time.
            let measured: Vec<Result<Run, String>> = std::thread::scope(|scope| {
                let threads: Vec<_> = group
                    .iter()
                    .zip(&works)
                    .zip(group_runs)
                    .map(|((fuzzer, work), mut run)| {
                        run.trial = trial;
                        scope.spawn(move || {
                            self.measure(lib, fuzzer, work, &mut run, seeds_branches)
                                .map(|()| run)
                        })
                    })
                    .collect();
                threads
                    .into_iter()
                    .map(|t| {
                        t.join()
                            .unwrap_or_else(|_| Err("measuring panicked".into()))
                    })
                    .collect()
            });
            for run in measured {
                runs.push(run?);
            }
        }
        Ok(runs)
    }

    /// The coverage of one run's corpus; keeps the default build's first corpus for the
    /// comparison-logging cost runs; removes the run's work folder.
    fn measure(
        &self,
        lib: &Library,
        fuzzer: &Fuzzer,
        work: &Path,
        run: &mut Run,
        seeds_branches: u64,
    ) -> Result<(), String> {
        let corpus = fuzzer.kind.corpus_dir(work);
        coverage::measure(
            self.paths,
            lib,
            run,
            &corpus,
            work,
            self.opts.time,
            seeds_branches,
        )?;
        println!(
            "  {}: {:.0} execs/s, {} branches",
            fuzzer.name,
            run.execs_per_sec(),
            run.branches.unwrap_or(0)
        );
        if run.trial == 0
            && fuzzer.name == cmplog_cost::DEFAULT
            && self.fuzzer_names.contains(&cmplog_cost::NO_CMPLOG)
        {
            cmplog_cost::keep(&corpus, &self.out, lib.name)?;
        }
        let _ = fs::remove_dir_all(work);
        Ok(())
    }
}
