//! End-to-end: `fork` mode, a fresh child per input with coverage shared with the parent.

mod common;

use std::time::Duration;

use common::*;

#[test]
fn fork_mode_finds_crashes_and_hang_and_sees_crashing_childrens_coverage() {
    let tmp = TempDir::new("fork-crashme");
    // Seeds one byte away from each bug keep the test short at fork-per-input speed.
    let seeds = tmp.seeds(&[("CRAX", "CRAX"), ("BOOX", "BOOX"), ("HANX", "HANX")]);
    let out = tmp.path().join("out");
    let bin = fuzzer("crashme");
    let args = ["-t", "200", "--max-time", "150"];
    let mut campaign = Campaign::fuzz(&bin, "fork", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(120), "two crashes and a hang", |s| {
        stat(s, "saved_crashes") >= 2 && stat(s, "saved_hangs") >= 1
    });
    let stats = campaign.stats();
    assert!(stat(&stats, "edges_found") > 0, "{stats:?}");
    // The campaign runs with every symbol bound at load, so children do not resolve them.
    let environ = std::fs::read(format!("/proc/{}/environ", campaign.pid())).unwrap();
    assert!(environ.split(|b| *b == 0).any(|v| v == b"LD_BIND_NOW=1"));
    assert!(campaign.stop_with(libc::SIGTERM).success());

    // Both crashes are saved only if the parent saw the crashing children's coverage:
    // without it both would look alike (no counters) and the second would be dropped as a
    // duplicate of the first.
    let crashes = inputs(&out.join("crashes"));
    let starts: Vec<Vec<u8>> = crashes
        .iter()
        .map(|c| std::fs::read(c).unwrap()[..4].to_vec())
        .collect();
    assert!(starts.contains(&b"CRAS".to_vec()), "{starts:?}");
    assert!(starts.contains(&b"BOOM".to_vec()), "{starts:?}");
    for crash in &crashes {
        let replay = run(&bin, &["replay", crash.to_str().unwrap()]);
        assert_eq!(replay.status.code(), Some(1));
    }
    // Fork mode isolates every input: nothing is ever flaky.
    assert!(inputs(&out.join("crashes-flaky")).is_empty());
    assert!(std::fs::read(&inputs(&out.join("hangs"))[0])
        .unwrap()
        .starts_with(b"HANG"));
}
