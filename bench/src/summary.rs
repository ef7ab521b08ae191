//! `summary.md`: the overview over targets (each mode of ours against the peer of its kind,
//! geometric means), one table per target (medians over trials, ours against the best peer),
//! the extras' tables and time to the magic crash.

use std::fmt::Write as _;

use crate::{
    goals::goals,
    parse::median,
    report::Run,
    rows::{rows, Row},
};

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

/// The peers a target's branches are compared with: the best of them.
const BEST_PEERS: &[&str] = &["libfuzzer", "aflpp-persistent", "aflpp-cmplog"];

/// Each mode of ours against the peer of its own kind ("best": the best of `BEST_PEERS`).
const KIND_PEERS: &[(&str, &str)] = &[
    ("ours-direct", "best"),
    ("ours-reset", "libfuzzer"),
    ("ours-fork", "aflpp-forkserver"),
    ("ours-forkserver", "aflpp-forkserver"),
    ("ours-persistent", "aflpp-persistent"),
];

/// Median branches of `fuzzer` in `rows`; "best": the best of `BEST_PEERS`.
fn branches_of(rows: &[Row], fuzzer: &str) -> Option<f64> {
    if fuzzer == "best" {
        return rows
            .iter()
            .filter(|r| BEST_PEERS.contains(&r.fuzzer.as_str()))
            .filter_map(|r| r.branches)
            .reduce(f64::max);
    }
    rows.iter().find(|r| r.fuzzer == fuzzer)?.branches
}

/// Branch ratios of each mode of ours to its peer, per target, with their geometric means.
pub fn overview(runs: &[Run], targets: &[&str]) -> String {
    let kinds: Vec<&(&str, &str)> = KIND_PEERS
        .iter()
        .filter(|(ours, _)| runs.iter().any(|r| r.fuzzer == *ours))
        .collect();
    if kinds.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Branches: each mode of ours / the peer of its kind (medians)\n\n| target |",
    );
    for (ours, peer) in &kinds {
        let peer = if *peer == "best" { "best peer" } else { peer };
        let _ = write!(out, " {ours} / {peer} |");
    }
    out.push_str("\n| --- |");
    out.push_str(&" ---: |".repeat(kinds.len()));
    out.push('\n');
    let mut logs: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    for target in targets {
        let rs = rows(runs, target);
        let _ = write!(out, "| {target} |");
        for (i, (ours, peer)) in kinds.iter().enumerate() {
            match (branches_of(&rs, ours), branches_of(&rs, peer)) {
                (Some(o), Some(p)) if p > 0.0 => {
                    logs[i].push((o / p).ln());
                    let _ = write!(out, " {:.2}x ({o:.0} / {p:.0}) |", o / p);
                }
                _ => out.push_str(" - |"),
            }
        }
        out.push('\n');
    }
    out.push_str("| **geometric mean** |");
    for l in &logs {
        if l.is_empty() {
            out.push_str(" - |");
        } else {
            let _ = write!(
                out,
                " **{:.3}x** |",
                (l.iter().sum::<f64>() / l.len() as f64).exp()
            );
        }
    }
    out.push_str("\n\n");
    out
}

/// One target's table: every fuzzer, ours against the best peer.
fn target_table(runs: &[Run], target: &str) -> String {
    let main = rows(runs, target);
    if main.is_empty() {
        return String::new();
    }
    let best_speed = main
        .iter()
        .filter(|r| BEST_PEERS.contains(&r.fuzzer.as_str()))
        .map(|r| r.execs_per_sec)
        .fold(0.0, f64::max);
    let best_branches = branches_of(&main, "best").unwrap_or(0.0);
    let mut out = format!(
        "## {target}\n\n| fuzzer | execs/s | execs/CPU-s | branches | lines | corpus | speed vs best peer | branches vs best peer |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
    );
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
    out.push('\n');
    out
}

/// The summary, Markdown: goals, the overview over targets, one table per target, extras.
pub fn summary(runs: &[Run], targets: &[&str], secs: u64, trials: usize) -> String {
    let mut out = format!(
        "# Fuzzer benchmark: {}, {secs} s per run, {trials} trial(s), one pinned core each\n\n",
        targets.join(", ")
    );
    out.push_str(&goals(runs, targets));
    out.push_str(&overview(runs, targets));
    for target in targets {
        out.push_str(&target_table(runs, target));
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
            run("aflpp-persistent", false, 200, 50),
        ];
        let text = summary(&runs, &["libpng"], 10, 1);
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
    fn overview_gives_each_mode_against_its_kind_and_the_geometric_mean() {
        let on = |target: &str, fuzzer: &str, ours: bool, branches: u64| Run {
            workload: target.into(),
            ..run(fuzzer, ours, 100, branches)
        };
        let runs = [
            on("a", "ours-direct", true, 200),
            on("a", "libfuzzer", false, 100),
            on("a", "aflpp-cmplog", false, 50),
            on("a", "ours-reset", true, 50),
            on("b", "ours-direct", true, 50),
            on("b", "aflpp-persistent", false, 100),
            on("b", "libfuzzer", false, 10),
            on("b", "ours-reset", true, 20),
        ];
        let text = overview(&runs, &["a", "b"]);
        assert!(
            text.contains("| ours-direct / best peer | ours-reset / libfuzzer |"),
            "{text}"
        );
        assert!(
            text.contains("| a | 2.00x (200 / 100) | 0.50x (50 / 100) |"),
            "{text}"
        );
        assert!(
            text.contains("| b | 0.50x (50 / 100) | 2.00x (20 / 10) |"),
            "{text}"
        );
        assert!(
            text.contains("| **geometric mean** | **1.000x** | **1.000x** |"),
            "{text}"
        );
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
        let text = summary(&runs, &[], 10, 3);
        assert!(text.contains("| ours | 3.0 | 3/3 trials |"), "{text}");
        assert!(text.contains("| peer | > 60 | 1/3 trials |"), "{text}");
    }
}
