//! End-to-end: comparison solving. `harnesses/magic` hides its crash behind 1-, 2-, 4- and
//! 8-byte integer compares and a 13-byte memcmp; from a zero-filled seed and no dictionary,
//! the CmpLog build finds it, the same harness built with `--no-cmplog` does not.

mod common;

use std::time::Duration;

use common::*;

fn campaign(binary: &str, mode: &str, secs: &str, tag: &str) -> (TempDir, Campaign) {
    let tmp = TempDir::new(tag);
    let out = tmp.path().join("out");
    let corpus = corpus("magic");
    // A fixed seed: in fork mode (about 2k execs/s) the crash takes from seconds to a minute
    // depending on the random stream; this one finds it in seconds.
    let args = ["--max-time", secs, "--seed", "1"];
    let campaign = Campaign::fuzz(&fuzzer(binary), mode, &corpus, &out, &args);
    (tmp, campaign)
}

#[test]
fn cmplog_finds_the_magic_crash_in_direct_mode() {
    let (_tmp, mut campaign) = campaign("magic", "direct", "120", "cmplog-direct");
    campaign.wait_for(Duration::from_secs(60), "the magic crash", |s| {
        stat(s, "saved_crashes") >= 1
    });
    let stats = campaign.stats();
    assert!(
        stat(&stats, "cmplog_tokens") >= 1,
        "no token learned: {stats:?}"
    );
    assert!(campaign.stop_with(libc::SIGINT).success());
    let crash = std::fs::read(&inputs(&campaign.out.join("crashes"))[0]).unwrap();
    assert_eq!(&crash[15..28], b"LIBAFL-MAGIC!");
}

#[test]
fn cmplog_finds_the_magic_crash_in_fork_mode() {
    let (_tmp, mut campaign) = campaign("magic", "fork", "120", "cmplog-fork");
    campaign.wait_for(Duration::from_secs(90), "the magic crash", |s| {
        stat(s, "saved_crashes") >= 1
    });
    assert!(campaign.stop_with(libc::SIGINT).success());
}

#[test]
fn without_comparison_instrumentation_the_magic_crash_is_not_found() {
    // A fixed amount of work, many times what the CmpLog build needs to find the crash.
    let tmp = TempDir::new("nocmplog");
    let out = tmp.path().join("out");
    let runs = 1_000_000;
    let mut campaign = Campaign::fuzz(
        &fuzzer("magic-nocmplog"),
        "direct",
        &corpus("magic"),
        &out,
        &["--runs", &runs.to_string()],
    );
    assert!(campaign.wait(Duration::from_secs(300)).success());
    let stats = campaign.stats();
    assert!(stat(&stats, "execs_done") >= runs, "{stats:?}");
    assert_eq!(stat(&stats, "saved_crashes"), 0, "{stats:?}");
    assert_eq!(stat(&stats, "cmplog_tokens"), 0, "{stats:?}");
}

#[test]
fn cmplog_finds_the_magic_crash_in_persistent_mode_on_a_standalone_target() {
    // The standalone runtime logs comparisons in a second, tracing fork server.
    let tmp = TempDir::new("cmplog-persistent");
    let out = tmp.path().join("out");
    let corpus = corpus("magic");
    let target = fuzzer("magic-standalone");
    let args = [
        "--max-time",
        "120",
        "--seed",
        "1",
        "--",
        target.to_str().unwrap(),
    ];
    let mut campaign = Campaign::fuzz(&driver(), "persistent", &corpus, &out, &args);
    campaign.wait_for(Duration::from_secs(60), "the magic crash", |s| {
        stat(s, "saved_crashes") >= 1
    });
    assert!(
        stat(&campaign.stats(), "cmplog_tokens") >= 1,
        "{:?}",
        campaign.stats()
    );
    assert!(campaign.stop_with(libc::SIGINT).success());
}

/// As AFL++'s `-c`: the fuzzed build has no comparison logging (so it alone does not find the
/// crash, see above); the standalone build traces comparisons out of process.
fn a_separate_tracing_build_solves_comparisons(mode: &str) {
    let tmp = TempDir::new(&format!("cmplog-split-{mode}"));
    let out = tmp.path().join("out");
    let tracer = fuzzer("magic-standalone");
    let args = [
        "--max-time",
        "120",
        "--seed",
        "1",
        "--cmplog",
        tracer.to_str().unwrap(),
    ];
    let mut campaign = Campaign::fuzz(
        &fuzzer("magic-nocmplog"),
        mode,
        &corpus("magic"),
        &out,
        &args,
    );
    campaign.wait_for(Duration::from_secs(60), "the magic crash", |s| {
        stat(s, "saved_crashes") >= 1
    });
    assert!(
        stat(&campaign.stats(), "cmplog_tokens") >= 1,
        "{:?}",
        campaign.stats()
    );
    assert!(campaign.stop_with(libc::SIGINT).success());
    let crash = std::fs::read(&inputs(&campaign.out.join("crashes"))[0]).unwrap();
    assert_eq!(&crash[15..28], b"LIBAFL-MAGIC!");
}

#[test]
fn a_separate_tracing_build_solves_comparisons_for_a_build_without_them() {
    a_separate_tracing_build_solves_comparisons("direct");
}

#[test]
fn a_separate_tracing_build_solves_comparisons_in_fork_mode() {
    a_separate_tracing_build_solves_comparisons("fork");
}

#[test]
fn a_tracing_build_that_cannot_trace_is_refused_before_start() {
    let tmp = TempDir::new("cmplog-bad");
    let out = tmp.path().join("out");
    let corpus = corpus("magic");
    let binary = fuzzer("magic-nocmplog");
    for (tracer, why) in [
        ("/nonexistent/tracer", "bad --cmplog: cannot run"),
        // An in-process build does not speak the fork server protocol.
        (binary.to_str().unwrap(), "bad --cmplog"),
    ] {
        assert_one_line_error(
            &binary,
            &fuzz_args(&corpus, &out, &["--cmplog", tracer]),
            why,
        );
    }
    assert!(!out.exists(), "nothing written before the checks pass");
}

/// The IR of `source` compiled by our wrapper (`-O2`): each function's name and basic blocks
/// (the first block holds the `define` line).
fn wrapper_ir_functions(source: &str, tag: &str) -> Vec<(String, Vec<String>)> {
    let tmp = TempDir::new(tag);
    let c = tmp.path().join("cmp.c");
    std::fs::write(&c, source).unwrap();
    let output = std::process::Command::new(libafl_cc())
        .args(["-O2", "-S", "-emit-llvm", "-o", "-"])
        .arg(&c)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let ir = String::from_utf8(output.stdout).unwrap();
    let mut functions: Vec<(String, Vec<String>)> = Vec::new();
    for line in ir.lines() {
        if line.starts_with("define ") {
            let name = line.split('@').nth(1).and_then(|r| r.split('(').next());
            functions.push((name.unwrap_or_default().to_string(), vec![String::new()]));
        }
        let Some((_, blocks)) = functions.last_mut() else {
            continue;
        };
        // A block starts at a label (`12:` or `name:`).
        let label = !line.starts_with(' ')
            && line.split(':').next().is_some_and(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
            });
        if label {
            blocks.push(String::new());
        }
        let block = blocks.last_mut().unwrap();
        block.push_str(line);
        block.push('\n');
    }
    functions
}

fn hook_calls(block: &str) -> usize {
    block.matches("call void @__sanitizer_cov_trace_").count()
        + block.matches("call void @lafuzz_trace_switch(").count()
}

fn flag_loads(block: &str) -> usize {
    block
        .matches("load i8, ptr @lafuzz_comparison_hooks_on")
        .count()
}

/// `one` makes one comparison; `many` makes a loop's, two constants' and a switch's.
const COMPARISONS: &str = "int one(int x) { return x == 0x41424344 ? 3 : 5; }\n\
     int many(const int *a, int n) {\n\
       int s = 0;\n\
       for (int i = 0; i < n; i++) {\n\
         if (a[i] == 0x41424344) s++;\n\
         if (a[i] > 1000) s += 5;\n\
         switch (a[i]) { case 1: s += 2; break; case 7: s += 3; break; case 9: s--; }\n\
       }\n\
       return s;\n\
     }\n";

#[test]
fn a_function_with_few_comparisons_calls_each_hook_behind_a_flag_test() {
    let functions = wrapper_ir_functions(COMPARISONS, "cmp-guard");
    let (_, blocks) = functions.iter().find(|(name, _)| name == "one").unwrap();
    let calls: usize = blocks.iter().map(|b| hook_calls(b)).sum();
    let loads: usize = blocks.iter().map(|b| flag_loads(b)).sum();
    assert_eq!(calls, 1, "one comparison, one hook:\n{}", blocks.concat());
    assert_eq!(loads, 1, "one flag test:\n{}", blocks.concat());
    for block in blocks.iter().filter(|b| hook_calls(b) > 0) {
        assert_eq!(
            flag_loads(block),
            0,
            "a hook called in the block that tests the flag (not behind the branch):\n{block}"
        );
    }
}

#[test]
fn a_function_with_many_comparisons_jumps_to_a_copy_with_hooks_only_while_tracing() {
    let functions = wrapper_ir_functions(COMPARISONS, "cmp-split");
    let body = |name: &str| {
        let (_, blocks) = functions
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no function {name} in:\n{functions:#?}"));
        blocks
    };
    let quiet = body("many");
    let traced = body("many.lafuzz_traced");
    // The original: one flag test on entry, a jump to the copy behind it, and no hook.
    let entry = &quiet[0];
    assert_eq!(flag_loads(entry), 1, "the entry tests the flag:\n{entry}");
    assert_eq!(
        quiet.iter().map(|b| flag_loads(b)).sum::<usize>(),
        1,
        "{}",
        quiet.concat()
    );
    assert_eq!(
        quiet.iter().map(|b| hook_calls(b)).sum::<usize>(),
        0,
        "outside tracing runs no hook is called:\n{}",
        quiet.concat()
    );
    assert!(
        quiet
            .iter()
            .any(|b| b.contains("musttail call") && b.contains("@many.lafuzz_traced(")),
        "while tracing the original jumps to the copy:\n{}",
        quiet.concat()
    );
    // In the copy (entered only while tracing) every hook is called, with no further test.
    assert!(
        traced.iter().map(|b| hook_calls(b)).sum::<usize>() >= 4,
        "{}",
        traced.concat()
    );
    assert_eq!(traced.iter().map(|b| flag_loads(b)).sum::<usize>(), 0);
    // The switch calls the runtimes' hook, which stops logging a switch in a loop once it has
    // logged enough, not SanitizerCoverage's.
    let traced = traced.concat();
    assert!(
        traced.contains("call void @lafuzz_trace_switch(")
            && !traced.contains("@__sanitizer_cov_trace_switch("),
        "{traced}"
    );
}
