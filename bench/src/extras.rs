//! The runs besides the suite's tables: engine overhead on the empty harness, the bare loop,
//! scaling and time to crash on the magic harness.

use std::{fs, path::Path, process::Command};

use crate::{
    fuzzers::{Bin, Fuzzer, EMPTY, MAGIC, SCALING},
    paths::Paths,
    report::Run,
    run::{fuzz, time_to_crash},
    supervise::children_cpu_secs,
};

/// Engine overhead, the bare loop, scaling and the magic harness.
pub fn extras(
    p: &Paths,
    work: &Path,
    secs: u64,
    core: usize,
    afl: bool,
    magic_trials: usize,
    magic_cap: u64,
) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    let short = secs.min(10);
    let libpng_seeds = p.root.join("corpus/libpng");
    let available = |f: &&Fuzzer| afl || !f.needs_afl();
    for f in EMPTY.iter().filter(available) {
        println!("bench: {} on the empty harness ({short} s)", f.name);
        runs.push(fuzz(
            p,
            f,
            &work.join(format!("empty-{}", f.name)),
            &libpng_seeds,
            short,
            Some(core),
            "empty",
        )?);
    }

    println!("bench: bare loop over the seeds ({short} s)");
    runs.push(bare_loop(p, work, short, core)?);

    println!("bench: ours-direct on all cores ({secs} s)");
    for s in SCALING {
        let pinned = s.pinned.then_some(core);
        runs.push(fuzz(
            p,
            &s.fuzzer,
            &work.join(s.dir),
            &libpng_seeds,
            secs,
            pinned,
            "scaling",
        )?);
    }

    for f in MAGIC.iter().filter(available) {
        for trial in 0..magic_trials {
            println!(
                "bench: {} on the magic harness (trial {}/{magic_trials}, up to {magic_cap} s)",
                f.name,
                trial + 1
            );
            let mut run = time_to_crash(
                p,
                f,
                &work.join(format!("magic-{}-{trial}", f.name)),
                magic_cap,
                core,
            )?;
            run.trial = trial;
            runs.push(run);
        }
    }
    Ok(runs)
}

/// No fuzzer: the libpng harness called in a loop over the seeds for `secs`.
fn bare_loop(p: &Paths, work: &Path, secs: u64, core: usize) -> Result<Run, String> {
    let list = work.join("seeds.list");
    fs::create_dir_all(work).map_err(|e| e.to_string())?;
    let mut seeds: Vec<String> = fs::read_dir(p.root.join("corpus/libpng"))
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path().display().to_string())
        .collect();
    seeds.sort();
    fs::write(&list, seeds.join("\n")).map_err(|e| e.to_string())?;
    let cpu_before = children_cpu_secs();
    let out = Command::new("taskset")
        .arg("-c")
        .arg(core.to_string())
        .arg(Bin::bench("libpng", "-bare").path(p))
        .arg(&list)
        .arg(secs.to_string())
        .output()
        .map_err(|e| e.to_string())?;
    let execs: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| "bare loop printed no count")?;
    Ok(Run {
        fuzzer: "bare-loop".into(),
        workload: "bare".into(),
        wall_secs: secs as f64,
        cpu_secs: children_cpu_secs() - cpu_before,
        execs,
        ..Run::default()
    })
}
