//! What comparison logging costs per execution, apart from what it finds. A campaign's
//! execs/s also depend on the inputs it reached: on lcms the default build finds tone curves
//! whose evaluation (`pow` over thousands of samples) takes most of its time, inputs the
//! `-nocmplog` build never reaches, and its execs/s halve for that alone. So both builds
//! also fuzz, for a short while, from the same grown corpus: the default build's final queue
//! of the first trial.
//!
//! The two builds of the pair always run side by side, one core each (the cores swapped from
//! one trial to the next): run one after the other, machine drift between the two runs was as
//! large as the difference measured.

use std::{
    fs,
    path::{Path, PathBuf},
};

use harness_builder::Library;

use crate::{
    fuzzers::{suite, Fuzzer},
    paths::Paths,
    report::Run,
    run::fuzz_side_by_side,
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

/// The fuzzers to run on a target, in groups run at the same time: the pair together (where
/// both are chosen), every other fuzzer alone.
pub fn side_by_side_groups<'a>(fuzzers: &[&'a Fuzzer]) -> Vec<Vec<&'a Fuzzer>> {
    let paired =
        fuzzers.iter().any(|f| f.name == DEFAULT) && fuzzers.iter().any(|f| f.name == NO_CMPLOG);
    let mut groups = Vec::new();
    for f in fuzzers {
        match f.name {
            DEFAULT if paired => groups.push(
                fuzzers
                    .iter()
                    .copied()
                    .filter(|f| f.name == DEFAULT || f.name == NO_CMPLOG)
                    .collect(),
            ),
            NO_CMPLOG if paired => {}
            _ => groups.push(vec![*f]),
        }
    }
    groups
}

/// Both builds of the pair, side by side on `cores`, from `lib`'s grown corpus (when one was
/// kept), for `time` seconds or [`MAX_SECS`].
pub fn measure(
    p: &Paths,
    lib: &'static Library,
    out: &Path,
    time: u64,
    cores: [usize; 2],
) -> Result<Vec<Run>, String> {
    let secs = time.min(MAX_SECS);
    let grown = grown_dir(out, lib.name);
    if !grown.is_dir() {
        return Ok(Vec::new());
    }
    let all = suite(lib.name);
    let pair: Vec<&Fuzzer> = all
        .iter()
        .filter(|f| f.name == DEFAULT || f.name == NO_CMPLOG)
        .collect();
    println!(
        "bench: {DEFAULT} and {NO_CMPLOG} side by side on {} from the default build's grown \
         corpus ({secs} s)",
        lib.name
    );
    let works: Vec<PathBuf> = pair
        .iter()
        .map(|f| {
            out.join("work")
                .join(format!("{}-grown-{}", lib.name, f.name))
        })
        .collect();
    let cores = cores.map(Some);
    let runs = fuzz_side_by_side(
        p,
        &pair,
        &works,
        &cores,
        &grown,
        secs,
        &grown_workload(lib.name),
    )?;
    for work in &works {
        let _ = fs::remove_dir_all(work);
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pair_runs_together_and_every_other_fuzzer_alone() {
        let all = suite("zlib");
        let names = |groups: Vec<Vec<&Fuzzer>>| -> Vec<Vec<&str>> {
            groups
                .iter()
                .map(|g| g.iter().map(|f| f.name).collect())
                .collect()
        };
        let chosen: Vec<&Fuzzer> = all.iter().take(3).collect();
        assert_eq!(
            names(side_by_side_groups(&chosen)),
            [vec![DEFAULT, NO_CMPLOG], vec!["ours-direct-split"]]
        );
        // Without its partner a build runs alone.
        let chosen: Vec<&Fuzzer> = all.iter().skip(1).take(2).collect();
        assert_eq!(
            names(side_by_side_groups(&chosen)),
            [vec![NO_CMPLOG], vec!["ours-direct-split"]]
        );
    }
}
