//! ClusterFuzz's own libFuzzer engine (PyPI `clusterfuzz`) on ours and, side by side, on a
//! `clang-19 -fsanitize=fuzzer` build of the same harness: its five steps, a leak reported as a
//! crash, and the crash state (one bug per state) its stack parser names for each crash, from
//! the fuzzing log and from the reproducing run.

mod common;

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use common::{fuzzer, libafl_cc, libfuzzer_build, root, run_limited, text, TempDir};

/// The Python that has ClusterFuzz's engine library.
fn clusterfuzz_python() -> PathBuf {
    let python = root().join("target/clusterfuzz-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: `cargo make test` sets it up (scripts/clusterfuzz-venv.sh)",
        python.display()
    );
    python
}

/// ClusterFuzz's steps on `target` from `seeds`; `extra`: `drive.py`'s optional argument.
fn drive_with_clusterfuzz(target: &Path, work: &Path, seeds: &Path, extra: &[&str]) -> String {
    let mut command = Command::new(clusterfuzz_python());
    command
        .arg(root().join("tests/clusterfuzz/drive.py"))
        .arg(target)
        .arg(work)
        .arg(seeds)
        .args(extra);
    let out = run_limited(command, Duration::from_secs(600));
    let log = text(&out);
    assert!(out.status.success(), "{}: {log}", target.display());
    log
}

#[test]
fn clusterfuzz_engine_runs_all_five_steps_on_ours_and_on_libfuzzer() {
    let tmp = TempDir::new("clusterfuzz");
    let control = libfuzzer_build(tmp.path());
    for target in [fuzzer("crashme"), control] {
        let work = tmp.path().join("work");
        let log = drive_with_clusterfuzz(&target, &work, &root().join("corpus/crashme"), &[]);
        for step in [
            "prepare",
            "fuzz",
            "reproduce",
            "crash_state",
            "minimize_testcase",
            "minimize_corpus",
        ] {
            assert!(log.contains(&format!("PASS {step}\n")), "{step}: {log}");
        }
    }
}

#[test]
fn clusterfuzz_engine_reports_a_leak_as_a_crash_and_reproduces_it_on_ours_and_on_libfuzzer() {
    let tmp = TempDir::new("clusterfuzz-leak");
    let seeds = tmp.seeds(&[("seed", "xxxx")]);
    let leak = root().join("harnesses/leak/leak.c");
    let builds = [
        (libafl_cc(), "-fsanitize=address", "ours"),
        ("clang-19".into(), "-fsanitize=fuzzer,address", "control"),
    ];
    for (compiler, flag, name) in builds {
        let target = tmp.path().join(name);
        let built = Command::new(compiler)
            .args(["-O1", "-g", flag])
            .arg(&leak)
            .arg("-o")
            .arg(&target)
            .status()
            .unwrap();
        assert!(built.success(), "building {name} failed");
        let log = drive_with_clusterfuzz(&target, &tmp.path().join("work"), &seeds, &["leak"]);
        for step in ["prepare", "fuzz", "reproduce", "crash_state"] {
            assert!(
                log.contains(&format!("PASS {step}\n")),
                "{name}, {step}: {log}"
            );
        }
    }
}

/// ClusterFuzz files one bug per crash state (the top frames of the stack in the reproducing
/// run's output): each crash of crashme gets the same state from ours as from libFuzzer, never
/// an empty one (which would file every crash as one bug).
#[test]
fn clusterfuzz_names_each_crash_as_it_does_on_libfuzzer() {
    let tmp = TempDir::new("clusterfuzz-state");
    let control = libfuzzer_build(tmp.path());
    let seeds = tmp.seeds(&[("abort", "CRASH"), ("null-write", "BOOM!")]);
    let python = clusterfuzz_python();
    for input in ["abort", "null-write"] {
        let state = |binary: &Path| {
            let mut command = Command::new(&python);
            command
                .arg(root().join("tests/clusterfuzz/crash_state.py"))
                .arg(binary)
                .arg(seeds.join(input));
            let out = run_limited(command, Duration::from_secs(120));
            let log = text(&out);
            assert!(out.status.success(), "{}: {log}", binary.display());
            let line = log.lines().find_map(|l| l.strip_prefix("STATE "));
            line.unwrap_or_else(|| panic!("no state: {log}"))
                .to_string()
        };
        let (ours, theirs) = (state(&fuzzer("crashme")), state(&control));
        assert!(ours.contains("crashme.c"), "{input}: {ours}");
        assert_eq!(ours, theirs, "{input}");
    }
}
