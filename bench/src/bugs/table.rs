//! The bug benchmark's results: median time to each bug per fuzzer and in how many trials it
//! was found, ours against the best peer, and the survival plot (bugs found over time).

use std::{fmt::Write as _, fs, path::Path, process::Command};

use harness_builder::bugs::BUGS;

use super::BugRun;

/// The fuzzers in `runs`, in their order of first appearance (ours first).
fn fuzzers(runs: &[BugRun]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for r in runs {
        if !names.contains(&r.fuzzer) {
            names.push(r.fuzzer);
        }
    }
    names
}

/// Each trial's time to `bug` for `fuzzer` (None: not found within the cap).
fn times(runs: &[BugRun], fuzzer: &str, bug: &str) -> Vec<Option<f64>> {
    runs.iter()
        .filter(|r| r.fuzzer == fuzzer && super::bugs_of(r.target).iter().any(|b| b.id == bug))
        .map(|r| r.found.iter().find(|(id, _)| *id == bug).map(|(_, s)| *s))
        .collect()
}

/// The median over trials, a trial without the bug counting as never: None when the bug was
/// found in half the trials or fewer (no finite median).
pub fn median(times: &[Option<f64>]) -> Option<f64> {
    let mut all: Vec<f64> = times.iter().map(|t| t.unwrap_or(f64::INFINITY)).collect();
    if all.is_empty() {
        return None;
    }
    all.sort_by(f64::total_cmp);
    let mid = all.len() / 2;
    let m = if all.len() % 2 == 1 {
        all[mid]
    } else {
        (all[mid - 1] + all[mid]) / 2.0
    };
    m.is_finite().then_some(m)
}

fn cell(times: &[Option<f64>]) -> String {
    let found = times.iter().filter(|t| t.is_some()).count();
    match median(times) {
        Some(m) => format!("{m:.0} s ({found}/{})", times.len()),
        None => format!("- ({found}/{})", times.len()),
    }
}

/// Markdown: one row per bug, one column per fuzzer, then ours against the best peer; and
/// the goals of the benchmark checked.
pub fn summary(runs: &[BugRun], cap: u64, trials: usize) -> String {
    let names = fuzzers(runs);
    let ours = names.iter().copied().find(|n| n.starts_with("ours"));
    let mut text = format!(
        "## Bugs: time to each real bug (median of {trials} trial(s), cap {cap} s; (k/n): \
         trials that found it)\n\n| bug | target |"
    );
    for n in &names {
        let _ = write!(text, " {n} |");
    }
    text.push_str(" ours / best peer |\n|---|---|");
    text.push_str(&"---|".repeat(names.len() + 1));
    text.push('\n');
    let (mut compared, mut at_half, mut over_one, mut missed) = (0, 0, 0, 0);
    for bug in BUGS
        .iter()
        .filter(|b| runs.iter().any(|r| r.target == b.target))
    {
        let _ = write!(text, "| {} | {} |", bug.id, bug.target);
        for n in &names {
            let _ = write!(text, " {} |", cell(&times(runs, n, bug.id)));
        }
        let found_in = |n: &str| times(runs, n, bug.id).iter().flatten().count();
        let peers: Vec<&str> = names.iter().copied().filter(|n| Some(*n) != ours).collect();
        let best_peer = peers
            .iter()
            .filter_map(|n| median(&times(runs, n, bug.id)))
            .min_by(f64::total_cmp);
        let ours_median = ours.and_then(|o| median(&times(runs, o, bug.id)));
        if let Some(o) = ours {
            if peers.iter().any(|p| found_in(p) > found_in(o)) {
                missed += 1;
            }
        }
        let ratio = match (ours_median, best_peer) {
            (Some(o), Some(p)) => {
                compared += 1;
                let r = o / p.max(1.0);
                at_half += usize::from(r <= 0.5);
                over_one += usize::from(r > 1.0);
                format!("{r:.2}x")
            }
            (Some(_), None) => "only ours".into(),
            (None, Some(_)) => {
                compared += 1;
                over_one += 1;
                "peers only".into()
            }
            (None, None) => "none".into(),
        };
        let _ = writeln!(text, " {ratio} |");
    }
    let _ = writeln!(
        text,
        "\nGoals: bugs a peer found in more trials than ours: {missed} (goal 0); of {compared} \
         bug(s) with a median for ours or a peer, ours at most 0.5x the best peer on {at_half} \
         (goal: half), over 1.0x on {over_one} (goal 0)."
    );
    text
}

/// `bugs-survival.png`: per fuzzer, bugs found (mean over trials) against time, by gnuplot.
pub fn plot(runs: &[BugRun], cap: u64, trials: usize, dir: &Path) -> Result<(), String> {
    let mut script = format!(
        "set terminal pngcairo size 1000,600\nset output 'bugs-survival.png'\nset title \
         'Bugs found over time (mean of {trials} trial(s))'\nset xlabel 'seconds'\nset \
         ylabel 'bugs'\nset xrange [0:{cap}]\nset key left top\nplot "
    );
    for (i, name) in fuzzers(runs).iter().enumerate() {
        let mut at: Vec<f64> = runs
            .iter()
            .filter(|r| r.fuzzer == *name)
            .flat_map(|r| r.found.iter().map(|(_, s)| *s))
            .collect();
        at.sort_by(f64::total_cmp);
        let mut data = String::from("0 0\n");
        for (n, t) in at.iter().enumerate() {
            let _ = writeln!(data, "{t:.1} {}", (n + 1) as f64 / trials.max(1) as f64);
        }
        let _ = writeln!(data, "{cap} {}", at.len() as f64 / trials.max(1) as f64);
        let file = format!("bugs-{name}.dat");
        fs::write(dir.join(&file), data).map_err(|e| e.to_string())?;
        if i > 0 {
            script.push_str(", ");
        }
        let _ = write!(script, "'{file}' using 1:2 with steps lw 2 title '{name}'");
    }
    script.push('\n');
    fs::write(dir.join("bugs-survival.gp"), script).map_err(|e| e.to_string())?;
    let status = Command::new("gnuplot")
        .arg("bugs-survival.gp")
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot run gnuplot (apt-get install gnuplot-nox): {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("gnuplot failed: {status}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_counts_a_trial_without_the_bug_as_never() {
        assert_eq!(median(&[Some(10.0), None, Some(30.0)]), Some(30.0));
        assert_eq!(median(&[Some(10.0), None, None]), None);
        assert_eq!(median(&[Some(10.0), Some(20.0)]), Some(15.0));
    }
}
