//! What comparison logging costs per execution, apart from what it finds. A campaign's
//! execs/s also depend on the inputs it reached: on lcms the default build finds tone curves
//! whose evaluation (`pow` over thousands of samples) takes most of its time, inputs the
//! `-nocmplog` build never reaches, and its execs/s halve for that alone. So both builds
//! also fuzz, for a short while, from the same grown corpus: the default build's final queue
//! of the first trial.

use std::{fs, path::Path};

use harness_builder::Library;

use crate::{
    fuzzers::{suite, Fuzzer},
    paths::Paths,
    report::Run,
    run::fuzz,
};

/// The pair compared: the default build, and the same harness built without comparison logging.
pub const DEFAULT: &str = "ours-direct";
pub const NO_CMPLOG: &str = "ours-direct-nocmplog";

/// The workload of the runs from a target's grown corpus, `*` standing for the target.
pub const GROWN_WORKLOAD: &str = "*@grown";

/// How long each build fuzzes from the grown corpus, at most (`--time` when shorter).
const MAX_SECS: u64 = 20;

/// The workload name of the runs from `target`'s grown corpus.
pub fn grown_workload(target: &str) -> String {
    GROWN_WORKLOAD.replace('*', target)
}

/// Where `target`'s grown corpus is kept.
pub fn grown_dir(out: &Path, target: &str) -> std::path::PathBuf {
    out.join("grown").join(target)
}

/// Keeps `corpus` (the default build's final queue) as `target`'s grown corpus.
pub fn keep(corpus: &Path, out: &Path, target: &str) -> Result<(), String> {
    let dir = grown_dir(out, target);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.parent().unwrap_or(out)).map_err(|e| e.to_string())?;
    fs::rename(corpus, &dir).map_err(|e| format!("cannot keep {}: {e}", corpus.display()))
}

/// Both builds of the pair, one after the other on `core`, from `lib`'s grown corpus (when one
/// was kept), for `time` seconds each or [`MAX_SECS`].
pub fn measure(
    p: &Paths,
    lib: &'static Library,
    out: &Path,
    time: u64,
    core: usize,
) -> Result<Vec<Run>, String> {
    let secs = time.min(MAX_SECS);
    let grown = grown_dir(out, lib.name);
    if !grown.is_dir() {
        return Ok(Vec::new());
    }
    let pair: Vec<Fuzzer> = suite(lib.name)
        .into_iter()
        .filter(|f| f.name == DEFAULT || f.name == NO_CMPLOG)
        .collect();
    let mut runs = Vec::new();
    for f in &pair {
        println!(
            "bench: {} on {} from the default build's grown corpus ({secs} s)",
            f.name, lib.name
        );
        let work = out
            .join("work")
            .join(format!("{}-grown-{}", lib.name, f.name));
        runs.push(fuzz(
            p,
            f,
            &work,
            &grown,
            secs,
            Some(core),
            &grown_workload(lib.name),
        )?);
        let _ = fs::remove_dir_all(&work);
    }
    Ok(runs)
}
