//! `summary.md`: the libpng table (medians over trials, ours against the best peer), the
//! extras' tables and time to the magic crash.

use std::fmt::Write as _;

use crate::{goals::goals, parse::median, report::Run};

/// Median over trials of one fuzzer's runs on one workload.
#[derive(Debug, Clone)]
pub struct Row {
    pub fuzzer: String,
    ours: bool,
    pub execs_per_sec: f64,
    execs_per_cpu_sec: f64,
    branches: Option<f64>,
    lines: Option<f64>,
    corpus: f64,
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

fn ratio(ours: f64, best: f64) -> String {
    if best > 0.0 {
        format!("{:.2}x", ours / best)
    } else {
        "-".into()
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0}"))
}

/// The summary table, Markdown.
pub fn summary(runs: &[Run], secs: u64, trials: usize) -> String {
    let mut out = format!(
        "# Fuzzer benchmark: libpng, {secs} s per run, {trials} trial(s), one pinned core each\n\n"
    );
    out.push_str(&goals(runs));
    let main = rows(runs, "libpng");
    if !main.is_empty() {
        let best_speed = main
            .iter()
            .filter(|r| !r.ours)
            .map(|r| r.execs_per_sec)
            .fold(0.0, f64::max);
        let best_branches = main
            .iter()
            .filter(|r| !r.ours)
            .filter_map(|r| r.branches)
            .fold(0.0, f64::max);
        out.push_str("| fuzzer | execs/s | execs/CPU-s | branches | lines | corpus | speed vs best peer | branches vs best peer |\n");
        out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for r in &main {
            let (speed_ratio, branch_ratio) = if r.ours {
                (
                    ratio(r.execs_per_sec, best_speed),
                    ratio(r.branches.unwrap_or(0.0), best_branches),
                )
            } else {
                ("peer".into(), "peer".into())
            };
            let _ = writeln!(
                out,
                "| {} | {:.0} | {:.0} | {} | {} | {:.0} | {} | {} |",
                r.fuzzer,
                r.execs_per_sec,
                r.execs_per_cpu_sec,
                num(r.branches),
                num(r.lines),
                r.corpus,
                speed_ratio,
                branch_ratio
            );
        }
    }
    for (workload, title) in [
        (
            "empty",
            "Engine overhead (empty harness): executions per second",
        ),
        (
            "bare",
            "No fuzzer: the libpng harness called in a loop on the seeds",
        ),
        ("scaling", "Scaling: ours, direct mode"),
    ] {
        let rs = rows(runs, workload);
        if rs.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n## {title}\n\n| run | execs/s | execs/CPU-s |\n| --- | ---: | ---: |"
        );
        for r in rs {
            let _ = writeln!(
                out,
                "| {} | {:.0} | {:.0} |",
                r.fuzzer, r.execs_per_sec, r.execs_per_cpu_sec
            );
        }
    }
    let magic: Vec<&Run> = runs.iter().filter(|r| r.workload == "magic").collect();
    if !magic.is_empty() {
        out.push_str("\n## Comparison solving (harnesses/magic): time to first crash, median\n\n| fuzzer | median s | found in |\n| --- | ---: | ---: |\n");
        let mut names: Vec<&str> = Vec::new();
        for r in &magic {
            if !names.contains(&r.fuzzer.as_str()) {
                names.push(&r.fuzzer);
            }
        }
        for name in names {
            let of: Vec<&&Run> = magic.iter().filter(|r| r.fuzzer == name).collect();
            let mut found: Vec<f64> = of.iter().filter_map(|r| r.time_to_crash).collect();
            let cap = of.iter().map(|r| r.wall_secs).fold(0.0, f64::max);
            // A trial that did not find it counts as the cap (a lower bound) in the median.
            let mut all: Vec<f64> = of.iter().map(|r| r.time_to_crash.unwrap_or(cap)).collect();
            let med = median(&mut all).unwrap_or(0.0);
            let shown = if found.len() * 2 > of.len() {
                format!("{med:.1}")
            } else {
                format!("> {cap:.0}")
            };
            found.sort_by(f64::total_cmp);
            let _ = writeln!(
                out,
                "| {name} | {shown} | {}/{} trials |",
                found.len(),
                of.len()
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::sample_run as run;

    #[test]
    fn summary_compares_ours_to_the_best_peer() {
        let runs = [
            run("ours-direct", true, 300, 60),
            run("libfuzzer", false, 100, 40),
            run("aflpp", false, 200, 50),
        ];
        let text = summary(&runs, 10, 1);
        let ours = text
            .lines()
            .find(|l| l.starts_with("| ours-direct"))
            .unwrap();
        assert!(ours.contains("| 30 | 60 |"), "{ours}");
        assert!(ours.ends_with("| 1.50x | 1.20x |"), "{ours}");
        assert!(text
            .lines()
            .any(|l| l.starts_with("| libfuzzer") && l.ends_with("| peer | peer |")));
    }

    #[test]
    fn magic_table_reports_medians_and_misses() {
        let mk = |name: &str, t: Option<f64>| Run {
            fuzzer: name.into(),
            workload: "magic".into(),
            wall_secs: 60.0,
            time_to_crash: t,
            ..Run::default()
        };
        let runs = [
            mk("ours", Some(2.0)),
            mk("ours", Some(4.0)),
            mk("ours", Some(3.0)),
            mk("peer", None),
            mk("peer", Some(10.0)),
            mk("peer", None),
        ];
        let text = summary(&runs, 10, 3);
        assert!(text.contains("| ours | 3.0 | 3/3 trials |"), "{text}");
        assert!(text.contains("| peer | > 60 | 1/3 trials |"), "{text}");
    }
}
