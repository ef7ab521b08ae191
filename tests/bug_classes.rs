//! Every bug class a libFuzzer build reports, side by side with a `clang-19 -fsanitize=fuzzer`
//! build of the same harness: leaks (LeakSanitizer), custom mutators, value profile, ASan in
//! process, `-close_fd_mask`, and `-runs` for the whole campaign.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
    thread,
    time::Duration,
};

use common::*;

/// `source` built by our wrapper into `dir/name` (`flags` before the source, `libs` after).
fn ours(dir: &Path, name: &str, source: &str, flags: &[&str], libs: &[&str]) -> PathBuf {
    build(&libafl_cc(), dir.join(name), source, flags, libs)
}

fn command(binary: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command.args(args);
    command
}

const ASAN: [&str; 1] = ["-fsanitize=address"];

/// `source` built with libFuzzer itself (`-fsanitize=fuzzer`, plus `flags`).
fn libfuzzer(dir: &Path, name: &str, source: &str, flags: &[&str], libs: &[&str]) -> PathBuf {
    let flags = [&["-fsanitize=fuzzer"], flags].concat();
    build(Path::new("clang-19"), dir.join(name), source, &flags, libs)
}

/// `source` (under `harnesses/`, or absolute) built at `-O1 -g` plus `flags`.
fn build(cc: &Path, binary: PathBuf, source: &str, flags: &[&str], libs: &[&str]) -> PathBuf {
    let flags = [&["-O1", "-g"], flags].concat();
    compile(cc, &flags, source, &binary, libs);
    binary
}

/// Fuzzes the libFuzzer way, on a fresh copy of `seed` (libFuzzer writes into its corpus),
/// with artifacts under `dir/NAME-`; the output and the artifacts written.
fn fuzz_libfuzzer_way(
    binary: &Path,
    dir: &Path,
    flags: &[&str],
    seed: &[u8],
) -> (Output, Vec<PathBuf>) {
    let name = binary.file_name().unwrap().to_str().unwrap();
    let corpus = dir.join(format!("{name}-corpus"));
    fs::create_dir_all(&corpus).unwrap();
    fs::write(corpus.join("seed"), seed).unwrap();
    let prefix = dir.join(format!("{name}-"));
    let mut command = Command::new(binary);
    command
        .args(flags)
        .arg(format!("-artifact_prefix={}", prefix.display()))
        .arg(&corpus);
    let out = run_limited(command, Duration::from_secs(120));
    let artifacts = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().starts_with(prefix.to_str().unwrap()) && p.is_file())
        .collect();
    (out, artifacts)
}

const LEAK_REPORT: &str = "ERROR: LeakSanitizer: detected memory leaks";
const LEAK_NOTE: &str = "INFO: to ignore leaks on libFuzzer side use -detect_leaks=0.";

#[test]
fn a_leak_ends_the_libfuzzer_way_run_as_in_libfuzzer_and_its_artifact_reproduces() {
    let tmp = TempDir::new("leak-lf");
    let source = "leak/leak.c";
    let builds = [
        ours(tmp.path(), "ours", source, &["-fsanitize=address"], &[]),
        libfuzzer(
            tmp.path(),
            "libfuzzer",
            source,
            &["-fsanitize=address"],
            &[],
        ),
    ];
    for binary in &builds {
        let (out, artifacts) = fuzz_libfuzzer_way(
            binary,
            tmp.path(),
            &["-max_total_time=60", "-seed=3"],
            b"xxxx",
        );
        let log = text(&out);
        assert_eq!(out.status.code(), Some(77), "{}: {log}", binary.display());
        assert!(
            log.contains(LEAK_REPORT) && log.contains(LEAK_NOTE),
            "{log}"
        );
        let [leak] = artifacts.as_slice() else {
            panic!("one artifact expected: {artifacts:?}\n{log}");
        };
        let name = leak.file_name().unwrap().to_str().unwrap();
        assert!(
            name.contains("-leak-") && name.len() == name.find("-leak-").unwrap() + 46,
            "{name}"
        );
        assert!(fs::read(leak).unwrap().starts_with(b"LK"), "{name}");
        assert!(
            log.contains(&format!("Test unit written to {}", leak.display())),
            "{log}"
        );
        // Run on the file, both report the leak and exit with libFuzzer's error code. libFuzzer
        // itself once left it to LeakSanitizer's check at exit, which exits with ASan's code, 1
        // (CI, 2026-12-07; 300 reruns outside the tests all exited 77).
        let again = run(binary, &[leak.to_str().unwrap()]);
        let codes: &[i32] = if binary == &builds[0] {
            &[77]
        } else {
            &[77, 1]
        };
        let code = again.status.code().unwrap_or(-1);
        assert!(codes.contains(&code), "{code}: {}", text(&again));
        assert!(text(&again).contains(LEAK_REPORT), "{}", text(&again));
    }
    // Turned off, ours fuzzes on without a leak (libFuzzer still checks once at exit).
    let off = tmp.path().join("off");
    fs::create_dir_all(&off).unwrap();
    let flags = ["-detect_leaks=0", "-runs=200000"];
    let (out, artifacts) = fuzz_libfuzzer_way(&builds[0], &off, &flags, b"LKxx");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains(LEAK_REPORT));
    assert!(artifacts.is_empty(), "{artifacts:?}");
}

#[test]
fn fuzz_saves_leaks_and_goes_on_in_direct_and_fork_mode() {
    let tmp = TempDir::new("leak-fuzz");
    let target = ours(tmp.path(), "leak", "leak/leak.c", &ASAN, &[]);
    let seeds = tmp.seeds(&[("seed", "xxxx")]);
    for mode in ["direct", "fork"] {
        let out = tmp.path().join(mode);
        let mut campaign = Campaign::fuzz(&target, mode, &seeds, &out, &["--max-time", "120"]);
        campaign.wait_for(Duration::from_secs(60), "a leak", |s| {
            stat(s, "saved_leaks") >= 1
        });
        // The campaign goes on after it.
        let execs = stat(&campaign.stats(), "execs_done");
        campaign.wait_for(Duration::from_secs(30), "fuzzing after the leak", |s| {
            stat(s, "execs_done") > execs + 1000
        });
        assert!(
            campaign.stop_with(libc::SIGINT).success(),
            "{}",
            campaign.log()
        );
        assert!(
            campaign.log().contains("new leak saved"),
            "{}",
            campaign.log()
        );
        assert!(
            inputs(&out.join("crashes")).is_empty(),
            "a leak is not a crash"
        );
        let leak = input_starting_with(&out.join("leaks"), b"LK")
            .unwrap_or_else(|| panic!("{mode}: {:?}", inputs(&out.join("leaks"))));
        let replayed = run(&target, &["replay", leak.to_str().unwrap()]);
        assert_eq!(replayed.status.code(), Some(1), "{}", text(&replayed));
        assert!(text(&replayed).contains("LEAK") && text(&replayed).contains(LEAK_REPORT));
    }
    // Turned off, no leak is looked for.
    let out = tmp.path().join("off");
    let args = fuzz_args(&seeds, &out, &["--no-detect-leaks", "--runs", "300000"]);
    let ran = run(&target, &args);
    assert!(ran.status.success(), "{}", text(&ran));
    assert_eq!(stat(&stats(&out), "saved_leaks"), 0);
}

#[test]
fn value_profile_solves_a_comparison_input_to_state_cannot() {
    let tmp = TempDir::new("value-profile");
    let source = "valueprofile/valueprofile.c";
    let target = ours(tmp.path(), "vp", source, &[], &[]);
    let seeds = tmp.seeds(&[("seed", "xxxx")]);
    // The same budget of executions (not of time: the machine is shared), side by side: with
    // value profile, and without. With it, the crash took under 200,000 (24 seeds; each
    // comparison's closest entry favoured). Before that favouring, 3 seeds in 24 needed more
    // than 1,000,000, one 5,700,000.
    let budget = ["--runs", "1000000", "--seed", "5"];
    let [with, without] = ["with", "without"].map(|name| tmp.path().join(name));
    let vp_args = [&budget[..], &["--value-profile"]].concat();
    for (out, args) in [(&with, &vp_args[..]), (&without, &budget[..])] {
        let ran = run_limited(
            command(&target, &fuzz_args(&seeds, out, args)),
            Duration::from_secs(240),
        );
        assert!(ran.status.success(), "{}", text(&ran));
    }
    assert_eq!(
        stat(&stats(&without), "saved_crashes"),
        0,
        "found without value profile"
    );
    assert!(
        stat(&stats(&with), "saved_crashes") >= 1,
        "{:?}",
        stats(&with)
    );
    let crash = inputs(&with.join("crashes"))[0].clone();
    let replayed = run(&target, &["replay", crash.to_str().unwrap()]);
    assert!(text(&replayed).contains("SIGABRT"), "{}", text(&replayed));
    // libFuzzer's flag turns it on in the libFuzzer front end, and libFuzzer finds it too.
    let reference = libfuzzer(tmp.path(), "libfuzzer", source, &[], &[]);
    for binary in [&target, &reference] {
        let flags = ["-use_value_profile=1", "-max_total_time=60", "-seed=5"];
        let (out, artifacts) = fuzz_libfuzzer_way(binary, tmp.path(), &flags, b"xxxx");
        assert_eq!(
            out.status.code(),
            Some(77),
            "{}: {}",
            binary.display(),
            text(&out)
        );
        assert_eq!(artifacts.len(), 1, "{artifacts:?}");
    }
    assert_one_line_error(
        &target,
        &fuzz_args(
            &seeds,
            &tmp.path().join("fork"),
            &["--mode", "fork", "--value-profile"],
        ),
        "--value-profile needs --mode direct or reset",
    );
}

/// `zlib.compress(b"FUZ")`.
const ZLIB_FUZ: [u8; 11] = [120, 156, 115, 11, 141, 2, 0, 1, 217, 0, 246];

#[test]
fn a_custom_mutator_reaches_what_raw_mutations_cannot() {
    let tmp = TempDir::new("custom-mutator");
    let source = "compressed/compressed.c";
    // ASan builds, as OSS-Fuzz's: its allocator also keeps zlib's large buffers from going
    // back to the kernel after every call (three times the speed of glibc's here).
    let (asan, plain_flags) = (
        ["-fsanitize=address"],
        ["-fsanitize=address", "-DNO_CUSTOM_MUTATOR"],
    );
    let target = ours(tmp.path(), "custom", source, &asan, &["-lz"]);
    let plain = ours(tmp.path(), "plain", source, &plain_flags, &["-lz"]);
    let lf_custom = libfuzzer(tmp.path(), "lf-custom", source, &asan, &["-lz"]);
    let lf_plain = libfuzzer(tmp.path(), "lf-plain", source, &plain_flags, &["-lz"]);
    let seeds = tmp.seeds(&[("seed", "xxxx")]);
    // Without the custom mutator, the same budget finds nothing, ours or libFuzzer's.
    let budget = 10;
    let ours_plain = {
        let (plain, seeds, out) = (plain.clone(), seeds.clone(), tmp.path().join("plain-out"));
        thread::spawn(move || {
            let budget = budget.to_string();
            let args = fuzz_args(&seeds, &out, &["--max-time", &budget]);
            let ran = run(&plain, &args);
            assert!(ran.status.success(), "{}", text(&ran));
            stat(&stats(&out), "saved_crashes")
        })
    };
    let time = format!("-max_total_time={budget}");
    let (lf_out, lf_artifacts) = fuzz_libfuzzer_way(&lf_plain, tmp.path(), &[&time], b"xxxx");
    assert_eq!(lf_out.status.code(), Some(0), "{}", text(&lf_out));
    assert!(lf_artifacts.is_empty(), "{lf_artifacts:?}");
    assert_eq!(
        ours_plain.join().unwrap(),
        0,
        "found without the custom mutator"
    );
    // With it, libFuzzer finds the crash, and we do in every mode that links the harness.
    let (lf_out, _) = fuzz_libfuzzer_way(&lf_custom, tmp.path(), &["-max_total_time=60"], b"xxxx");
    assert_eq!(lf_out.status.code(), Some(77), "{}", text(&lf_out));
    // Fork mode runs an ASan build at a hundredth of direct mode's speed: it starts from a stream
    // of "FUZ", one byte short (raw mutations of it do not decompress either).
    let near = tmp.path().join("near");
    fs::create_dir_all(&near).unwrap();
    fs::write(near.join("fuz"), ZLIB_FUZ).unwrap();
    for (mode, seeds) in [("direct", &seeds), ("reset", &seeds), ("fork", &near)] {
        let out = tmp.path().join(mode);
        let mut campaign = Campaign::fuzz(&target, mode, seeds, &out, &["--max-time", "120"]);
        campaign.wait_for(Duration::from_secs(60), "the crash", |s| {
            stat(s, "saved_crashes") >= 1
        });
        drop(campaign);
        let crash = inputs(&out.join("crashes"))[0].clone();
        let replayed = run(&target, &["replay", crash.to_str().unwrap()]);
        assert!(
            text(&replayed).contains("SIGABRT"),
            "{mode}: {}",
            text(&replayed)
        );
    }
}

#[test]
fn an_asan_report_in_direct_mode_is_a_crash_that_replays_with_the_report() {
    let tmp = TempDir::new("asan-direct");
    let target = ours(tmp.path(), "overflow", "asan/overflow.c", &ASAN, &[]);
    let seeds = tmp.seeds(&[("near", "OVEX")]);
    let out = tmp.path().join("out");
    // A 10 ms timeout, shorter than writing the symbolized report takes: the input is a
    // crash all the same, in the campaign and when described again alone (not a hang, nor a
    // flaky crash).
    let args = ["--max-time", "120", "-t", "10"];
    let mut campaign = Campaign::fuzz(&target, "direct", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(60), "the ASan crash", |s| {
        stat(s, "saved_crashes") >= 1
    });
    assert!(
        campaign.stop_with(libc::SIGINT).success(),
        "{}",
        campaign.log()
    );
    let crash = input_starting_with(&out.join("crashes"), b"OVER").expect("the OVER input");
    let replayed = run(&target, &["replay", crash.to_str().unwrap()]);
    assert_eq!(replayed.status.code(), Some(1), "{}", text(&replayed));
    let report = text(&replayed);
    assert!(
        report.contains("ERROR: AddressSanitizer: heap-buffer-overflow"),
        "{report}"
    );
    // Symbolized, as libFuzzer's (by LLVM 19's llvm-symbolizer, see src/target/sanitizers.c).
    assert!(
        report.contains("in LLVMFuzzerTestOneInput") && report.contains("overflow.c:"),
        "{report}"
    );
    // Its description (see tests/triage.rs) names the report's kind and the harness's frame.
    let described = fs::read_to_string(format!("{}.txt", crash.display())).unwrap();
    assert!(
        described.contains("kind: heap-buffer-overflow READ 1\n")
            && described.contains("state: LLVMFuzzerTestOneInput\n")
            && described.contains("#0 LLVMFuzzerTestOneInput ")
            && described.contains("overflow.c:14"),
        "{described}"
    );
}

/// A harness that writes a line to stdout and one to stderr for every input.
const NOISY: &str = "#include <stdint.h>\n#include <stdio.h>\n\
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n\
      fprintf(stdout, \"OUT-MARK\\n\"); fflush(stdout);\n\
      fprintf(stderr, \"ERR-MARK\\n\");\n\
      return 0;\n\
    }\n";

#[test]
fn close_fd_mask_silences_what_libfuzzer_silences_and_runs_count_for_the_whole_campaign() {
    let tmp = TempDir::new("close-fd");
    let source = tmp.path().join("noisy.c");
    fs::write(&source, NOISY).unwrap();
    let source = source.to_str().unwrap();
    let builds = [
        ours(tmp.path(), "ours", source, &[], &[]),
        libfuzzer(tmp.path(), "libfuzzer", source, &[], &[]),
    ];
    for mask in 0..4 {
        let seen: Vec<(bool, bool)> = builds
            .iter()
            .map(|binary| {
                let flags = [format!("-close_fd_mask={mask}"), "-runs=200".into()];
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                let (out, _) = fuzz_libfuzzer_way(binary, tmp.path(), &flags, b"x");
                assert_eq!(out.status.code(), Some(0), "{}", text(&out));
                (
                    text(&out).contains("OUT-MARK"),
                    text(&out).contains("ERR-MARK"),
                )
            })
            .collect();
        assert_eq!(seen[0], seen[1], "-close_fd_mask={mask}: ours, libFuzzer");
        assert_eq!(
            seen[0],
            (mask & 1 == 0, mask & 2 == 0),
            "-close_fd_mask={mask}"
        );
    }
    // -runs with two cores: the campaign's total, not each core's (80,000); each client stops at
    // the end of the entry it is fuzzing, a little over its share.
    let flags = ["-runs=40000", "-fork=2", "-close_fd_mask=3"];
    let (out, _) = fuzz_libfuzzer_way(&builds[0], tmp.path(), &flags, b"x");
    let done: u64 = text(&out)
        .lines()
        .find_map(|l| l.strip_prefix("Done ")?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no Done line: {}", text(&out)));
    assert!(
        (40_000..80_000).contains(&done),
        "{done} runs: {}",
        text(&out)
    );
}
