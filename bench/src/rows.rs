//! Medians over trials: one row per fuzzer on one workload.

use crate::{parse::median, report::Run};

/// Median over trials of one fuzzer's runs on one workload.
#[derive(Debug, Clone)]
pub struct Row {
    pub fuzzer: String,
    pub ours: bool,
    pub execs_per_sec: f64,
    pub execs_per_cpu_sec: f64,
    pub branches: Option<f64>,
    pub lines: Option<f64>,
    pub corpus: f64,
}

pub fn rows(runs: &[Run], workload: &str) -> Vec<Row> {
    let mut names: Vec<&str> = Vec::new();
    for r in runs.iter().filter(|r| r.workload == workload) {
        if !names.contains(&r.fuzzer.as_str()) {
            names.push(&r.fuzzer);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<&Run> = runs
                .iter()
                .filter(|r| r.workload == workload && r.fuzzer == name)
                .collect();
            let med = |f: &dyn Fn(&Run) -> Option<f64>| {
                median(&mut of.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
            };
            Row {
                fuzzer: name.to_string(),
                ours: of[0].ours,
                execs_per_sec: med(&|r| Some(r.execs_per_sec())).unwrap_or(0.0),
                execs_per_cpu_sec: med(&|r| Some(r.execs_per_cpu_sec())).unwrap_or(0.0),
                branches: med(&|r| r.branches.map(|b| b as f64)),
                lines: med(&|r| r.lines.map(|l| l as f64)),
                corpus: med(&|r| Some(r.corpus as f64)).unwrap_or(0.0),
            }
        })
        .collect()
}
