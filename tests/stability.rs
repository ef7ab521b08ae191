//! Stability, as AFL++ measures it: calibration runs each new entry several times; edges whose
//! counts change between runs of the same input are unstable. They show in `fuzzer_stats`'
//! `stability` (the share of edges found that are stable) and never make an input
//! interesting: a target whose only input-independent edges are unstable keeps a corpus of
//! what the input decides.

mod common;

use std::{thread::sleep, time::Duration};

use common::*;

#[test]
fn unstable_edges_show_in_stability_and_add_nothing_to_the_corpus() {
    let tmp = TempDir::new("stability");
    let target = tmp.path().join("unstable");
    compile(
        &libafl_cc(),
        &["-O1", "-g"],
        "unstable/unstable.c",
        &target,
        &[],
    );
    let seeds = tmp.seeds(&[("a", "A")]);
    let out = tmp.path().join("out");
    let mut campaign = Campaign::fuzz(&target, "direct", &seeds, &out, &["--max-time", "60"]);
    campaign.wait_for(Duration::from_secs(30), "the stable branch", |s| {
        input_starting_with(&out.join("queue"), b"X").is_some() && s.contains_key("stability")
    });
    // Millions of runs more, each with the unstable edges in another state.
    let execs = stat(&campaign.stats(), "execs_done");
    campaign.wait_for(Duration::from_secs(30), "a million more runs", |s| {
        stat(s, "execs_done") > execs + 1_000_000
    });
    sleep(Duration::from_secs(1));
    assert!(
        campaign.stop_with(libc::SIGINT).success(),
        "{}",
        campaign.log()
    );
    let stats = campaign.stats();
    assert_eq!(stat(&stats, "corpus_count"), 2, "the seed and X: {stats:?}");
    let stability: f64 = stats["stability"].trim_end_matches('%').parse().unwrap();
    assert!(stability > 0.0 && stability < 100.0, "{stats:?}");
}

#[test]
fn a_stable_target_is_fully_stable() {
    let tmp = TempDir::new("stability-stable");
    let seeds = tmp.seeds(&[("a", "CRAX")]);
    let out = tmp.path().join("out");
    let args = ["--max-time", "3"];
    let mut campaign = Campaign::fuzz(&fuzzer("crashme"), "direct", &seeds, &out, &args);
    let stats = campaign.finish(Duration::from_secs(30));
    assert_eq!(
        stats.get("stability").map(String::as_str),
        Some("100.00%"),
        "{stats:?}"
    );
}
