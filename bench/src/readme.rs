//! `--readme`: the suite's results written into README.md, between two markers, so the
//! figures there always come from a run and never from typing.

use std::{fmt::Write as _, fs, path::Path, process::Command};

use harness_builder::LIBRARIES;

use crate::{
    report::{self, Run},
    rows::rows,
    summary::overview,
};

const BEGIN: &str = "<!-- bench-results:begin -->";
const END: &str = "<!-- bench-results:end -->";
/// Where the bug benchmark's results go (`--bugs --readme`).
const BUGS_BEGIN: &str = "<!-- bench-bugs:begin -->";
const BUGS_END: &str = "<!-- bench-bugs:end -->";

/// The machine, as `lscpu` names its processor, and its core count.
fn machine() -> String {
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown processor".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} cores")
}

/// The day `file` was last written, or today (`date -u`).
fn date_of(file: Option<&Path>) -> String {
    let mut date = Command::new("date");
    if let Some(file) = file {
        date.arg("-r").arg(file);
    }
    date.args(["-u", "+%Y-%m-%d"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The Results section's body: when and where, branches per fuzzer and target, the overview.
pub fn section(runs: &[Run], targets: &[&str], secs: u64, trials: usize, date: &str) -> String {
    let mut fuzzers: Vec<&str> = Vec::new();
    for r in runs
        .iter()
        .filter(|r| targets.contains(&r.workload.as_str()))
    {
        if !fuzzers.contains(&r.fuzzer.as_str()) {
            fuzzers.push(&r.fuzzer);
        }
    }
    let mut out = format!(
        "Latest suite run: {}, `cargo make bench --time {secs} --trials {trials} --fuzzers {}`, \
         {}; one pinned core per run, no dictionary, branches of the library's own code \
         replayed through one llvm-cov build (medians).\n\n| target |",
        date,
        fuzzers.join(","),
        machine()
    );
    for f in &fuzzers {
        let _ = write!(out, " {f} |");
    }
    out.push_str("\n| --- |");
    out.push_str(&" ---: |".repeat(fuzzers.len()));
    out.push('\n');
    for target in targets {
        let rs = rows(runs, target);
        let _ = write!(out, "| {target} |");
        for f in &fuzzers {
            match rs.iter().find(|r| r.fuzzer == *f) {
                Some(r) => {
                    let branches = r.branches.map_or("-".into(), |b| format!("{b:.0}"));
                    let _ = write!(out, " {branches} ({:.0}/s) |", r.execs_per_sec);
                }
                None => out.push_str(" - |"),
            }
        }
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&overview(runs, targets));
    out
}

/// Replaces what lies between the markers in `root/README.md` with this run's section.
pub fn update(
    root: &Path,
    runs: &[Run],
    targets: &[&str],
    secs: u64,
    trials: usize,
) -> Result<(), String> {
    write_section(
        root,
        (BEGIN, END),
        &section(runs, targets, secs, trials, &date_of(None)),
    )
}

/// `--bugs --readme`: the bug benchmark's summary, with when and where it ran.
pub fn update_bugs(root: &Path, summary: &str) -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let section = format!(
        "Latest bug run: {}, `target/release/lafuzz-bench {}`, {}.\n\n{summary}",
        date_of(None),
        args.join(" "),
        machine()
    );
    write_section(root, (BUGS_BEGIN, BUGS_END), &section)
}

/// `--readme-from DIR`: the section of the earlier run whose output directory is `dir`, from its
/// `results.csv` (its date is the file's; its time per run, the runs' median wall time).
pub fn update_from(root: &Path, dir: &Path) -> Result<(), String> {
    let path = dir.join("results.csv");
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let runs = report::parse_csv(&text)?;
    let targets: Vec<&str> = LIBRARIES
        .iter()
        .map(|l| l.name)
        .filter(|t| runs.iter().any(|r| r.workload == *t))
        .collect();
    let suite: Vec<&Run> = runs
        .iter()
        .filter(|r| targets.contains(&r.workload.as_str()))
        .collect();
    let mut walls: Vec<u64> = suite.iter().map(|r| r.wall_secs.round() as u64).collect();
    walls.sort_unstable();
    let Some(&secs) = walls.get(walls.len() / 2) else {
        return Err(format!(
            "{} has no run on a target of the suite",
            path.display()
        ));
    };
    let trials = suite.iter().map(|r| r.trial + 1).max().unwrap_or(1);
    let date = date_of(Some(&path));
    write_section(
        root,
        (BEGIN, END),
        &section(&runs, &targets, secs, trials, &date),
    )
}

/// Replaces what lies between the markers `begin` and `end` in `root/README.md`.
fn write_section(root: &Path, (begin, end): (&str, &str), section: &str) -> Result<(), String> {
    let path = root.join("README.md");
    let text = fs::read_to_string(&path).map_err(|e| format!("cannot read README.md: {e}"))?;
    let (Some(at), Some(until)) = (text.find(begin), text.find(end)) else {
        return Err(format!("README.md lacks the markers {begin} and {end}"));
    };
    let updated = format!(
        "{}{begin}\n{}{}",
        &text[..at],
        under_subsection(section),
        &text[until..]
    );
    fs::write(&path, updated).map_err(|e| format!("cannot write README.md: {e}"))
}

/// The summary's headings two levels down: its `## Bugs` becomes `#### Bugs`, inside README's
/// `### Results` rather than a section of its own beside `## Benchmark`.
fn under_subsection(section: &str) -> String {
    section
        .split_inclusive('\n')
        .map(|line| match line.starts_with('#') {
            true => format!("##{line}"),
            false => line.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample_run as run;

    #[test]
    fn section_has_a_row_per_target_and_the_ratios() {
        let runs = [
            run("ours-direct", true, 300, 60),
            run("libfuzzer", false, 100, 40),
        ];
        let text = section(&runs, &["libpng"], 10, 1, "2026-12-02");
        assert!(
            text.contains("| target | ours-direct | libfuzzer |"),
            "{text}"
        );
        assert!(
            text.contains("| libpng | 60 (30/s) | 40 (10/s) |"),
            "{text}"
        );
        assert!(text.contains("1.50x (60 / 40)"), "{text}");
    }

    #[test]
    fn headings_go_under_the_readme_subsection() {
        let section = "Latest run.\n\n## Bugs: time\n\n| a |\n# Title\n";
        assert_eq!(
            under_subsection(section),
            "Latest run.\n\n#### Bugs: time\n\n| a |\n### Title\n"
        );
    }
}
