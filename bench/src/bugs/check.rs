//! `--check-bugs`: every bug target built for every fuzzer, and each bug's stored reproducer
//! shown to be that bug by its oracle in every build (so each fuzzer can see it), without
//! fuzzing.

use std::{path::Path, process::Command};

use harness_builder::bugs::{Bug, BUGS, BUG_TARGETS};

use super::oracle::{self, Report};
use crate::{builds, fuzzers::Bin, paths::Paths};

/// Runs `bin` on `input` as each build takes one input, and reads the sanitizer's report.
fn report_of(bin: &Path, ours: bool, input: &Path) -> Option<Report> {
    if !ours {
        return oracle::judge(bin, input);
    }
    // Ours replays an input with its `replay` command, in a child of its own.
    let out = Command::new("timeout")
        .args(["-s", "KILL", "20"])
        .arg(bin)
        .arg("replay")
        .arg(input)
        .output()
        .ok()?;
    Report::parse(&String::from_utf8_lossy(&out.stderr))
}

/// The builds that must show `bug`: (suffix, ours).
fn builds(afl: bool) -> Vec<(&'static str, bool)> {
    let mut all = vec![("-libfuzzer-asan", false), ("-ours-asan", true)];
    if afl {
        all.push(("-afl-cmplog-asan", false));
    }
    all
}

fn check_one(p: &Paths, bug: &Bug, afl: bool) -> Result<(), String> {
    let input = bug.reproducer(&p.root);
    for (suffix, ours) in builds(afl) {
        let bin = Bin::bench(bug.target, suffix).path(p);
        let report = report_of(&bin, ours, &input)
            .ok_or_else(|| format!("{}: {} does not crash on it", bug.id, bin.display()))?;
        if !bug.oracles.iter().any(|o| report.is(o)) {
            return Err(format!(
                "{}: {} reports {} in {:?}, none of its oracles {:?}",
                bug.id,
                bin.display(),
                report.kind,
                &report.frames[..report.frames.len().min(3)],
                bug.oracles
            ));
        }
    }
    Ok(())
}

/// Builds every bug target and checks every bug's reproducer against its oracle.
pub fn check(p: &Paths, afl: bool) -> Result<(), String> {
    let targets: Vec<_> = BUG_TARGETS.iter().collect();
    builds::build_bug_targets(p, afl, &targets)?;
    let mut failures = Vec::new();
    for bug in BUGS {
        match check_one(p, bug, afl) {
            Ok(()) => println!(
                "bench: {} ({}): {} in {}: reproduced by every build",
                bug.id,
                bug.target,
                bug.oracles[0].kind,
                bug.oracles[0].frames.join(" < ")
            ),
            Err(e) => failures.push(e),
        }
    }
    if failures.is_empty() {
        println!("bench: all {} bugs reproduced", BUGS.len());
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}
