//! `lafuzz-bench` (`cargo make bench`): every mode of ours against libFuzzer and AFL++ on a
//! suite of real libraries (`harness_builder::LIBRARIES`), each built from the same sources
//! and flags for every fuzzer, from the same seeds, without dictionary, one fuzzer at a time
//! on one pinned core (the comparison-logging pair side by side, on two); coverage measured
//! by replaying each final corpus through one llvm-cov build. Also: engine overhead on an
//! empty harness, a bare loop without fuzzer, multi-core scaling, and time to the
//! magic-comparison crash. Writes `bench/results/<timestamp>/` and prints the summary.

mod bugs;
mod build_lock;
mod builds;
mod cmplog_cost;
mod command;
mod coverage;
mod extras;
mod flavor;
mod fuzzer_output;
mod fuzzers;
mod goals;
mod mutation_costs;
mod parse;
mod paths;
mod plot;
mod readme;
mod report;
mod rows;
mod run;
mod suite;
mod summary;
mod supervise;

use std::{
    fs,
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use clap::Parser;

use harness_builder::{
    bugs::{BUGS, BUG_TARGETS},
    Library, LIBRARIES,
};

use crate::{fuzzers::suite_names, paths::Paths, report::Run};

#[derive(Debug, Parser)]
#[command(
    name = "lafuzz-bench",
    about = "Side-by-side fuzzer benchmark on a suite of real libraries"
)]
struct Options {
    /// Seconds per fuzzing run.
    #[arg(long, default_value_t = 60)]
    time: u64,
    /// Trials per fuzzer and target (medians are reported).
    #[arg(long, default_value_t = 1)]
    trials: usize,
    /// Targets of the suite (default: all); see --list.
    #[arg(long, value_delimiter = ',')]
    targets: Vec<String>,
    /// Fuzzers run on each target (default: all); see --list.
    #[arg(long, value_delimiter = ',')]
    fuzzers: Vec<String>,
    /// Skip the extras: empty harness, bare loop, scaling, magic harness.
    #[arg(long)]
    no_extras: bool,
    /// Run the fuzzers two at a time, each on its own core, even those a real bench runs alone:
    /// for runs that check that everything works, not what it measures (the smoke test).
    #[arg(long)]
    in_pairs: bool,
    /// Build the peers unoptimized, in target/bench-build-quick: for runs that check that
    /// everything builds and fuzzes (the smoke test), in a tenth of the compile time.
    #[arg(long)]
    quick_builds: bool,
    /// Trials for time-to-crash on the magic harness.
    #[arg(long, default_value_t = 3)]
    magic_trials: usize,
    /// Give up on the magic crash after this many seconds.
    #[arg(long, default_value_t = 60)]
    magic_cap: u64,
    /// Output directory (default: bench/results/<timestamp>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the suite's results into README.md's "Results" section.
    #[arg(long)]
    readme: bool,
    /// Write README.md's Results section from an earlier run's results.csv (its output
    /// directory) and exit, running nothing.
    #[arg(long, value_name = "DIR")]
    readme_from: Option<PathBuf>,
    /// Run the bug benchmark instead of the coverage suite: time to each real bug of the bug
    /// targets (--targets chooses among them, --fuzzers among ours-direct, libfuzzer and
    /// aflpp-cmplog), --trials times, each run up to --bug-cap seconds.
    #[arg(long)]
    bugs: bool,
    /// Seconds each fuzzer gets per bug target and trial.
    #[arg(long, default_value_t = 600)]
    bug_cap: u64,
    /// Build every bug target for every fuzzer and check each bug's stored reproducer against
    /// its oracle in every build; fuzz nothing.
    #[arg(long)]
    check_bugs: bool,
    /// Build what the run would fuzz (the suite's builds of --targets, or with --bugs the bug
    /// targets'; --quick-builds, --no-extras as for the run) and exit: to build ahead of a run,
    /// beside other work.
    #[arg(long)]
    build_only: bool,
    /// Print what each of havoc's mutations costs, and havoc's stacks per execution (ns, on
    /// libpng's seeds); fuzz nothing.
    #[arg(long)]
    mutation_costs: bool,
    /// List the targets and the fuzzers and exit.
    #[arg(long)]
    list: bool,
}

fn main() {
    if let Err(e) = run(Options::parse()) {
        eprintln!("lafuzz-bench: error: {e}");
        std::process::exit(1);
    }
}

/// The chosen items of `all` (all of them when `chosen` is empty); an unknown name is an error.
fn choose<'a, T>(
    all: &'a [T],
    name: impl Fn(&T) -> &str,
    chosen: &[String],
    what: &str,
) -> Result<Vec<&'a T>, String> {
    if let Some(unknown) = chosen.iter().find(|c| !all.iter().any(|a| name(a) == *c)) {
        return Err(format!("unknown {what} {unknown}; --list shows them"));
    }
    Ok(all
        .iter()
        .filter(|a| chosen.is_empty() || chosen.iter().any(|c| c == name(a)))
        .collect())
}

fn run(opts: Options) -> Result<(), String> {
    // AFL++ starts its fork servers in sessions of their own; as their subreaper the bench can
    // still stop everything a run leaves behind.
    lafuzz::platform::supervisor::become_subreaper();
    let paths = Paths::new(opts.quick_builds)?;
    if opts.list {
        let targets: Vec<&str> = LIBRARIES.iter().map(|l| l.name).collect();
        println!("targets: {}", targets.join(","));
        println!("fuzzers: {}", suite_names().join(","));
        let bug_targets: Vec<&str> = BUG_TARGETS.iter().map(|l| l.name).collect();
        println!("bug targets: {}", bug_targets.join(","));
        let bugs: Vec<&str> = BUGS.iter().map(|b| b.id).collect();
        println!("bugs: {}", bugs.join(","));
        return Ok(());
    }
    if opts.mutation_costs {
        return mutation_costs::print(&paths.root.join("corpus/libpng"));
    }
    if opts.build_only {
        return build_only(&opts, &paths);
    }
    if opts.check_bugs {
        return bugs::check(&paths, fuzzers::afl_available());
    }
    if opts.bugs {
        return run_bugs(&opts, &paths);
    }
    if let Some(dir) = &opts.readme_from {
        readme::update_from(&paths.root, dir)?;
        println!(
            "bench: README.md's Results section updated from {}",
            dir.display()
        );
        return Ok(());
    }
    let afl = fuzzers::afl_available();
    if !afl {
        println!("bench: afl-fuzz not found (Debian package afl++): AFL++ runs are skipped");
    }
    let (targets, fuzzer_names) = build_suite(&opts, &paths, afl)?;
    let bench = suite::Bench {
        fuzzer_names,
        afl,
        out: output_dir(&opts, &paths)?,
        core: supervise::bench_core(),
        paths: &paths,
        opts: &opts,
    };
    let extras = with_extras(&opts, &targets);
    let mut runs: Vec<Run> = Vec::new();
    for trial in 0..opts.trials {
        for lib in &targets {
            runs.extend(bench.suite_on(lib, trial)?);
        }
    }
    for lib in &targets {
        runs.extend(cmplog_cost::measure(
            &paths,
            lib,
            &bench.out,
            opts.time,
            supervise::pair_cores(0),
        )?);
    }
    if extras {
        runs.extend(extras::extras(
            &paths,
            &bench.out.join("work"),
            opts.time,
            bench.core,
            bench.afl,
            opts.magic_trials,
            opts.magic_cap,
        )?);
    }
    write_results(&paths, &opts, &runs, &targets, &bench.out)
}

/// `--build-only`: the builds the run would make, nothing run.
fn build_only(opts: &Options, paths: &Paths) -> Result<(), String> {
    let afl = fuzzers::afl_available();
    if opts.bugs {
        let targets = choose(BUG_TARGETS, |l| l.name, &opts.targets, "bug target")?;
        return builds::build_bug_targets(paths, afl, &targets);
    }
    build_suite(opts, paths, afl).map(|_| ())
}

/// Builds what the suite's run fuzzes: the chosen targets and fuzzers, which it returns.
fn build_suite(
    opts: &Options,
    paths: &Paths,
    afl: bool,
) -> Result<(Vec<&'static Library>, Vec<&'static str>), String> {
    let targets = choose(LIBRARIES, |l| l.name, &opts.targets, "target")?;
    let names = suite_names();
    let chosen = choose(&names, |n| n, &opts.fuzzers, "fuzzer")?;
    let fuzzer_names: Vec<&'static str> = chosen.into_iter().copied().collect();
    let ours = fuzzers::ours_builds(&names_of(&targets), &fuzzer_names);
    builds::build_all(paths, afl, &targets, with_extras(opts, &targets), &ours)?;
    Ok((targets, fuzzer_names))
}

fn names_of(targets: &[&'static Library]) -> Vec<&'static str> {
    targets.iter().map(|t| t.name).collect()
}

/// Whether the run has extras: they run on libpng's builds and seeds.
fn with_extras(opts: &Options, targets: &[&Library]) -> bool {
    !opts.no_extras && targets.iter().any(|t| t.name == "libpng")
}

/// `--bugs`: the bug benchmark, its results in the output directory (and README's Results
/// with `--readme`).
fn run_bugs(opts: &Options, paths: &Paths) -> Result<(), String> {
    let targets = choose(BUG_TARGETS, |l| l.name, &opts.targets, "bug target")?;
    let bench = bugs::BugBench {
        paths,
        targets,
        fuzzer_names: opts.fuzzers.iter().map(String::as_str).collect(),
        afl: fuzzers::afl_available(),
        trials: opts.trials,
        cap: opts.bug_cap,
        out: output_dir(opts, paths)?,
    };
    if !bench.afl {
        println!("bench: afl-fuzz not found (Debian package afl++): AFL++ runs are skipped");
    }
    let runs = bench.run()?;
    let summary = bugs::write(&runs, opts.bug_cap, opts.trials, &bench.out)?;
    if opts.readme {
        readme::update_bugs(&paths.root, &summary)?;
        println!("bench: README.md's bug results updated");
    }
    println!("\n{summary}\nbench: results in {}", bench.out.display());
    Ok(())
}

/// Where this run's results go: `--out`, else a new folder under `bench/results/`.
fn output_dir(opts: &Options, paths: &Paths) -> Result<PathBuf, String> {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs();
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| paths.root.join("bench/results").join(stamp.to_string()));
    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    Ok(out)
}

/// `results.csv`, `summary.md`, the coverage plots and, with `--readme`, README's Results.
fn write_results(
    paths: &Paths,
    opts: &Options,
    runs: &[Run],
    targets: &[&Library],
    out: &Path,
) -> Result<(), String> {
    fs::write(out.join("results.csv"), report::csv(runs)).map_err(|e| e.to_string())?;
    let target_names: Vec<&str> = targets.iter().map(|t| t.name).collect();
    let summary = summary::summary(runs, &target_names, opts.time, opts.trials);
    fs::write(out.join("summary.md"), &summary).map_err(|e| e.to_string())?;
    for target in &target_names {
        if let Err(e) = plot::plot(runs, target, out) {
            println!("bench: no coverage plot for {target}: {e}");
        }
    }
    if opts.readme {
        readme::update(&paths.root, runs, &target_names, opts.time, opts.trials)?;
        println!("bench: README.md's Results section updated");
    }
    let _ = fs::remove_dir_all(out.join("work"));
    let _ = fs::remove_dir_all(out.join("grown"));
    println!("\n{summary}\nbench: results in {}", out.display());
    Ok(())
}
