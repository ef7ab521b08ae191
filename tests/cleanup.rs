//! End-to-end: stopping a campaign leaves no process and no shared memory behind.
//! One test in its own binary, so no other campaign runs while segments are counted.

mod common;

use std::time::Duration;

use common::*;

fn check_stop(mode: &str, signal: Option<i32>, cores: &str) {
    let before = shm_ids();
    let tmp = TempDir::new("cleanup");
    let out = tmp.path().join("out");
    let corpus = corpus("libpng");
    let mut args = vec!["--cores", cores];
    if signal.is_none() {
        args.extend(["--max-time", "6"]);
    }
    let standalone = fuzzer("libpng-standalone");
    let binary = if mode == "forkserver" || mode == "persistent" {
        args.extend(["--", standalone.to_str().unwrap()]);
        driver()
    } else {
        fuzzer("libpng")
    };
    let mut campaign = Campaign::fuzz(&binary, mode, &corpus, &out, &args);
    campaign.wait_for(Duration::from_secs(60), "executions", |s| {
        stat(s, "execs_done") > 1000
    });
    let status = match signal {
        Some(sig) => campaign.stop_with(sig),
        None => campaign.wait(Duration::from_secs(60)),
    };
    assert!(status.success(), "{status}\n{}", campaign.log());
    let members = group_members(campaign.pid());
    assert!(members.is_empty(), "processes left behind: {members:?}");
    let leaked: Vec<_> = shm_ids()
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert!(
        leaked.is_empty(),
        "shared memory left behind: {leaked:?}\n{}",
        campaign.log()
    );
}

#[test]
fn stopping_leaves_no_process_or_shared_memory() {
    check_stop("direct", None, "0");
    check_stop("direct", Some(libc::SIGINT), "0-1");
    check_stop("direct", Some(libc::SIGTERM), "0-1");
    check_stop("fork", Some(libc::SIGTERM), "0-1");
    check_stop("reset", Some(libc::SIGINT), "0");
    check_stop("forkserver", Some(libc::SIGTERM), "0-1");
    check_stop("persistent", Some(libc::SIGINT), "0-1");
}
