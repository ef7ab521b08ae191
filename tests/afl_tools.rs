//! AFL++'s own tools on our output: `afl-whatsup` reads a running campaign from the directory
//! above `-o`, `afl-plot` draws its `plot_data`; a resumed campaign's run time, executions and
//! `plot_data` go on from where it stopped.

mod common;

use std::{fs, path::Path, process::Command, time::Duration};

use common::*;

/// `plot_data`'s first column (seconds since the campaign's start), line by line.
fn plot_times(out: &Path) -> Vec<u64> {
    fs::read_to_string(out.join("plot_data"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(", ").next().unwrap().parse().unwrap())
        .collect()
}

/// `afl-whatsup -s SYNC` counts the running campaign and its crashes.
fn afl_whatsup_sees(sync: &Path) {
    let mut command = Command::new("afl-whatsup");
    command.args(["-s", sync.to_str().unwrap()]);
    let whatsup = run_limited(command, Duration::from_secs(30));
    let summary = text(&whatsup);
    assert!(whatsup.status.success(), "{summary}");
    assert!(summary.contains("Fuzzers alive : 1"), "{summary}");
    // The campaign's crashes (at least the one waited for; it may save more meanwhile).
    let crashes: u64 = summary
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Crashes saved : ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no crash count: {summary}"));
    assert!(crashes >= 1, "{summary}");
}

/// `afl-plot OUT GRAPHS` draws its four graphs.
fn afl_plot_draws(out: &Path, graphs: &Path) {
    let plot = Command::new("afl-plot")
        .arg(out)
        .arg(graphs)
        .output()
        .unwrap();
    assert!(plot.status.success(), "{}", text(&plot));
    for png in [
        "high_freq.png",
        "low_freq.png",
        "exec_speed.png",
        "edges.png",
    ] {
        assert!(fs::metadata(graphs.join(png)).unwrap().len() > 0, "{png}");
    }
}

#[test]
#[cfg_attr(
    not(aflpp),
    ignore = "afl-whatsup and afl-plot not found: the Debian package afl++ is not installed"
)]
fn afl_whatsup_and_afl_plot_read_a_campaign_that_resumes_where_it_stopped() {
    let tmp = TempDir::new("afl-tools");
    let sync = tmp.path().join("sync");
    let out = sync.join("main");
    fs::create_dir_all(&sync).unwrap();
    let crashme = fuzzer("crashme");
    let args = ["--max-time", "120"];
    let mut campaign = Campaign::fuzz(&crashme, "direct", &corpus("crashme"), &out, &args);
    campaign.wait_for(Duration::from_secs(60), "a crash and 11 s", |s| {
        stat(s, "saved_crashes") >= 1 && stat(s, "run_time") >= 11
    });
    afl_whatsup_sees(&sync);
    assert!(
        campaign.stop_with(libc::SIGINT).success(),
        "{}",
        campaign.log()
    );
    let first = campaign.stats();
    for key in [
        "last_find",
        "last_crash",
        "cycles_done",
        "peak_rss_mb",
        "stability",
    ] {
        assert!(first.contains_key(key), "no {key}: {first:?}");
    }
    assert!(
        stat(&first, "last_crash") >= stat(&first, "start_time"),
        "{first:?}"
    );
    assert!(stat(&first, "peak_rss_mb") > 0, "{first:?}");

    afl_plot_draws(&out, &tmp.path().join("graphs"));

    // Resumed: the numbers go on.
    let before = plot_times(&out);
    let mut again = Campaign::fuzz(
        &crashme,
        "direct",
        &corpus("crashme"),
        &out,
        &["--max-time", "7"],
    );
    let resumed = again.finish(Duration::from_secs(60));
    assert!(
        stat(&resumed, "run_time") > stat(&first, "run_time"),
        "{first:?} {resumed:?}"
    );
    assert!(
        stat(&resumed, "execs_done") > stat(&first, "execs_done"),
        "{first:?} {resumed:?}"
    );
    let after = plot_times(&out);
    assert!(after.len() > before.len(), "{before:?} {after:?}");
    assert!(
        after.windows(2).all(|w| w[0] <= w[1]),
        "not in order: {after:?}"
    );
    let header_lines = fs::read_to_string(out.join("plot_data"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('#'))
        .count();
    assert_eq!(header_lines, 1);
}
