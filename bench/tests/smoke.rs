//! The bench end to end, short: every build of every target of the suite fuzzed for 1 s (AFL++'s
//! only where it is installed), every fuzzer on one target, with CSV, summary and plots produced.

use std::{fs, path::PathBuf, process::Command};

fn listed(what: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_lafuzz-bench"))
        .arg("--list")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{what}: ")))
        .unwrap_or_else(|| panic!("no {what} in --list: {text}"));
    line.split(',').map(String::from).collect()
}

/// The build without comparison logging (the yardstick), the fuzzers that run it (itself, and
/// `ours-direct-split`, which traces comparisons with the standalone build), and the one
/// target they run on here (each costs a build of the library).
const YARDSTICK: &str = "ours-direct-nocmplog";
const ON_YARDSTICK: [&str; 2] = [YARDSTICK, "ours-direct-split"];
const YARDSTICK_TARGET: &str = "zlib";

/// One fuzzer per build of a target (ours in-process and standalone, libFuzzer's, AFL++'s with
/// its CmpLog build, AFL++'s one-file build): every target is fuzzed by these. The other
/// fuzzers run the same builds in other modes, on the yardstick's target only: each mode is
/// tested on many targets by the fuzzer's own tests, and each run here costs 2-3 s of CI.
const ONE_PER_BUILD: [&str; 5] = [
    "ours-direct",
    "ours-persistent",
    "libfuzzer",
    "aflpp-cmplog",
    "aflpp-forkserver",
];

/// Runs the bench for 1 s per fuzzer and target, `args` choosing them; the results' rows.
fn bench_rows(tag: &str, args: &[&str]) -> (String, Vec<Vec<String>>, PathBuf) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("lafuzz-bench-smoke-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_lafuzz-bench"))
        .args(["--time", "1", "--no-extras", "--in-pairs", "--quick-builds"])
        .args(args)
        .arg("--out")
        .arg(&out)
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(status.success(), "bench {args:?}");
    let csv = fs::read_to_string(out.join("results.csv")).unwrap();
    let rows = csv
        .lines()
        .skip(1)
        .map(|r| r.split(',').map(String::from).collect())
        .collect();
    (csv, rows, out)
}

/// `fuzzer`'s run on `target` executed inputs and covered branches.
fn assert_ran(csv: &str, rows: &[Vec<String>], target: &str, fuzzer: &str) {
    let row = rows
        .iter()
        .find(|r| r[0] == target && r[1] == fuzzer)
        .unwrap_or_else(|| panic!("no run of {fuzzer} on {target}: {csv}"));
    assert!(row[5].parse::<u64>().unwrap() > 0, "no executions: {row:?}");
    assert!(row[9].parse::<u64>().unwrap() > 0, "no branches: {row:?}");
}

#[test]
fn every_build_of_every_target_fuzzes_and_so_does_every_fuzzer() {
    let afl = Command::new("afl-fuzz").arg("-h").output().is_ok();
    let targets = listed("targets");
    let fuzzers: Vec<String> = listed("fuzzers")
        .into_iter()
        .filter(|f| afl || !f.starts_with("aflpp"))
        .collect();
    assert!(
        targets.len() >= 5
            && fuzzers.len() >= 6
            && ON_YARDSTICK.iter().all(|y| fuzzers.iter().any(|f| f == y))
            && ONE_PER_BUILD
                .iter()
                .all(|f| !afl || fuzzers.iter().any(|g| g == f)),
        "{targets:?} {fuzzers:?}"
    );
    let (per_build, other_modes): (Vec<&str>, Vec<&str>) = fuzzers
        .iter()
        .map(String::as_str)
        .filter(|f| !ON_YARDSTICK.contains(f))
        .partition(|f| ONE_PER_BUILD.contains(f));
    let (csv, rows, out) = bench_rows("suite", &["--fuzzers", &per_build.join(",")]);
    for target in &targets {
        for fuzzer in &per_build {
            assert_ran(&csv, &rows, target, fuzzer);
        }
        let png = fs::read(out.join(format!("coverage-{target}.png"))).unwrap();
        assert!(
            png.starts_with(b"\x89PNG"),
            "coverage-{target}.png is not a PNG"
        );
    }
    let summary = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("geometric mean"), "{summary}");
    for target in &targets {
        assert!(summary.contains(&format!("## {target}\n")), "{summary}");
    }
    fs::remove_dir_all(&out).unwrap();

    // On the yardstick's target: the other modes; the yardstick, side by side with the default
    // build, then both from the default build's grown corpus (what comparison logging costs, in
    // the summary); the split build.
    let chosen: Vec<&str> = ["ours-direct"]
        .into_iter()
        .chain(ON_YARDSTICK)
        .chain(other_modes.iter().copied())
        .collect();
    let (csv, rows, out) = bench_rows(
        "yardstick",
        &[
            "--targets",
            YARDSTICK_TARGET,
            "--fuzzers",
            &chosen.join(","),
        ],
    );
    for fuzzer in ON_YARDSTICK.iter().chain(&other_modes) {
        assert_ran(&csv, &rows, YARDSTICK_TARGET, fuzzer);
    }
    let grown = format!("{YARDSTICK_TARGET}@grown");
    for fuzzer in ["ours-direct", YARDSTICK] {
        let row = rows.iter().find(|r| r[0] == grown && r[1] == fuzzer);
        let execs = row.map(|r| r[5].parse::<u64>().unwrap());
        assert!(execs > Some(0), "no run of {fuzzer} on {grown}: {csv}");
    }
    let summary = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("grown corpus"), "{summary}");
    fs::remove_dir_all(&out).unwrap();
}

#[test]
fn mutation_costs_name_every_havoc_mutation_and_the_stacks_per_execution() {
    let out = Command::new(env!("CARGO_BIN_EXE_lafuzz-bench"))
        .arg("--mutation-costs")
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // One line per mutation: its name and a cost in ns.
    let costs: Vec<f64> = text
        .lines()
        .filter_map(|l| {
            let (name, ns) = l.trim().rsplit_once(' ')?;
            name.trim_end()
                .ends_with("Mutator")
                .then(|| ns.parse().unwrap())
        })
        .collect();
    // LibAFL's havoc (25 without crossover, 2 crossovers) and the two token mutations.
    let tokens = text.matches("  Token").count();
    assert_eq!((costs.len(), tokens), (27, 2), "{text}");
    assert!(costs.iter().all(|ns| ns.is_finite()), "{text}");
    assert!(text.contains("ns per execution"), "{text}");
}
