//! Reading back what each kind of fuzzer leaves in its work directory: executions, corpus and
//! crashes.

use std::{
    fs,
    path::{Path, PathBuf},
};

use lafuzz::platform::output::visible_entries;

use crate::{fuzzers::Kind, parse};

/// Saved inputs in a directory (AFL++ also leaves a `README.txt` in its crash directory).
pub fn count_files(dir: &Path) -> usize {
    visible_entries(dir)
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "README.txt"))
        .count()
}

impl Kind {
    /// Where a fuzzer keeps its corpus (for coverage).
    pub fn corpus_dir(self, work: &Path) -> PathBuf {
        match self {
            Kind::Ours(_) => work.join("out/queue"),
            Kind::LibFuzzer => work.join("corpus"),
            Kind::Afl { .. } => work.join("out/default/queue"),
        }
    }

    pub fn crashes_found(self, work: &Path) -> bool {
        match self {
            Kind::Ours(_) => {
                count_files(&work.join("out/crashes"))
                    + count_files(&work.join("out/crashes-flaky"))
                    > 0
            }
            Kind::LibFuzzer => fs::read_dir(work).is_ok_and(|rd| {
                rd.filter_map(Result::ok)
                    .any(|e| e.file_name().to_string_lossy().starts_with("crash-"))
            }),
            Kind::Afl { .. } => count_files(&work.join("out/default/crashes")) > 0,
        }
    }

    /// Executions done, from its stats file or (libFuzzer) its final stats in `log`.
    pub fn execs(self, work: &Path, log: &Path) -> u64 {
        match self {
            Kind::Ours(_) => fs::read_to_string(work.join("out/fuzzer_stats"))
                .ok()
                .and_then(|t| parse::afl_execs(&t)),
            Kind::LibFuzzer => fs::read_to_string(log)
                .ok()
                .and_then(|t| parse::libfuzzer_execs(&t)),
            Kind::Afl { .. } => fs::read_to_string(work.join("out/default/fuzzer_stats"))
                .ok()
                .and_then(|t| parse::afl_execs(&t)),
        }
        .unwrap_or(0)
    }
}
