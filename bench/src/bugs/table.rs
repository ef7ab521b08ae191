//! The bug benchmark's results: median time to each bug per fuzzer and in how many trials it
//! was found, ours against the best peer, and the survival plot (bugs found over time).

use std::{fmt::Write as _, fs, ops::Range, path::Path, process::Command};

use harness_builder::bugs::{Bug, BUGS};

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

/// Each trial's time to `bug` for `fuzzer` (None: not found within the cap), over the trials
/// `trials` holds.
fn times(runs: &[BugRun], fuzzer: &str, bug: &str, trials: Range<usize>) -> Vec<Option<f64>> {
    runs.iter()
        .filter(|r| r.fuzzer == fuzzer && trials.contains(&r.trial))
        .filter(|r| super::bugs_of(r.target).iter().any(|b| b.id == bug))
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

/// In how many trials the bug was found.
fn found(times: &[Option<f64>]) -> usize {
    times.iter().flatten().count()
}

fn cell(times: &[Option<f64>]) -> String {
    if times.is_empty() {
        // A fuzzer that cannot see the bug's kind (AFL++ and leaks) was not run on it.
        return "not run".into();
    }
    let found = found(times);
    match median(times) {
        Some(m) => format!("{m:.0} s ({found}/{})", times.len()),
        None => format!("- ({found}/{})", times.len()),
    }
}

/// One median time to a bug against another, as the goals count it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Versus {
    /// `first / second`: both found the bug in more than half their trials.
    Ratio(f64),
    FirstOnly,
    SecondOnly,
    Neither,
}

impl Versus {
    fn of(first: Option<f64>, second: Option<f64>) -> Self {
        match (first, second) {
            // Under a second both are "at once": no ratio of two timer ticks.
            (Some(a), Some(b)) => Self::Ratio(a / b.max(1.0)),
            (Some(_), None) => Self::FirstOnly,
            (None, Some(_)) => Self::SecondOnly,
            (None, None) => Self::Neither,
        }
    }
}

/// The goals counted over bugs: trials lost, and the medians compared where the second side
/// has one (at most 0.5x, over 1.0x).
#[derive(Debug, Default, PartialEq)]
struct Tally {
    fewer_trials: usize,
    compared: usize,
    at_half: usize,
    over_one: usize,
}

impl Tally {
    fn add(&mut self, versus: Versus, fewer_trials: bool) {
        self.fewer_trials += usize::from(fewer_trials);
        match versus {
            Versus::Ratio(r) => {
                self.compared += 1;
                self.at_half += usize::from(r <= 0.5);
                self.over_one += usize::from(r > 1.0);
            }
            Versus::SecondOnly => {
                self.compared += 1;
                self.over_one += 1;
            }
            Versus::FirstOnly | Versus::Neither => {}
        }
    }
}

/// Markdown: one row per bug, one column per fuzzer, then ours against the best peer; the
/// goals of the benchmark checked; and, with two trials or more, the same goals checked for
/// each fuzzer against itself (its first half of the trials against its second), which shows
/// how far medians of that many trials move by chance alone.
pub fn summary(runs: &[BugRun], cap: u64, trials: usize) -> String {
    let names = fuzzers(runs);
    let ours_at = names.iter().position(|n| n.starts_with("ours"));
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
    let mut goals = Tally::default();
    for bug in benched(runs) {
        let _ = write!(text, "| {} | {} |", bug.id, bug.target);
        // Each fuzzer's times, in the order of `names`.
        let each: Vec<Vec<Option<f64>>> = names
            .iter()
            .map(|n| times(runs, n, bug.id, 0..trials))
            .collect();
        for t in &each {
            let _ = write!(text, " {} |", cell(t));
        }
        let ours = ours_at.map(|i| &each[i]);
        let peers = || {
            (0..each.len())
                .filter(|i| Some(*i) != ours_at)
                .map(|i| &each[i])
        };
        let best_peer = peers().filter_map(|t| median(t)).min_by(f64::total_cmp);
        let versus = Versus::of(ours.and_then(|t| median(t)), best_peer);
        let missed = ours.is_some_and(|o| peers().any(|p| found(p) > found(o)));
        goals.add(versus, missed);
        let cell = match versus {
            Versus::Ratio(r) => format!("{r:.2}x"),
            Versus::FirstOnly => "only ours".into(),
            Versus::SecondOnly => "peers only".into(),
            Versus::Neither => "none".into(),
        };
        let _ = writeln!(text, " {cell} |");
    }
    let _ = writeln!(
        text,
        "\nGoals: bugs a peer found in more trials than ours: {} (goal 0); of {} bug(s) with a \
         median for a peer, ours at most 0.5x the best peer on {} (goal: half), over 1.0x on {} \
         (goal 0).",
        goals.fewer_trials, goals.compared, goals.at_half, goals.over_one
    );
    let half = trials / 2;
    if half > 0 {
        let each: Vec<String> = names
            .iter()
            .map(|n| {
                let t = against_itself(runs, n, half);
                format!(
                    "{n}: found in fewer trials on {}, at most 0.5x on {} and over 1.0x on {} of {}",
                    t.fewer_trials, t.at_half, t.over_one, t.compared
                )
            })
            .collect();
        let _ = writeln!(
            text,
            "\nChance alone: each fuzzer's first {half} trial(s) against its next {half}, counted \
             as the goals count ours against the best peer: {}.",
            each.join("; ")
        );
    }
    text
}

/// The bugs of the targets that `runs` ran on.
fn benched(runs: &[BugRun]) -> impl Iterator<Item = &'static Bug> + '_ {
    BUGS.iter()
        .filter(|b| runs.iter().any(|r| r.target == b.target))
}

/// The goals' counts for `fuzzer`'s trials `0..half` against its trials `half..2 * half`.
fn against_itself(runs: &[BugRun], fuzzer: &str, half: usize) -> Tally {
    let mut tally = Tally::default();
    for bug in benched(runs) {
        let first = times(runs, fuzzer, bug.id, 0..half);
        let second = times(runs, fuzzer, bug.id, half..2 * half);
        tally.add(
            Versus::of(median(&first), median(&second)),
            found(&second) > found(&first),
        );
    }
    tally
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

    fn run(trial: usize, found: Vec<(&'static str, f64)>) -> BugRun {
        BugRun {
            target: "oniguruma",
            fuzzer: "ours-direct",
            trial,
            found,
        }
    }

    #[test]
    fn a_fuzzer_not_run_on_a_bug_target_is_shown_so_and_not_counted() {
        let peer_elsewhere = BugRun {
            fuzzer: "aflpp-cmplog",
            ..run(0, vec![("ONIG-1", 5.0)])
        };
        let expat = BugRun {
            target: "expat",
            ..run(0, vec![("EXPAT-1", 9.0)])
        };
        let text = summary(&[run(0, vec![]), peer_elsewhere, expat], 60, 1);
        assert!(
            text.contains("| EXPAT-1 | expat | 9 s (1/1) | not run | only ours |"),
            "{text}"
        );
    }

    #[test]
    fn a_fuzzer_against_itself_is_counted_as_ours_against_a_peer() {
        let runs = vec![
            run(0, vec![("ONIG-1", 10.0)]),
            run(1, vec![("ONIG-1", 20.0)]),
            run(2, vec![("ONIG-1", 100.0), ("ONIG-3", 5.0)]),
            run(3, vec![("ONIG-1", 200.0), ("ONIG-3", 7.0)]),
        ];
        // ONIG-1: 15 s against 150 s, at most 0.5x; ONIG-3 only in the second half: over
        // 1.0x and found in fewer trials; ONIG-2 and ONIG-4 in neither: not compared.
        let expected = Tally {
            fewer_trials: 1,
            compared: 2,
            at_half: 1,
            over_one: 1,
        };
        assert_eq!(against_itself(&runs, "ours-direct", 2), expected);
        let text = summary(&runs, 60, 4);
        assert!(text.contains(
            "ours-direct: found in fewer trials on 1, at most 0.5x on 1 and over 1.0x on 1 of 2."
        ));
        assert!(!summary(&runs[..1], 60, 1).contains("Chance alone"));
    }
}
