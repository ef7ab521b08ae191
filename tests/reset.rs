//! End-to-end: state leaking between in-process inputs. `reset` mode with the harness's reset
//! hook never sees the sequence-dependent crash; without a hook the crash is reported as flaky,
//! with the inputs that led to it.

mod common;

use std::time::Duration;

use common::*;

#[test]
fn reset_hook_keeps_the_sequence_crash_from_happening() {
    let tmp = TempDir::new("reset-hook");
    let out = tmp.path().join("out");
    let corpus = corpus("stateful");
    // Restarting often also shows the client carries on across restarts.
    let args = ["--restart-every", "2000", "--runs", "30000"];
    let mut campaign = Campaign::fuzz(&fuzzer("stateful"), "reset", &corpus, &out, &args);
    let stats = campaign.finish(Duration::from_secs(60));
    assert!(stat(&stats, "execs_done") >= 30_000, "{stats:?}");
    // The fuzzer did reach the arming input, and still no crash of any kind.
    let queue = inputs(&out.join("queue"));
    assert!(
        queue
            .iter()
            .any(|q| std::fs::read(q).unwrap().starts_with(b"A")),
        "arming input never found"
    );
    assert!(inputs(&out.join("crashes")).is_empty(), "{stats:?}");
    assert!(inputs(&out.join("crashes-flaky")).is_empty(), "{stats:?}");
}

#[test]
fn without_reset_hook_the_crash_is_flaky_and_its_sequence_reproduces_it() {
    let tmp = TempDir::new("reset-flaky");
    let out = tmp.path().join("out");
    let corpus = corpus("stateful");
    let bin = fuzzer("stateful-noreset");
    let mut campaign = Campaign::fuzz(&bin, "direct", &corpus, &out, &["--max-time", "120"]);
    campaign.wait_for(Duration::from_secs(90), "a flaky crash", |s| {
        stat(s, "saved_flaky_crashes") >= 1
    });
    assert!(campaign.stop_with(libc::SIGINT).success());
    assert!(
        campaign.log().contains("replay --sequence"),
        "{}",
        campaign.log()
    );

    // Never reported as reproducible from one input.
    assert!(inputs(&out.join("crashes")).is_empty());
    let sequence = inputs(&out.join("crashes-flaky"))[0].clone();
    let steps = inputs(&sequence);
    assert!(steps.len() >= 2, "{steps:?}");
    let last = steps.last().unwrap();
    assert!(std::fs::read(last).unwrap().starts_with(b"B"));
    assert!(steps
        .iter()
        .any(|s| std::fs::read(s).unwrap().starts_with(b"A")));

    let alone = run(&bin, &["replay", last.to_str().unwrap()]);
    assert_eq!(
        alone.status.code(),
        Some(0),
        "the last input alone must not crash"
    );
    let replayed = run(&bin, &["replay", "--sequence", sequence.to_str().unwrap()]);
    assert_eq!(
        replayed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&replayed.stdout)
    );
    assert!(String::from_utf8_lossy(&replayed.stdout).contains("CRASH"));
}
