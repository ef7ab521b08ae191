//! libFuzzer's contract, side by side with a `clang-19 -fsanitize=fuzzer` build of the same
//! harness: the command lines bots use give the same exit codes and lines; an OSS-Fuzz-style
//! `build.sh` with our compilers builds a working fuzzer; `minimize` and `minimize-corpus`.
//! ClusterFuzz's own engine on both: `clusterfuzz.rs`.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
    time::{Duration, Instant},
};

use common::{
    fuzzer, libafl_cc, libfuzzer_build, root, run, run_limited, target_dir, text, TempDir,
};

#[test]
fn bot_command_lines_behave_as_libfuzzer() {
    let tmp = TempDir::new("lf-contract");
    let control = libfuzzer_build(tmp.path());
    let seeds = tmp.seeds(&[("crash", "CRASH"), ("hang", "HANG"), ("fine", "fine")]);
    let file = |name: &str| seeds.join(name).display().to_string();
    let corpus = tmp.path().join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    fs::write(corpus.join("x"), "xxxx").unwrap();
    let corpus = corpus.display().to_string();
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (vec![file("crash")], 77, "ERROR: libFuzzer: deadly signal"),
        (
            vec!["-error_exitcode=5".into(), file("crash")],
            5,
            "SUMMARY: libFuzzer: deadly signal",
        ),
        // No number of seconds: libFuzzer's watchdog wakes once a second, so the reference
        // itself reports 1 or 2 depending on when the input started.
        (
            vec!["-timeout=1".into(), file("hang")],
            70,
            "ERROR: libFuzzer: timeout after ",
        ),
        (vec!["-runs=3".into(), file("fine")], 0, "Executed"),
        // crashme needs 4 bytes to crash: with -max_len=3 the run must end by its -runs
        // (comparison solving found the crash within 500 runs otherwise).
        (
            vec!["-runs=500".into(), "-max_len=3".into(), corpus.clone()],
            0,
            "Done",
        ),
        (vec!["-help=1".into()], 0, "merge_control_file"),
        (
            vec!["-nope=1".into(), file("fine")],
            0,
            "WARNING: unrecognized flag '-nope=1'",
        ),
        (
            vec![tmp.path().join("missing").display().to_string()],
            1,
            "does not exist",
        ),
    ];
    for binary in [fuzzer("crashme"), control] {
        for (args, code, line) in &cases {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run(&binary, &args);
            let log = text(&out);
            assert_eq!(
                out.status.code(),
                Some(*code),
                "{} {args:?}: {log}",
                binary.display()
            );
            assert!(
                log.contains(line),
                "{} {args:?}: no '{line}' in {log}",
                binary.display()
            );
        }
    }
}

/// The crash artifacts a libFuzzer run's log says it wrote (`Test unit written to P/crash-*`).
fn crash_artifacts(log: &str) -> Vec<PathBuf> {
    log.lines()
        .filter_map(|l| {
            l.split_once("Test unit written to ")
                .map(|(_, p)| PathBuf::from(p))
        })
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("crash-"))
        })
        .collect()
}

#[test]
fn fuzzing_the_libfuzzer_way_writes_the_artifact_and_new_inputs() {
    let tmp = TempDir::new("lf-fuzz");
    let corpus = tmp.seeds(&[("seed", "xxxx")]);
    let artifacts = tmp.path().join("artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    let prefix = format!("-artifact_prefix={}/", artifacts.display());
    // crashme has a planted hang too: `-fork=1` goes on after a timeout (libFuzzer's
    // `-ignore_timeouts=1` there) and stops at the first crash.
    let out = run(
        &fuzzer("crashme"),
        &[
            "-max_total_time=50",
            "-timeout=1",
            "-fork=1",
            "-seed=7",
            "-print_final_stats=1",
            &prefix,
            corpus.to_str().unwrap(),
        ],
    );
    let log = text(&out);
    assert_eq!(out.status.code(), Some(77), "{log}");
    // With -fork, timeouts are reported (their artifacts written) and fuzzing goes on.
    let written = crash_artifacts(&log)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no crash artifact line: {log}"));
    assert!(written.starts_with(&artifacts), "{log}");
    let name = written.file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.starts_with("crash-") && name.len() == "crash-".len() + 40,
        "{name}"
    );
    for needle in [
        "INITED cov:",
        "stat::number_of_executed_units:",
        "stat::peak_rss_mb:",
    ] {
        assert!(log.contains(needle), "no '{needle}': {log}");
    }
    // The artifact reproduces the libFuzzer way, and new inputs went into the corpus.
    let again = run(&fuzzer("crashme"), &[written.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(77), "{}", text(&again));
    assert!(
        fs::read_dir(&corpus).unwrap().count() > 1,
        "no new inputs in the corpus"
    );
}

#[test]
fn oss_fuzz_style_build_script_makes_our_fuzzer() {
    let tmp = TempDir::new("oss-build");
    let (src, work, out) = (
        tmp.path().join("src"),
        tmp.path().join("work"),
        tmp.path().join("out"),
    );
    for dir in [&src, &work, &out] {
        fs::create_dir_all(dir).unwrap();
    }
    fs::copy(
        root().join("harnesses/crashme/crashme.c"),
        src.join("crashme.c"),
    )
    .unwrap();
    fs::write(
        src.join("lib.c"),
        "int lib_is_upper(int c) { return c >= 'A' && c <= 'Z'; }\n",
    )
    .unwrap();
    // As a project's build.sh is written for OSS-Fuzz: a library archive, a harness object,
    // the link with $LIB_FUZZING_ENGINE; the variables as the README gives them.
    let script = "set -eu\n\
        $CC $CFLAGS -c $SRC/lib.c -o $WORK/lib.o\n\
        ar rcs $WORK/libdemo.a $WORK/lib.o\n\
        $CC $CFLAGS -c $SRC/crashme.c -o $WORK/crashme.o\n\
        $CXX $CXXFLAGS $WORK/crashme.o $WORK/libdemo.a $LIB_FUZZING_ENGINE -o $OUT/crashme_fuzzer\n";
    let flags = "-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address \
                 -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link";
    let mut build = Command::new("bash");
    build
        .args(["-c", script])
        .env("SRC", &src)
        .env("WORK", &work)
        .env("OUT", &out)
        .env("CC", libafl_cc())
        .env("CXX", target_dir().join("release/libafl_cxx"))
        .env("CFLAGS", flags)
        .env("CXXFLAGS", flags)
        .env("LIB_FUZZING_ENGINE", "-fsanitize=fuzzer");
    let built = run_limited(build, Duration::from_secs(300));
    assert!(built.status.success(), "build.sh failed: {}", text(&built));
    let binary = out.join("crashme_fuzzer");
    let crash = tmp.seeds(&[("crash", "CRASH")]).join("crash");
    let reproduced = run(&binary, &[crash.to_str().unwrap()]);
    assert_eq!(reproduced.status.code(), Some(77), "{}", text(&reproduced));
    let corpus = tmp.seeds(&[("seed", "xxxx")]);
    let prefix = format!("-artifact_prefix={}/", work.display());
    let fuzzed = run(
        &binary,
        &[
            "-max_total_time=50",
            "-timeout=1",
            "-fork=1",
            &prefix,
            corpus.to_str().unwrap(),
        ],
    );
    assert_eq!(fuzzed.status.code(), Some(77), "{}", text(&fuzzed));
    ignoring_crashes_writes_each_and_ends_at_max_total_time(&binary, &tmp);
}

/// With `-fork=1 -ignore_crashes=1` (how ClusterFuzz's fork mode runs) each crash is reported
/// and written, and the run goes on to `-max_total_time` and exits 0. An ASan build's reports
/// fill a pipe (64 KiB) within seconds: this run hung when the test read its output only at
/// the end.
fn ignoring_crashes_writes_each_and_ends_at_max_total_time(binary: &Path, tmp: &TempDir) {
    let (corpus, artifacts) = (tmp.path().join("corpus"), tmp.path().join("artifacts"));
    for dir in [&corpus, &artifacts] {
        fs::create_dir_all(dir).unwrap();
    }
    fs::write(corpus.join("seed"), "xxxx").unwrap();
    let prefix = format!("-artifact_prefix={}/", artifacts.display());
    let started = Instant::now();
    let out = run(
        binary,
        &[
            "-max_total_time=8",
            "-timeout=1",
            "-fork=1",
            "-ignore_crashes=1",
            &prefix,
            corpus.to_str().unwrap(),
        ],
    );
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(started.elapsed() >= Duration::from_secs(8), "{log}");
    let written = crash_artifacts(&log);
    assert!(written.len() >= 2, "fewer than two crashes written: {log}");
    for path in written {
        let again = run(binary, &[path.to_str().unwrap()]);
        assert_eq!(
            again.status.code(),
            Some(77),
            "{}: {}",
            path.display(),
            text(&again)
        );
    }
    assert!(log.contains("Done "), "{log}");
}

#[test]
fn minimize_shrinks_a_crash_and_minimize_corpus_keeps_its_coverage() {
    let tmp = TempDir::new("minimize");
    let seeds = tmp.seeds(&[
        ("crash", "zzCRASzzzzzzzzzzzzzzzzzzzzz"),
        ("boom", "BOOMBOOMBOOM"),
    ]);
    let small = tmp.path().join("small");
    let out = run(
        &fuzzer("crashme"),
        &[
            "minimize",
            seeds.join("boom").to_str().unwrap(),
            "-o",
            small.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(fs::read(&small).unwrap(), b"BOOM");
    let replay = run(&fuzzer("crashme"), &["replay", small.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&replay.stdout).contains("CRASH (signal 11"));
    let fine = run(
        &fuzzer("crashme"),
        &["minimize", seeds.join("crash").to_str().unwrap(), "-o", "x"],
    );
    assert!(
        !fine.status.success(),
        "an input that does not crash is an error"
    );

    // A corpus with redundant inputs: minimized, then minimized again, the edges stay.
    let corpus = tmp.path().join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    let redundant = [
        ("a", "CRAx"),
        ("b", "CRAy"),
        ("c", "Cxxx"),
        ("d", "HANx"),
        ("e", "BOxx"),
    ];
    for (name, bytes) in redundant {
        fs::write(corpus.join(name), bytes).unwrap();
    }
    let edges = |out: &Output| {
        let log = text(out);
        let n = log
            .split(" edges")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse::<u64>().ok());
        n.unwrap_or_else(|| panic!("no edge count: {log}"))
    };
    let (first, second) = (tmp.path().join("m1"), tmp.path().join("m2"));
    let minimize_corpus = |from: &Path, to: &Path| {
        let (from, to) = (from.to_str().unwrap(), to.to_str().unwrap());
        run(
            &fuzzer("crashme"),
            &["minimize-corpus", "-i", from, "-o", to],
        )
    };
    let once = minimize_corpus(&corpus, &first);
    let twice = minimize_corpus(&first, &second);
    assert!(
        once.status.success() && twice.status.success(),
        "{}",
        text(&once)
    );
    let kept = fs::read_dir(&first)
        .unwrap()
        .filter(|e| {
            !e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .count();
    assert!((3..5).contains(&kept), "kept {kept}: {}", text(&once));
    assert_eq!(edges(&once), edges(&twice));
    assert!(edges(&once) > 3);
}

#[test]
fn only_ascii_keeps_every_new_input_ascii() {
    let is_ascii = |bytes: &[u8]| {
        bytes
            .iter()
            .all(|&b| (0x20..0x7f).contains(&b) || b"\t\n\x0b\x0c\r".contains(&b))
    };
    for only_ascii in [false, true] {
        let tmp = TempDir::new("only-ascii");
        // Longer than libpng's 8-byte signature, so the first execution reaches its check; not
        // text (a text seed gets comparison solving on its first fuzz only, and one unlucky
        // round left 1 run in 20 without a non-ASCII input), and not ASCII, so an ASCII input
        // is the flag's doing.
        let corpus = tmp.seeds(&[("seed", "hello\x00\x01\x02\x03world")]);
        let flag = format!("-only_ascii={}", u8::from(only_ascii));
        let args = [
            flag.as_str(),
            "-runs=30000",
            "-close_fd_mask=3",
            corpus.to_str().unwrap(),
        ];
        let out = run(&fuzzer("libpng"), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let new_inputs: Vec<Vec<u8>> = fs::read_dir(&corpus)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap() != "seed")
            .map(|p| fs::read(p).unwrap())
            .collect();
        assert!(!new_inputs.is_empty(), "{}", text(&out));
        // Without the flag, mutations (and libpng's signature, solved) are not ASCII.
        assert_eq!(
            new_inputs.iter().all(|i| is_ascii(i)),
            only_ascii,
            "{only_ascii}"
        );
    }
}
