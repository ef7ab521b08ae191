//! What a binary does with a command line a user may get wrong: none at all prints the usage;
//! AFL++'s habit (`-i in -o out`, no subcommand) is an error that names `fuzz` and writes
//! nothing; our warnings reach the terminal.

mod common;

use std::{fs, process::Command};

use common::*;

#[test]
fn no_arguments_print_the_usage() {
    let out = run(&fuzzer("crashme"), &[]);
    assert_eq!(out.status.code(), Some(2));
    let usage = text(&out);
    for needle in ["Usage:", "fuzz", "replay", "minimize-corpus"] {
        assert!(usage.contains(needle), "no '{needle}': {usage}");
    }
}

#[test]
fn an_afl_style_command_line_is_an_error_that_writes_nothing() {
    let tmp = TempDir::new("afl-style");
    let seeds = tmp.seeds(&[("seed", "CRAS")]);
    let out = tmp.path().join("out");
    fs::create_dir_all(&out).unwrap();
    let mut command = Command::new(fuzzer("crashme"));
    command.current_dir(tmp.path()).args([
        "-i",
        seeds.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let ran = run_limited(command, std::time::Duration::from_secs(30));
    assert_eq!(ran.status.code(), Some(2), "{}", text(&ran));
    let error = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(error.trim().lines().count(), 1, "{error}");
    assert!(
        error.contains("AFL++-style") && error.contains(" fuzz -i "),
        "{error}"
    );
    // Nothing written: not into the seeds, the output or the current directory.
    assert_eq!(inputs(&seeds).len(), 1);
    assert!(inputs(&out).is_empty());
    let here: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(here.len(), 2, "{here:?}");
}

#[test]
fn our_warnings_are_printed() {
    // Two instrumented modules, so two counter regions: the campaign observes the larger and
    // says so.
    let tmp = TempDir::new("warnings");
    let dir = tmp.path();
    fs::write(
        dir.join("helper.c"),
        "int helper(int x) { if (x > 5) return 1; return 0; }\n",
    )
    .unwrap();
    fs::write(
        dir.join("harness.c"),
        "#include <stddef.h>\n#include <stdint.h>\nint helper(int);\n\
         int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return n ? helper(d[0]) * 0 : 0; }\n",
    )
    .unwrap();
    let cc = libafl_cc();
    let built = Command::new(&cc)
        .current_dir(dir)
        .args(["-shared", "-fPIC", "helper.c", "-o", "libhelper.so"])
        .status()
        .unwrap();
    assert!(built.success());
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let built = Command::new(&cc)
        .current_dir(dir)
        .args(["harness.c", "-L.", "-lhelper", &rpath, "-o", "two-modules"])
        .status()
        .unwrap();
    assert!(built.success());
    let seeds = tmp.seeds(&[("seed", "x")]);
    let out = dir.join("out");
    let ran = run(
        &dir.join("two-modules"),
        &fuzz_args(&seeds, &out, &["--runs", "1000"]),
    );
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(
        text(&ran).contains("lafuzz: warning: 2 counter regions; observing the largest"),
        "{}",
        text(&ran)
    );
}
