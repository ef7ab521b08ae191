//! End-to-end: what kills other fuzzers. Inputs that take the client over `--rss-limit-mb`
//! are saved to `ooms/` and the campaign goes on (and finds the crash beside them); a client
//! killed from outside is restarted and keeps its corpus; seeds that are empty or all crash
//! still start a campaign.

mod common;

use std::{fs, path::Path, time::Duration};

use common::*;

#[test]
fn inputs_over_the_memory_limit_are_saved_and_the_campaign_goes_on() {
    let tmp = TempDir::new("memory-limit");
    let out = tmp.path().join("out");
    let memhog = fuzzer("memhog");
    // A fixed second per input: under the timeout chosen from the seeds (20 ms) the hog times
    // out first and its confirmation alone files it, so the client's memory watch, tested
    // here, never sees it.
    let args = ["--rss-limit-mb", "512", "--max-time", "120", "-t", "1000"];
    let mut campaign = Campaign::fuzz(&memhog, "direct", &corpus("memhog"), &out, &args);
    campaign.wait_for(
        Duration::from_secs(90),
        "an out-of-memory input and the crash",
        |s| {
            stat(s, "saved_ooms") >= 1
                && stat(s, "client_restarts") >= 1
                && input_starting_with(&out.join("crashes"), b"CRSH").is_some()
        },
    );
    assert!(campaign.stop_with(libc::SIGINT).success());
    let stats = campaign.stats();
    // The input that allocates 8 GiB is the one running when its client goes over the limit.
    let hog = input_starting_with(&out.join("ooms"), b"HOG!").unwrap_or_else(|| {
        panic!(
            "no HOG! input in {:?}\n{}",
            inputs(&out.join("ooms")),
            campaign.log()
        )
    });
    assert!(stat(&stats, "saved_ooms") >= 1, "{stats:?}");
    assert!(stat(&stats, "client_restarts") >= 1, "{stats:?}");
    assert!(
        campaign.log().contains("ran out of memory"),
        "{}",
        campaign.log()
    );
    // The ordinary crash is still found.
    assert!(
        input_starting_with(&out.join("crashes"), b"CRSH").is_some(),
        "{stats:?}"
    );
    let replayed = run(
        &memhog,
        &["replay", "--rss-limit-mb", "256", hog.to_str().unwrap()],
    );
    assert_eq!(replayed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&replayed.stdout).contains("OUT-OF-MEMORY"));
}

#[test]
fn a_client_killed_from_outside_is_restarted_with_its_corpus() {
    let tmp = TempDir::new("killed-client");
    let out = tmp.path().join("out");
    let args = ["--max-time", "120"];
    let mut campaign = Campaign::fuzz(&fuzzer("libpng"), "direct", &corpus("libpng"), &out, &args);
    campaign.wait_for(Duration::from_secs(60), "fuzzing", |s| {
        stat(s, "execs_done") > 10_000
    });
    let queue_before = inputs(&out.join("queue"));
    let execs_before = stat(&campaign.stats(), "execs_done");
    let clients = campaign_clients(campaign.pid());
    assert_eq!(clients.len(), 1, "{clients:?}");
    // SAFETY: kill(2) on a pid of the campaign this test started.
    unsafe {
        libc::kill(clients[0], libc::SIGKILL);
    }
    campaign.wait_for(Duration::from_secs(60), "the client restarted", |s| {
        stat(s, "client_restarts") == 1 && stat(s, "execs_done") > execs_before + 10_000
    });
    assert!(
        campaign.log().contains("was killed by signal 9"),
        "{}",
        campaign.log()
    );
    let queue_after = inputs(&out.join("queue"));
    for entry in &queue_before {
        assert!(queue_after.contains(entry), "{} lost", entry.display());
    }
    assert!(campaign.stop_with(libc::SIGINT).success());
}

#[test]
fn an_empty_seed_starts_the_campaign() {
    let tmp = TempDir::new("empty-seed");
    let seeds = tmp.seeds(&[("empty", "")]);
    let out = tmp.path().join("out");
    let mut campaign = Campaign::fuzz(
        &fuzzer("crashme"),
        "direct",
        &seeds,
        &out,
        &["--runs", "20000"],
    );
    let stats = campaign.finish(Duration::from_secs(120));
    assert!(stat(&stats, "execs_done") >= 20_000, "{stats:?}");
    assert!(stat(&stats, "corpus_count") >= 1, "{stats:?}");
}

#[test]
fn seeds_that_all_crash_are_saved_and_fuzzing_starts_from_the_empty_input() {
    let tmp = TempDir::new("crashing-seeds");
    let seeds = tmp.seeds(&[("crash", "CRAS"), ("boom", "BOOM")]);
    let out = tmp.path().join("out");
    for mode in ["direct", "fork"] {
        let _ = fs::remove_dir_all(&out);
        let mut campaign =
            Campaign::fuzz(&fuzzer("crashme"), mode, &seeds, &out, &["--runs", "2000"]);
        assert!(
            campaign.wait(Duration::from_secs(120)).success(),
            "{mode}: {}",
            campaign.log()
        );
        let stats = campaign.stats();
        assert_eq!(inputs(&out.join("crashes")).len(), 2, "{mode}: {stats:?}");
        assert!(stat(&stats, "execs_done") >= 2000, "{mode}: {stats:?}");
        assert!(
            !campaign.log().contains("No entries in corpus"),
            "{}",
            campaign.log()
        );
    }
}

/// A client killed for memory never tells the broker it left: its successor does, or the
/// campaign waits for it forever once the runs are done.
#[test]
fn a_campaign_of_so_many_runs_ends_after_a_client_was_killed_for_memory() {
    let tmp = TempDir::new("runs-after-oom");
    let out = tmp.path().join("out");
    let seeds = tmp.seeds(&[("hog", "HOG!"), ("other", "x")]);
    let args = ["--rss-limit-mb", "512", "--runs", "4000", "-t", "1000"];
    let mut campaign = Campaign::fuzz(&fuzzer("memhog"), "direct", &seeds, &out, &args);
    let stats = campaign.finish(Duration::from_secs(60));
    assert_eq!(stat(&stats, "client_restarts"), 1, "{stats:?}");
    assert!(stat(&stats, "saved_ooms") >= 1, "{stats:?}");
    assert!(stat(&stats, "execs_done") >= 4000, "{stats:?}");
}

#[test]
fn fork_mode_children_over_the_memory_limit_are_out_of_memory_findings() {
    let tmp = TempDir::new("fork-memory-limit");
    let out = tmp.path().join("out");
    // The hog, and an input that leaks 64 MiB each time it runs: thousands of runs of it and
    // its mutants would add up to far over the limit in one process.
    let seeds = tmp.seeds(&[("hog", "HOG!"), ("leak", "LEAK")]);
    let args = ["--rss-limit-mb", "512", "--runs", "4000"];
    let mut campaign = Campaign::fuzz(&fuzzer("memhog"), "fork", &seeds, &out, &args);
    let stats = campaign.finish(Duration::from_secs(120));
    assert!(stat(&stats, "saved_ooms") >= 1, "{stats:?}");
    assert!(stat(&stats, "execs_done") >= 4000, "{stats:?}");
    // Each input runs in a fresh child: only the input that allocates 8 GiB goes over.
    for oom in inputs(&out.join("ooms")) {
        assert!(
            fs::read(&oom).unwrap().starts_with(b"HOG!"),
            "{}",
            oom.display()
        );
    }
    assert_eq!(stat(&stats, "client_restarts"), 0);
}

/// A memory cgroup of `limit` bytes this test may put a campaign in (cgroup v1, as root), or
/// None with the reason printed.
struct MemoryCgroup(std::path::PathBuf);

impl MemoryCgroup {
    fn new(limit: u64) -> Option<Self> {
        let dir = std::path::PathBuf::from(format!(
            "/sys/fs/cgroup/memory/lafuzz-test-{}",
            std::process::id()
        ));
        let made = fs::create_dir_all(&dir)
            .and_then(|()| fs::write(dir.join("memory.limit_in_bytes"), limit.to_string()));
        match made {
            Ok(()) => Some(Self(dir)),
            Err(e) => {
                eprintln!("SKIPPED: cannot make a memory cgroup here ({e})");
                let _ = fs::remove_dir(&dir);
                None
            }
        }
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.0);
    }
}

#[test]
fn a_client_killed_by_the_kernel_for_memory_is_restarted_and_its_input_kept() {
    let Some(cgroup) = MemoryCgroup::new(1 << 30) else {
        return;
    };
    let tmp = TempDir::new("cgroup-oom");
    let out = tmp.path().join("out");
    // No limit of ours: the kernel's OOM killer stops the client inside the 1 GiB group
    // (with time to get there: under memory pressure the allocation slows down).
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} fuzz -i {} -o {} --rss-limit-mb 0 -t 10000 --max-time 120",
        cgroup.0.display(),
        fuzzer("memhog").display(),
        corpus("memhog").display(),
        out.display()
    );
    let mut campaign = Campaign::start(Path::new("/bin/sh"), &["-c", &script], &out);
    campaign.wait_for(
        Duration::from_secs(90),
        "the client killed and restarted",
        |s| {
            stat(s, "client_restarts") >= 1
                && input_starting_with(&out.join("ooms"), b"HOG!").is_some()
        },
    );
    // The shell execs the fuzzer: the signal reaches it.
    assert!(campaign.stop_with(libc::SIGINT).success());
    let stats = campaign.stats();
    assert!(stat(&stats, "client_restarts") >= 1, "{stats:?}");
    assert!(
        campaign
            .log()
            .contains("was killed by the kernel for lack of memory"),
        "{}",
        campaign.log()
    );
    assert!(
        input_starting_with(&out.join("ooms"), b"HOG!").is_some(),
        "{stats:?}"
    );
}

#[test]
fn standalone_targets_children_over_the_memory_limit_are_out_of_memory_findings() {
    let tmp = TempDir::new("standalone-memory-limit");
    let out = tmp.path().join("out");
    let target = fuzzer("memhog-standalone");
    let seeds = tmp.seeds(&[("near", "HOG?")]);
    for mode in ["forkserver", "persistent"] {
        let _ = fs::remove_dir_all(&out);
        let args = [
            "--rss-limit-mb",
            "512",
            "--max-time",
            "120",
            "--",
            target.to_str().unwrap(),
        ];
        let mut campaign = Campaign::fuzz(&driver(), mode, &seeds, &out, &args);
        campaign.wait_for(Duration::from_secs(90), "the HOG! input in ooms/", |_| {
            input_starting_with(&out.join("ooms"), b"HOG!").is_some()
        });
        assert!(campaign.stop_with(libc::SIGINT).success(), "{mode}");
        // The limit is the target's: the fuzzer itself was never restarted.
        assert_eq!(stat(&campaign.stats(), "client_restarts"), 0, "{mode}");
    }
}

#[test]
fn with_asan_one_allocation_over_the_malloc_limit_is_out_of_memory() {
    let tmp = TempDir::new("malloc-limit");
    let out = tmp.path().join("out");
    let memhog = fuzzer("memhog-asan");
    // LEAK and HOG! both allocate 64 MiB at once: over 32, far under the RSS limit.
    let seeds = tmp.seeds(&[("near", "HOG?")]);
    let args = ["--malloc-limit-mb", "32", "--max-time", "120"];
    let mut campaign = Campaign::fuzz(&memhog, "direct", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(90), "the HOG! input in ooms/", |_| {
        input_starting_with(&out.join("ooms"), b"HOG!").is_some()
    });
    assert!(campaign.stop_with(libc::SIGINT).success());
    // The input was ended as a finding and the client handed its state on, as after a crash:
    // it was not restarted afresh (which runs the whole corpus again first).
    let stats = campaign.stats();
    assert_eq!(stat(&stats, "client_restarts"), 0, "{}", campaign.log());
    assert!(
        campaign.log().contains("new out-of-memory input saved"),
        "{}",
        campaign.log()
    );
    // The command printed with it reproduces it: under the 32 MiB malloc limit, not the
    // RSS limit (2 GiB) that replay would default it to.
    let log = campaign.log();
    let command = log
        .lines()
        .skip_while(|l| !l.contains("new out-of-memory input saved"))
        .find_map(|l| l.trim().strip_prefix("reproduce with: "))
        .unwrap_or_else(|| panic!("no reproduce command: {log}"));
    assert!(command.contains("--malloc-limit-mb 32"), "{command}");
    let words: Vec<&str> = command.split_whitespace().collect();
    let replayed = run(Path::new(words[0]), &words[1..]);
    assert_eq!(replayed.status.code(), Some(1), "{command}: {replayed:?}");
    assert!(String::from_utf8_lossy(&replayed.stdout).contains("OUT-OF-MEMORY"));
    // The input's description names the same command.
    let hog = input_starting_with(&out.join("ooms"), b"HOG!").unwrap();
    let mut description = hog.into_os_string();
    description.push(".txt");
    let description = fs::read_to_string(&description).unwrap();
    assert!(
        description.contains(&format!("reproduce: {command}\n")),
        "{description}"
    );
}
