//! `lafuzz-bench` (`cargo make bench`): every mode of ours against libFuzzer and AFL++ on the
//! same libpng build, seeds and dictionary, one fuzzer at a time on one pinned core; coverage
//! measured by replaying each final corpus through one llvm-cov build. Also: engine overhead
//! on an empty harness, a bare loop without fuzzer, multi-core scaling, and time to the
//! magic-comparison crash. Writes `bench/results/<timestamp>/` and prints the summary.

mod builds;
mod command;
mod coverage;
mod extras;
mod flavor;
mod fuzzer_output;
mod fuzzers;
mod goals;
mod mode;
mod parse;
mod paths;
mod plot;
mod report;
mod run;
mod summary;
mod supervise;

use std::{
    fs,
    path::PathBuf,
    time::{SystemTime, UNIX_EPOCH},
};

use clap::Parser;

use crate::{
    fuzzers::{Fuzzer, LIBPNG},
    paths::Paths,
    report::Run,
};

#[derive(Debug, Parser)]
#[command(
    name = "lafuzz-bench",
    about = "Side-by-side fuzzer benchmark on libpng"
)]
struct Options {
    /// Seconds per fuzzing run.
    #[arg(long, default_value_t = 60)]
    time: u64,
    /// Trials per fuzzer (medians are reported).
    #[arg(long, default_value_t = 1)]
    trials: usize,
    /// Fuzzers for the libpng table (default: all); see --list.
    #[arg(long, value_delimiter = ',')]
    fuzzers: Vec<String>,
    /// Skip the extras: empty harness, bare loop, scaling, magic harness.
    #[arg(long)]
    no_extras: bool,
    /// Trials for time-to-crash on the magic harness.
    #[arg(long, default_value_t = 3)]
    magic_trials: usize,
    /// Give up on the magic crash after this many seconds.
    #[arg(long, default_value_t = 60)]
    magic_cap: u64,
    /// Output directory (default: bench/results/<timestamp>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// List the fuzzers and exit.
    #[arg(long)]
    list: bool,
}

fn main() {
    if let Err(e) = run(Options::parse()) {
        eprintln!("lafuzz-bench: error: {e}");
        std::process::exit(1);
    }
}

fn run(opts: Options) -> Result<(), String> {
    // AFL++ starts its fork servers in sessions of their own; as their subreaper the bench can
    // still stop everything a run leaves behind.
    lafuzz::supervisor::become_subreaper();
    let paths = Paths::new()?;
    let afl = fuzzers::afl_available();
    if opts.list {
        for f in LIBPNG {
            println!("{}", f.name);
        }
        return Ok(());
    }
    for name in &opts.fuzzers {
        if !LIBPNG.iter().any(|f| f.name == name) {
            return Err(format!("unknown fuzzer {name}; --list shows them"));
        }
    }
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs();
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| paths.root.join("bench/results").join(stamp.to_string()));
    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    if !afl {
        println!("bench: afl-fuzz not found (Debian package afl++): AFL++ runs are skipped");
    }
    builds::build_all(&paths, afl)?;

    let chosen: Vec<&Fuzzer> = LIBPNG
        .iter()
        .filter(|f| opts.fuzzers.is_empty() || opts.fuzzers.iter().any(|n| n == f.name))
        .filter(|f| afl || !f.needs_afl())
        .collect();
    let core = supervise::bench_core();
    let seeds_cov = coverage::of_dir(
        &paths,
        &paths.root.join("corpus/libpng"),
        &out.join("seeds"),
    )?;
    let mut runs: Vec<Run> = Vec::new();
    for trial in 0..opts.trials {
        for fuzzer in &chosen {
            println!(
                "bench: {} (trial {}/{}, {} s)",
                fuzzer.name,
                trial + 1,
                opts.trials,
                opts.time
            );
            let work = out.join("work").join(format!("{}-{trial}", fuzzer.name));
            let mut run = run::fuzz(&paths, fuzzer, &work, opts.time, Some(core), "libpng")?;
            run.trial = trial;
            let corpus = fuzzer.kind.corpus_dir(&work);
            coverage::measure(&paths, &mut run, &corpus, &work, opts.time, seeds_cov)?;
            println!(
                "  {:.0} execs/s, {} branches",
                run.execs_per_sec(),
                run.branches.unwrap_or(0)
            );
            runs.push(run);
        }
    }
    if !opts.no_extras {
        runs.extend(extras::extras(
            &paths,
            &out.join("work"),
            opts.time,
            core,
            afl,
            opts.magic_trials,
            opts.magic_cap,
        )?);
    }
    fs::write(out.join("results.csv"), report::csv(&runs)).map_err(|e| e.to_string())?;
    let summary = summary::summary(&runs, opts.time, opts.trials);
    fs::write(out.join("summary.md"), &summary).map_err(|e| e.to_string())?;
    if let Err(e) = plot::plot(&runs, &out) {
        println!("bench: no coverage.png: {e}");
    }
    let _ = fs::remove_dir_all(out.join("work"));
    println!("\n{summary}\nbench: results in {}", out.display());
    Ok(())
}
