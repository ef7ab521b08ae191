//! End-to-end: faults end a campaign with a message and a non-zero exit, never silently; what a
//! campaign learned survives it; odd seeds and a busy port are handled.

mod common;

use std::{fs, process::Command, time::Duration};

use common::*;

#[test]
fn a_killed_broker_stops_every_client_with_an_error() {
    let tmp = TempDir::new("killed-broker");
    let out = tmp.path().join("out");
    let args = ["--cores", "all", "--max-time", "120"];
    let mut campaign = Campaign::fuzz(
        &fuzzer("crashme"),
        "direct",
        &corpus("crashme"),
        &out,
        &args,
    );
    campaign.wait_for(Duration::from_secs(60), "fuzzing", |s| {
        stat(s, "execs_done") > 1000
    });
    let broker = campaign_broker(campaign.pid());
    // SAFETY: kill(2) on a pid of the campaign this test started.
    unsafe {
        libc::kill(broker, libc::SIGKILL);
    }
    let status = campaign.wait(Duration::from_secs(30));
    assert_eq!(status.code(), Some(1), "{}", campaign.log());
    let log = campaign.log();
    assert!(
        log.contains("error: the campaign's broker was killed by signal 9"),
        "{log}"
    );
    assert!(group_members(broker).is_empty(), "left running");
}

#[test]
fn killing_the_fuzzer_itself_takes_the_whole_campaign_with_it() {
    // `kill -9` of the command the user started: nothing can stop the campaign in order, and
    // nothing of it may go on running (the per-core restarters once did, restarting clients
    // forever; a client that finds nothing to report never notices its broker is gone).
    let tmp = TempDir::new("killed-fuzzer");
    let out = tmp.path().join("out");
    let args = ["--max-time", "120"];
    let mut campaign = Campaign::fuzz(&fuzzer("libpng"), "direct", &corpus("libpng"), &out, &args);
    campaign.wait_for(Duration::from_secs(60), "fuzzing", |s| {
        stat(s, "execs_done") > 1000
    });
    let group = campaign_broker(campaign.pid());
    // SAFETY: kill(2) on the campaign this test started.
    unsafe {
        libc::kill(campaign.pid(), libc::SIGKILL);
    }
    campaign.wait(Duration::from_secs(10));
    let start = std::time::Instant::now();
    while !group_members(group).is_empty() {
        if start.elapsed() > Duration::from_secs(10) {
            let left = group_members(group);
            // Out of the test's reach otherwise: their parent is gone.
            // SAFETY: kill(2) on the process group of the campaign this test started.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            panic!("left running: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_full_output_disk_is_a_one_line_error_and_leaves_no_partial_input() {
    let tmp = TempDir::new("full-disk");
    let out = tmp.path().join("out");
    fs::create_dir_all(&out).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED: cannot mount a small tmpfs here (needs root)");
        return;
    }
    struct Unmount<'a>(&'a std::path::Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&out);
    // libpng's queue outgrows 256 KiB within seconds.
    let mut campaign = Campaign::fuzz(
        &fuzzer("libpng"),
        "direct",
        &corpus("libpng"),
        &out,
        &["--max-time", "120"],
    );
    let status = campaign.wait(Duration::from_secs(120));
    let log = campaign.log();
    assert_eq!(status.code(), Some(1), "{log}");
    let error = log
        .lines()
        .find(|l| l.starts_with("lafuzz: error:"))
        .unwrap_or_default();
    assert!(error.contains("No space left on device"), "{log}");
    // Findings are named by their content's hash: a partial one would not match its name.
    for dir in ["crashes", "hangs"] {
        for file in inputs(&out.join(dir)) {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                name,
                lafuzz::platform::output::input_name(&fs::read(&file).unwrap()),
                "{}",
                file.display()
            );
        }
    }
    for file in inputs(&out.join("queue")) {
        assert!(!fs::read(&file).unwrap().is_empty(), "{}", file.display());
    }
}

#[test]
fn learned_tokens_survive_into_a_resumed_campaign() {
    let tmp = TempDir::new("resume-tokens");
    let out = tmp.path().join("out");
    let magic = fuzzer("magic");
    let mut first = Campaign::fuzz(
        &magic,
        "direct",
        &corpus("magic"),
        &out,
        &["--max-time", "60"],
    );
    first.wait_for(Duration::from_secs(60), "tokens learned", |s| {
        stat(s, "cmplog_tokens") >= 1
    });
    // The state is saved every few seconds: wait for a save made after the tokens were learned.
    let learned_at = std::time::SystemTime::now();
    let state_file = out.join("queue/.lafuzz-state");
    first.wait_for(Duration::from_secs(30), "the learned tokens saved", |_| {
        fs::metadata(&state_file)
            .and_then(|m| m.modified())
            .is_ok_and(|saved| saved > learned_at)
    });
    // Stopped the hard way: the state file is all that is left of what it learned.
    for group in children(first.pid()) {
        // SAFETY: kill(2) on a process group of the campaign this test started.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    // SAFETY: kill(2) on the fuzzer process this test started.
    unsafe {
        libc::kill(first.pid(), libc::SIGKILL);
    }
    first.wait(Duration::from_secs(10));
    let learned = 1;
    let mut second = Campaign::fuzz(&magic, "direct", &corpus("magic"), &out, &["--runs", "1"]);
    second.finish(Duration::from_secs(60));
    assert!(
        stat(&second.stats(), "cmplog_tokens") >= learned,
        "{:?}\n{}",
        second.stats(),
        second.log()
    );

    // A damaged state file is reported and set aside, never fatal.
    fs::write(out.join("queue/.lafuzz-state"), b"garbage").unwrap();
    let mut third = Campaign::fuzz(&magic, "direct", &corpus("magic"), &out, &["--runs", "1"]);
    third.finish(Duration::from_secs(60));
    assert!(
        third.log().contains("warning: ignoring the saved state"),
        "{}",
        third.log()
    );
}

#[test]
fn long_seeds_are_truncated_with_a_warning_and_a_busy_port_is_an_error() {
    let tmp = TempDir::new("long-seed");
    let seeds = tmp.seeds(&[("long", vec![b'x'; 3 << 20])]);
    let out = tmp.path().join("out");
    let mut campaign = Campaign::fuzz(
        &fuzzer("crashme"),
        "direct",
        &seeds,
        &out,
        &["--runs", "1000"],
    );
    campaign.finish(Duration::from_secs(60));
    assert!(
        campaign.log().contains("using its first 1048576 bytes"),
        "{}",
        campaign.log()
    );
    assert!(inputs(&out.join("queue"))
        .iter()
        .all(|f| fs::metadata(f).unwrap().len() <= 1 << 20));

    let busy = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let crashme = fuzzer("crashme");
    let corpus = corpus("crashme");
    let args = fuzz_args(&corpus, &out, &["--broker-port", &port]);
    assert_one_line_error(&crashme, &args, "cannot listen there");
}

#[test]
fn a_client_that_cannot_stay_up_stops_the_campaign_with_an_error() {
    let tmp = TempDir::new("startup-deaths");
    let out = tmp.path().join("out");
    let corpus = corpus("crashme");
    // No client fits in 1 MiB: each is stopped right after it starts, with nothing to save.
    let args = fuzz_args(&corpus, &out, &["--rss-limit-mb", "1", "--max-time", "120"]);
    assert_one_line_error(
        &fuzzer("crashme"),
        &args,
        "times in a row right after starting",
    );
}
