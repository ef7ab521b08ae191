//! The speed goals of issues #12 and #42, at the top of the summary: each one of ours against its
//! yardstick (a peer, or our own build without comparison logging), medians of execs/s.

use std::fmt::Write as _;

use crate::{
    cmplog_cost::{self, GROWN_WORKLOAD},
    report::Run,
    rows::rows,
};

struct Goal {
    what: &'static str,
    /// A target or an extra; with [`EVERY_TARGET`] in it, one row per target of the run, the
    /// target in its place (`*`, or `*@grown`: see `cmplog_cost.rs`).
    workload: &'static str,
    ours: &'static str,
    yardstick: &'static str,
    at_least: f64,
}

const EVERY_TARGET: &str = "*";

const GOALS: &[Goal] = &[
    Goal {
        what: "`persistent` vs AFL++ persistent (libpng)",
        workload: "libpng",
        ours: "ours-persistent",
        yardstick: "aflpp-persistent",
        at_least: 1.0,
    },
    Goal {
        what: "`fork` vs AFL++ fork server (libpng)",
        workload: "libpng",
        ours: "ours-fork",
        yardstick: "aflpp-forkserver",
        at_least: 1.0,
    },
    Goal {
        what: "engine on an empty harness: `direct` vs libFuzzer",
        workload: "empty",
        ours: "ours-direct",
        yardstick: "libfuzzer",
        at_least: 1.0,
    },
    Goal {
        what:
            "comparison logging ({target}): default build vs `LAFUZZ_NO_CMPLOG=1` build, `direct`",
        workload: EVERY_TARGET,
        ours: cmplog_cost::DEFAULT,
        yardstick: cmplog_cost::NO_CMPLOG,
        at_least: 0.9,
    },
    Goal {
        what: "comparison logging per execution ({target}): the same pair, both fuzzing from \
               the default build's grown corpus",
        workload: GROWN_WORKLOAD,
        ours: cmplog_cost::DEFAULT,
        yardstick: cmplog_cost::NO_CMPLOG,
        at_least: 0.9,
    },
    Goal {
        what: "comparison logging ({target}): a separate tracing build (`--cmplog`) vs \
               `LAFUZZ_NO_CMPLOG=1` alone, `direct`",
        workload: EVERY_TARGET,
        ours: "ours-direct-split",
        yardstick: "ours-direct-nocmplog",
        at_least: 0.8,
    },
];

/// The goals table (Markdown); goals whose runs are missing are left out.
pub fn goals(runs: &[Run], targets: &[&str]) -> String {
    let mut out = String::from(
        "## Speed goals (execs/s, medians)\n\n| goal | ours | yardstick | ratio | wanted | met |\n\
         | --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    let mut any = false;
    for goal in GOALS {
        let workloads: Vec<(&str, String)> = if goal.workload.contains(EVERY_TARGET) {
            targets
                .iter()
                .map(|t| (*t, goal.workload.replace(EVERY_TARGET, t)))
                .collect()
        } else {
            vec![(goal.workload, goal.workload.to_string())]
        };
        for (target, workload) in workloads {
            let of = rows(runs, &workload);
            let speed = |name: &str| {
                of.iter()
                    .find(|r| r.fuzzer == name)
                    .map(|r| r.execs_per_sec)
            };
            let (Some(ours), Some(yardstick)) = (speed(goal.ours), speed(goal.yardstick)) else {
                continue;
            };
            let ratio = if yardstick > 0.0 {
                ours / yardstick
            } else {
                0.0
            };
            any = true;
            let what = goal.what.replace("{target}", target);
            let _ = writeln!(
                out,
                "| {what} | {ours:.0} | {yardstick:.0} | {ratio:.2}x | >= {:.1}x | {} |",
                goal.at_least,
                if ratio >= goal.at_least { "yes" } else { "no" }
            );
        }
    }
    if any {
        out.push('\n');
        out
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample_run as run;

    #[test]
    fn ratios_against_the_yardstick() {
        let runs = [
            run("ours-direct", true, 90, 60),
            run("ours-direct-nocmplog", true, 100, 60),
        ];
        let text = goals(&runs, &["libpng"]);
        assert!(
            text.contains("| 9 | 10 | 0.90x | >= 0.9x | yes |"),
            "{text}"
        );
        assert!(!text.contains("per execution"), "{text}");
        assert!(!text.contains("persistent"), "{text}");
        let grown = |fuzzer, execs| Run {
            workload: cmplog_cost::grown_workload("libpng"),
            ..run(fuzzer, true, execs, 60)
        };
        let runs = [
            run("ours-direct", true, 50, 60),
            run("ours-direct-nocmplog", true, 100, 60),
            grown("ours-direct", 93),
            grown("ours-direct-nocmplog", 100),
        ];
        let text = goals(&runs, &["libpng"]);
        assert!(text.contains("| 5 | 10 | 0.50x | >= 0.9x | no |"), "{text}");
        assert!(
            text.contains(
                "per execution (libpng): the same pair, both fuzzing from the default \
                           build's grown corpus | 9 | 10 | 0.93x | >= 0.9x | yes |"
            ),
            "{text}"
        );
        assert!(text.contains("(libpng)"), "{text}");
        assert!(goals(&[], &["libpng"]).is_empty());
    }
}
