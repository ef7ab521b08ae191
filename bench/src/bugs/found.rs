//! When each fuzzer found each bug: the inputs it saved as crashing (or leaking), in the order
//! it saved them, each judged by the judge build until every bug of the target is found.

use std::{
    fs,
    path::{Path, PathBuf},
    time::SystemTime,
};

use harness_builder::bugs::Bug;
use lafuzz::platform::output::visible_entries;

use crate::{bugs::oracle, fuzzers::Kind};

/// At most this many saved inputs are judged per run (AFL++ keeps one per new path).
const MAX_JUDGED: usize = 500;

/// The inputs `kind` saved as crashing or leaking in `work`, oldest first, with when.
fn saved(kind: Kind, work: &Path) -> Vec<(PathBuf, SystemTime)> {
    let files: Vec<PathBuf> = match kind {
        Kind::Ours(_) => ["crashes", "leaks"]
            .iter()
            .flat_map(|d| visible_entries(&work.join("out").join(d)))
            .filter(|f| f.extension().is_none_or(|e| e != "txt"))
            .collect(),
        Kind::LibFuzzer => visible_entries(work)
            .into_iter()
            .filter(|f| {
                f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("crash-") || n.starts_with("leak-"))
            })
            .collect(),
        Kind::Afl { .. } => visible_entries(&work.join("out/default/crashes"))
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "README.txt"))
            .collect(),
    };
    let mut dated: Vec<(PathBuf, SystemTime)> = files
        .into_iter()
        .filter_map(|f| {
            let at = fs::metadata(&f).and_then(|m| m.modified()).ok()?;
            Some((f, at))
        })
        .collect();
    dated.sort_by_key(|(_, at)| *at);
    dated
}

/// Seconds from `started` to the first saved input of each of `bugs` that this run found.
pub fn first_times(
    kind: Kind,
    work: &Path,
    started: SystemTime,
    judge: &Path,
    bugs: &[&'static Bug],
) -> Vec<(&'static str, f64)> {
    let mut found: Vec<(&'static str, f64)> = Vec::new();
    for (input, at) in saved(kind, work).into_iter().take(MAX_JUDGED) {
        if found.len() == bugs.len() {
            break;
        }
        let Some(report) = oracle::judge(judge, &input) else {
            continue;
        };
        let secs = at.duration_since(started).map_or(0.0, |d| d.as_secs_f64());
        for bug in oracle::which(&report, bugs) {
            if !found.iter().any(|(id, _)| *id == bug.id) {
                found.push((bug.id, secs));
            }
        }
    }
    found
}
