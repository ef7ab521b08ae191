//! The bug benchmark, short: every bug target built for every fuzzer, every bug's stored
//! reproducer shown to be that bug by its oracle in each build; then the benchmark itself for
//! a few seconds on one target (unoptimized builds, in a folder of their own: the two tests
//! run at once), with its CSV, summary and survival plot.

use std::{fs, path::PathBuf, process::Command};

fn bench() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lafuzz-bench"));
    cmd.current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    cmd
}

fn listed(what: &str) -> Vec<String> {
    let out = bench().arg("--list").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{what}: ")))
        .unwrap_or_else(|| panic!("no {what} in --list: {text}"));
    line.split(',').map(String::from).collect()
}

#[test]
fn every_bug_target_builds_and_every_reproducer_is_its_bug() {
    // Optimized builds, as the benchmark's: STB-2 indexes with a shift past the word's width,
    // whose result differs at -O0.
    let out = bench().arg("--check-bugs").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bugs = listed("bugs");
    let targets = listed("bug targets");
    assert!(
        bugs.len() >= 8 && targets.len() >= 3,
        "{bugs:?} {targets:?}"
    );
    for bug in &bugs {
        assert!(
            text.contains(&format!("bench: {bug} (")) && text.contains("reproduced by every build"),
            "{bug} not checked: {text}"
        );
    }
}

#[test]
fn a_short_bug_run_writes_its_table_csv_and_plot_over_two_trials() {
    let out = std::env::temp_dir().join(format!("lafuzz-bench-bugs-{}", std::process::id()));
    let _ = fs::remove_dir_all(&out);
    let status = bench()
        .args([
            "--bugs",
            "--quick-builds",
            "--targets",
            "expat",
            "--bug-cap",
            "3",
            "--trials",
            "2",
            "--out",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let csv = fs::read_to_string(out.join("bugs.csv")).unwrap();
    assert!(csv.contains("expat,ours-direct,0,EXPAT-1,"), "{csv}");
    assert!(csv.contains("expat,libfuzzer,0,EXPAT-1,"), "{csv}");
    let table = fs::read_to_string(out.join("bugs.md")).unwrap();
    assert!(table.contains("| EXPAT-1 | expat |"), "{table}");
    // AFL++ turns LeakSanitizer off: it is not run where every bug is a leak.
    assert!(
        !csv.contains("expat,aflpp") && !table.contains("aflpp"),
        "{csv}{table}"
    );
    assert!(csv.contains("expat,ours-direct,1,EXPAT-1,"), "{csv}");
    // Two trials: each fuzzer's first against its second, as chance alone would move them.
    assert!(
        table.contains("Chance alone: each fuzzer's first 1 trial(s) against its next 1")
            && table.contains(" ours-direct: found in fewer trials on "),
        "{table}"
    );
    let png = fs::read(out.join("bugs-survival.png")).unwrap();
    assert!(
        png.starts_with(b"\x89PNG"),
        "bugs-survival.png is not a PNG"
    );
    fs::remove_dir_all(&out).unwrap();
}
