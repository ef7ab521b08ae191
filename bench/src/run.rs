//! Running fuzzers for a fixed time, each on one pinned core (alone, or side by side with
//! another), or one until its first crash, and reading back executions, CPU time and corpus.

use std::{fs, path::Path, time::Duration};

use crate::{
    command::command,
    fuzzer_output::count_files,
    fuzzers::Fuzzer,
    paths::Paths,
    report::Run,
    supervise::{finish_together, start},
};

/// Runs `f` from `seeds` for `secs`; the run is counted under `workload` (a target's name,
/// or an extra's).
pub fn fuzz(
    p: &Paths,
    f: &Fuzzer,
    work: &Path,
    seeds: &Path,
    secs: u64,
    core: Option<usize>,
    workload: &str,
) -> Result<Run, String> {
    let mut runs = fuzz_side_by_side(p, &[f], &[work], &[core], seeds, secs, workload)?;
    Ok(runs.remove(0))
}

/// Runs each of `fuzzers` at the same time, in its work directory (`works`, in the same order)
/// on its core (`cores`), from the same `seeds` for `secs`: a ratio between runs that shared
/// the machine's state is not machine drift.
pub fn fuzz_side_by_side(
    p: &Paths,
    fuzzers: &[&Fuzzer],
    works: &[impl AsRef<Path>],
    cores: &[Option<usize>],
    seeds: &Path,
    secs: u64,
    workload: &str,
) -> Result<Vec<Run>, String> {
    let mut started = Vec::new();
    for ((f, work), core) in fuzzers.iter().zip(works).zip(cores) {
        let work = work.as_ref();
        let _ = fs::remove_dir_all(work);
        fs::create_dir_all(work).map_err(|e| e.to_string())?;
        started.push(start(
            command(p, f, work, seeds, secs, *core),
            &work.join("log"),
        )?);
    }
    let limit = Duration::from_secs(secs + 60);
    let ended = finish_together(started, limit, || false);
    fuzzers
        .iter()
        .zip(works)
        .zip(ended)
        .map(|((f, work), (wall, cpu))| {
            let work = work.as_ref();
            let log = work.join("log");
            let execs = f.kind.execs(work, &log);
            if execs == 0 {
                let tail: String = fs::read_to_string(&log)
                    .unwrap_or_default()
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" | ");
                return Err(format!("{} ran no input; its log ends: {tail}", f.name));
            }
            Ok(Run {
                fuzzer: f.name.into(),
                workload: workload.into(),
                ours: f.is_ours(),
                // Not capped at `secs`: the executions counted include those of a fuzzer that
                // overran its time (libFuzzer runs about a second longer than asked).
                wall_secs: wall.max(1.0),
                cpu_secs: cpu,
                execs,
                corpus: count_files(&f.kind.corpus_dir(work)),
                ..Run::default()
            })
        })
        .collect()
}

/// Seconds until `f` saves its first crash on the magic harness (zero seed, no dictionary).
pub fn time_to_crash(
    p: &Paths,
    f: &Fuzzer,
    work: &Path,
    cap: u64,
    core: usize,
) -> Result<Run, String> {
    let _ = fs::remove_dir_all(work);
    let seeds = work.join("seeds");
    fs::create_dir_all(&seeds).map_err(|e| e.to_string())?;
    fs::copy(p.root.join("corpus/magic/zeros"), seeds.join("zeros")).map_err(|e| e.to_string())?;
    let started = start(
        command(p, f, work, &seeds, cap, Some(core)),
        &work.join("log"),
    )?;
    let kind = f.kind;
    let (wall, cpu) = started.finish(Duration::from_secs(cap), || kind.crashes_found(work));
    let found = kind.crashes_found(work);
    Ok(Run {
        fuzzer: f.name.into(),
        workload: "magic".into(),
        ours: f.is_ours(),
        wall_secs: if found { wall } else { cap as f64 },
        cpu_secs: cpu,
        time_to_crash: found.then_some(wall),
        ..Run::default()
    })
}
