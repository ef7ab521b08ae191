//! End-to-end: `direct` mode on the real binaries built by `cargo make build`.

mod common;

use std::time::Duration;

use common::*;

#[test]
fn crashme_crash_and_hang_are_found_saved_and_replayed() {
    let tmp = TempDir::new("direct-crashme");
    let out = tmp.path().join("out");
    let bin = fuzzer("crashme");
    let corpus = corpus("crashme");
    let args = ["-t", "200", "--max-time", "120"];
    let mut campaign = Campaign::fuzz(&bin, "direct", &corpus, &out, &args);
    campaign.wait_for(Duration::from_secs(90), "crash and hang", |s| {
        stat(s, "saved_crashes") >= 1 && stat(s, "saved_hangs") >= 1
    });
    // The client restarts after each crash and hang and the campaign goes on.
    let execs_at_find = stat(&campaign.stats(), "execs_done");
    campaign.wait_for(Duration::from_secs(30), "executions after the crash", |s| {
        stat(s, "execs_done") > execs_at_find + 10_000
    });
    let stats = campaign.stats();
    assert!(stat(&stats, "edges_found") > 0, "{stats:?}");
    assert!(stat(&stats, "total_edges") >= stat(&stats, "edges_found"));
    assert!(campaign.stop_with(libc::SIGINT).success());
    assert!(
        campaign.log().contains("reproduce with:"),
        "{}",
        campaign.log()
    );
    // The seeds are text: the crash was found with generalization and Grimoire in the stages.
    assert!(
        campaign
            .log()
            .contains("seed file(s) of text (Grimoire on)"),
        "{}",
        campaign.log()
    );

    let crashes = inputs(&out.join("crashes"));
    let hangs = inputs(&out.join("hangs"));
    assert!(!crashes.is_empty() && !hangs.is_empty());
    for crash in &crashes {
        let bytes = std::fs::read(crash).unwrap();
        assert!(
            bytes.starts_with(b"CRAS") || bytes.starts_with(b"BOOM"),
            "{bytes:?}"
        );
        let replay = run(&bin, &["replay", crash.to_str().unwrap()]);
        assert_eq!(replay.status.code(), Some(1), "replay of a crash must fail");
        assert!(String::from_utf8_lossy(&replay.stdout).contains("CRASH (signal"));
    }
    // In-process crashes are re-run alone before being reported: these reproduce.
    assert!(inputs(&out.join("crashes-flaky")).is_empty());
    let replay = run(&bin, &["replay", "-t", "300", hangs[0].to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&replay.stdout).contains("TIMEOUT"));
    let queue = inputs(&out.join("queue"));
    assert!(!queue.is_empty());
    let replay = run(&bin, &["replay", queue[0].to_str().unwrap()]);
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    // Crash dedup: one saved crash per new crash coverage, not one per crashing execution.
    assert!(crashes.len() <= 3, "crashes not deduplicated: {crashes:?}");
}

/// Favoured entries never fuzzed are taken at every other pick, and a hang (or crash) ends an
/// in-process client in the middle of an entry's fuzzing: the client that takes over must not
/// start that entry over as one never fuzzed, or a seed one byte from a hang holds the
/// campaign on that hang.
#[test]
fn a_seed_whose_fuzzing_hangs_does_not_hold_the_campaign() {
    let tmp = TempDir::new("direct-pending-hang");
    // Seeds load in name order: the one next to the hang is the oldest entry, the first taken.
    let seeds = tmp.seeds(&[("a-hang", "HANx"), ("b-crash", "CRAx")]);
    let out = tmp.path().join("out");
    let args = ["-t", "200", "--max-time", "60"];
    let mut campaign = Campaign::fuzz(&fuzzer("crashme"), "direct", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(40), "crash after the hang", |s| {
        stat(s, "saved_hangs") >= 1 && stat(s, "saved_crashes") >= 1
    });
    assert!(campaign.stop_with(libc::SIGINT).success());
}

#[test]
fn libpng_coverage_grows_well_beyond_the_seeds() {
    let bin = fuzzer("libpng");
    let corpus = corpus("libpng");
    let dict = root().join("dictionaries/png.dict");
    let tmp = TempDir::new("direct-libpng");
    // Seeds alone (plus one round of mutations), then a short real campaign.
    let seeds_out = tmp.path().join("seeds");
    let mut seeds = Campaign::fuzz(&bin, "direct", &corpus, &seeds_out, &["--runs", "1"]);
    seeds.finish(Duration::from_secs(60));
    let seed_edges = stat(&seeds.stats(), "edges_found");
    assert!(
        seed_edges > 100,
        "seed coverage not read: {:?}",
        seeds.stats()
    );

    let out = tmp.path().join("out");
    let args = ["-x", dict.to_str().unwrap(), "--max-time", "20"];
    let mut campaign = Campaign::fuzz(&bin, "direct", &corpus, &out, &args);
    let stats = campaign.finish(Duration::from_secs(60));
    let edges = stat(&stats, "edges_found");
    assert!(
        edges * 10 >= seed_edges * 14,
        "edges after 20 s: {edges}, seeds: {seed_edges}; {stats:?}"
    );
    assert!(stat(&stats, "corpus_count") > 105);
    assert!(
        !campaign.log().contains("of text"),
        "PNG seeds taken for text: {}",
        campaign.log()
    );
    assert!(stat(&stats, "total_edges") > 1000);
    let plot = std::fs::read_to_string(out.join("plot_data")).unwrap();
    assert!(plot.lines().count() >= 3, "plot_data: {plot}");
}

#[test]
fn second_campaign_resumes_from_the_queue() {
    let bin = fuzzer("crashme");
    let tmp = TempDir::new("direct-resume");
    let out = tmp.path().join("out");
    let corpus = corpus("crashme");
    let args = ["-t", "200", "--max-time", "5"];
    let mut first = Campaign::fuzz(&bin, "direct", &corpus, &out, &args);
    assert!(first.wait(Duration::from_secs(60)).success());
    let queued = inputs(&out.join("queue")).len();
    assert!(queued > 2, "first campaign queued {queued}");
    let mut second = Campaign::fuzz(&bin, "direct", &corpus, &out, &args);
    assert!(second.wait(Duration::from_secs(60)).success());
    assert!(
        second
            .log()
            .contains(&format!("{} seed file(s)", queued + 2)),
        "second campaign did not load the queue: {}",
        second.log()
    );
}

/// The CPUs a process may run on, as /proc shows them (`0-1`).
fn cpus_allowed(pid: i32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// The client's CPUs in a campaign on libpng started with `extra`.
fn client_cpus(tag: &str, extra: &[&str]) -> String {
    let tmp = TempDir::new(tag);
    let out = tmp.path().join("out");
    let mut args = vec!["--max-time", "60"];
    args.extend_from_slice(extra);
    let mut campaign = Campaign::fuzz(&fuzzer("libpng"), "direct", &corpus("libpng"), &out, &args);
    campaign.wait_for(Duration::from_secs(60), "executions", |s| {
        stat(s, "execs_done") > 1000
    });
    let clients = campaign_clients(campaign.pid());
    let cpus: Vec<String> = clients.iter().map(|&pid| cpus_allowed(pid)).collect();
    campaign.stop_with(libc::SIGINT);
    assert_eq!(clients.len(), 1, "one client expected: {clients:?}");
    cpus[0].clone()
}

#[test]
fn a_client_is_pinned_only_to_cores_asked_for() {
    // Without --cores, the client runs wherever this process may (two campaigns started
    // without it do not share one core); with --cores 0, on core 0 alone.
    let ours = cpus_allowed(std::process::id() as i32);
    assert_eq!(client_cpus("unpinned", &[]), ours);
    assert_eq!(client_cpus("pinned", &["--cores", "0"]), "0");
}

#[test]
fn bad_input_gives_a_one_line_error() {
    let tmp = TempDir::new("direct-errors");
    let out = tmp.path().join("out");
    let out = out.to_str().unwrap();
    let corpus = corpus("crashme");
    let corpus = corpus.to_str().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let bad_dict = tmp.path().join("bad.dict");
    std::fs::write(&bad_dict, "this is not a dictionary\n").unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("out");
    let crashme = fuzzer("crashme");

    assert_one_line_error(&crashme, &["fuzz", "-o", out], "no seed corpus");
    assert_one_line_error(
        &crashme,
        &["fuzz", "-i", "/nonexistent/dir", "-o", out],
        "not a directory",
    );
    assert_one_line_error(
        &crashme,
        &["fuzz", "-i", empty.to_str().unwrap(), "-o", out],
        "seed corpus is empty",
    );
    assert_one_line_error(
        &crashme,
        &[
            "fuzz",
            "-i",
            corpus,
            "-o",
            out,
            "-x",
            bad_dict.to_str().unwrap(),
        ],
        "bad dictionary",
    );
    assert_one_line_error(
        &crashme,
        &["fuzz", "-i", corpus, "-o", out, "-x", "/nonexistent.dict"],
        "bad dictionary",
    );
    assert_one_line_error(
        &crashme,
        &["fuzz", "-i", corpus, "-o", out, "--cores", "0-x"],
        "bad --cores",
    );
    assert_one_line_error(
        &crashme,
        &["fuzz", "-i", corpus, "-o", out, "--cores", "4096"],
        "does not exist",
    );
    assert_one_line_error(
        &crashme,
        &["fuzz", "-i", corpus, "-o", under_file.to_str().unwrap()],
        "cannot create output directory",
    );
    assert_one_line_error(&crashme, &["fuzz", "-i", corpus], "no output directory");
    assert_one_line_error(&crashme, &["replay", "/nonexistent/input"], "cannot read");
}

/// With `-t auto`, inputs run under the timeout chosen from the seeds' run times (fast seeds:
/// 20 ms, under the 200 ms slow input), and one past it is a hang only when it also runs past a second alone: the endless loop
/// is saved, the input that takes 200 ms is not. In direct mode (the watchdog's timeout) and
/// fork mode (the template's children's), side by side: a hang is confirmed only once a
/// twentieth of the running time pays for it, from 20 s on.
#[test]
fn with_t_auto_the_timeout_comes_from_the_seeds_and_slow_inputs_are_not_hangs() {
    let campaigns: Vec<_> = ["direct", "fork"]
        .into_iter()
        .map(|mode| {
            let tmp = TempDir::new(&format!("auto-timeout-{mode}"));
            let seeds = tmp.seeds(&[("slo", "SLOx"), ("han", "HANx")]);
            let out = tmp.path().join("out");
            let marker = tmp.path().join("slow-input-ran");
            let env = [("SLOWINPUT_MARKER", marker.as_path())];
            let campaign = Campaign::fuzz_with_env(
                &fuzzer("slowinput"),
                mode,
                &seeds,
                &out,
                &["--max-time", "150", "-t", "auto"],
                &env,
            );
            (mode, tmp, out, marker, campaign)
        })
        .collect();
    for (mode, _tmp, out, marker, mut campaign) in campaigns {
        campaign.wait_for(
            Duration::from_secs(120),
            "the hang and the slow input",
            |s| stat(s, "saved_hangs") >= 1 && marker.exists(),
        );
        // Time for a slow input wrongly kept to be saved.
        std::thread::sleep(Duration::from_secs(2));
        // 20 ms on an idle machine; 40 ms when the seeds ran slower beside other tests.
        let stats = campaign.stats();
        let timeout = stat(&stats, "exec_timeout");
        assert!((20..200).contains(&timeout), "{mode}: {stats:?}");
        assert!(campaign.stop_with(libc::SIGINT).success(), "{mode}");
        let log = campaign.log();
        let chosen =
            format!("inputs time out after {timeout} ms, chosen from the seeds' run times");
        assert!(log.contains(&chosen), "{mode}: {log}");
        // The slow input ran (past the 20 ms) and was not saved as a hang.
        let hangs = inputs(&out.join("hangs"));
        assert!(!hangs.is_empty(), "{mode}");
        for hang in &hangs {
            let bytes = std::fs::read(hang).unwrap();
            assert!(
                bytes.starts_with(b"HANG"),
                "{mode}: {bytes:?} saved as a hang"
            );
        }
    }
}
