//! `cargo make install PREFIX=DIR` (its script, `scripts/install.sh`): the wrappers and the
//! fuzzer in `DIR/bin` build working fuzzers from any directory, the install can be moved
//! whole, and a wrapper missing a part says which and fails.

mod common;

use std::{
    fs,
    path::Path,
    process::{Command, Output},
};

use common::*;

/// Builds crashme with the installed `libafl_cc` (`flags` first), from `dir`.
fn build_crashme(prefix: &Path, dir: &Path, flags: &[&str], name: &str) -> Output {
    Command::new(prefix.join("bin/libafl_cc"))
        .current_dir(dir)
        .args(flags)
        .arg(root().join("harnesses/crashme/crashme.c"))
        .args(["-o", name])
        .output()
        .unwrap()
}

#[test]
fn an_install_builds_fuzzers_from_anywhere_and_can_move() {
    let tmp = TempDir::new("install");
    let prefix = tmp.path().join("prefix");
    let arg = format!("PREFIX={}", prefix.display());
    let installed = run(
        Path::new("bash"),
        &[root().join("scripts/install.sh").to_str().unwrap(), &arg],
    );
    assert!(installed.status.success(), "{}", text(&installed));
    for tool in [
        "bin/libafl_cc",
        "bin/libafl_cxx",
        "bin/fuzzer",
        "lib/lafuzz/liblafuzz.a",
    ] {
        assert!(prefix.join(tool).exists(), "no {tool}");
    }
    // Moved, and used from another directory.
    let moved = tmp.path().join("moved");
    fs::rename(&prefix, &moved).unwrap();
    let work = tmp.path().join("work");
    fs::create_dir_all(&work).unwrap();
    for (flags, name) in [(&[][..], "crashme"), (&["--standalone"][..], "crashme-sa")] {
        let built = build_crashme(&moved, &work, flags, name);
        assert!(built.status.success(), "{name}: {}", text(&built));
    }
    let seeds = tmp.seeds(&[("seed", "xxxx")]);
    let out = tmp.path().join("out");
    let ran = run(
        &work.join("crashme"),
        &fuzz_args(&seeds, &out, &["--runs", "20000"]),
    );
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(stat(&stats(&out), "edges_found") > 3, "{:?}", stats(&out));
    let out = tmp.path().join("out-forkserver");
    let standalone = work.join("crashme-sa");
    let args = fuzz_args(
        &seeds,
        &out,
        &["--mode", "forkserver", "--runs", "3000", "--"],
    );
    let ran = run(
        &moved.join("bin/fuzzer"),
        &[&args[..], &[standalone.to_str().unwrap()]].concat(),
    );
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(stat(&stats(&out), "edges_found") > 3, "{:?}", stats(&out));
    // A part gone: the wrapper names it and fails, rather than build without it.
    fs::remove_file(moved.join("lib/lafuzz/lafuzz-cmp-guard.so")).unwrap();
    let built = build_crashme(&moved, &work, &[], "without-pass");
    assert_eq!(built.status.code(), Some(1), "{}", text(&built));
    assert!(
        text(&built).contains("lafuzz-cmp-guard.so not found"),
        "{}",
        text(&built)
    );
    assert!(!work.join("without-pass").exists());
    // A coverage build needs no pass (clang brings the profile runtime): the install makes it.
    let built = build_crashme(&moved, &work, &["--coverage"], "crashme-cov");
    assert!(built.status.success(), "{}", text(&built));
    let ran = run(
        &work.join("crashme-cov"),
        &["coverage", "-i", seeds.to_str().unwrap(), "--text"],
    );
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(text(&ran).contains("crashme.c"), "{}", text(&ran));
}
