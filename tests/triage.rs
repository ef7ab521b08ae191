//! Crash triage: every finding is described beside it (`NAME.txt`: kind, stack, bucket), in
//! process and out (a standalone target run by its own command line); `crashes/` keeps the
//! first crash of each bucket even without new coverage; `replay` prints the stack of a crash
//! or hang without a sanitizer; `triage OUT` prints one line per bucket with commands that
//! reproduce it.

mod common;

use std::{fs, path::Path, time::Duration};

use common::*;

fn description(input: &Path) -> String {
    let file = format!("{}.txt", input.display());
    fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn field<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

/// Two bugs along the same coverage (harnesses/buckets): coverage keeps only the first; its
/// bucket keeps the second.
#[test]
fn two_bugs_on_one_path_are_two_buckets_and_triage_lists_them() {
    let tmp = TempDir::new("triage-buckets");
    let target = tmp.path().join("buckets");
    compile(
        &libafl_cc(),
        &["-O1", "-g"],
        "buckets/buckets.c",
        &target,
        &[],
    );
    let seeds = tmp.seeds(&[
        ("fpe", "D0x"),
        ("segv", "D1!"),
        ("segv2", "D2!"),
        ("ok", "Dab"),
    ]);
    let out = tmp.path().join("out");
    let mut campaign = Campaign::fuzz(&target, "direct", &seeds, &out, &["--max-time", "120"]);
    campaign.wait_for(Duration::from_secs(60), "two crashes", |s| {
        stat(s, "saved_crashes") >= 2
    });
    assert!(
        campaign.stop_with(libc::SIGINT).success(),
        "{}",
        campaign.log()
    );
    assert_eq!(
        stat(&campaign.stats(), "saved_crashes"),
        2,
        "descriptions are not inputs"
    );
    let crashes = inputs(&out.join("crashes"));
    let mut kinds: Vec<String> = crashes
        .iter()
        .map(|c| {
            let text = description(c);
            assert_eq!(
                field(&text, "state"),
                "divide_and_store / LLVMFuzzerTestOneInput",
                "{text}"
            );
            field(&text, "kind").to_string()
        })
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["SIGFPE", "SIGSEGV"]);

    check_triage_table(&target, &out);
}

/// `triage OUT` on the campaign above: a line per bucket, commands that reproduce each.
fn check_triage_table(target: &Path, out: &Path) {
    // An input saved without a description (by an older version) is described by `triage`.
    let bare = out.join("crashes/0123456789abcdef");
    fs::write(&bare, "D3!").unwrap();
    let table = run(target, &["triage", out.to_str().unwrap()]);
    let table = text(&table);
    assert!(description(&bare).contains("kind: SIGSEGV"));
    let line = |kind: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(kind))
            .unwrap_or_else(|| panic!("no {kind} bucket in\n{table}"))
            .to_string()
    };
    // bucket, kind, crashes seen, inputs saved, first seen, top frame.
    let segv: Vec<String> = line("SIGSEGV")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(segv[3], "2", "{table}");
    assert!(segv[2].parse::<u64>().unwrap() >= 2, "{table}");
    assert!(line("SIGFPE").contains("buckets.c:14"), "{table}");
    // The faulting store's line (the frame the signal interrupted is looked up at its own
    // address, not one byte back as a return address is).
    assert!(line("SIGSEGV").contains("buckets.c:17"), "{table}");
    assert!(table.contains("2 bucket(s)"), "{table}");
    // Each bucket's command reproduces it.
    for command in table
        .lines()
        .filter_map(|l| l.trim().strip_prefix("reproduce: "))
    {
        let words: Vec<&str> = command.split(' ').collect();
        let replayed = run(Path::new(words[0]), &words[1..]);
        assert_eq!(
            replayed.status.code(),
            Some(1),
            "{command}: {}",
            text(&replayed)
        );
    }
}

/// Without a sanitizer, `replay` prints where a crash or hang happened, as the descriptions
/// the campaign writes say.
#[test]
fn crashes_and_hangs_are_described_with_their_stack() {
    let tmp = TempDir::new("triage-crashme");
    let seeds = tmp.seeds(&[("crash", "CRAS"), ("hang", "HANG"), ("boom", "BOOX")]);
    let out = tmp.path().join("out");
    let target = fuzzer("crashme");
    let args = ["--max-time", "120", "-t", "300"];
    let mut campaign = Campaign::fuzz(&target, "direct", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(90), "two crashes and a hang", |s| {
        stat(s, "saved_crashes") >= 2 && stat(s, "saved_hangs") >= 1
    });
    assert!(
        campaign.stop_with(libc::SIGINT).success(),
        "{}",
        campaign.log()
    );
    let abort = input_starting_with(&out.join("crashes"), b"CRAS").unwrap();
    let text_of_abort = description(&abort);
    assert_eq!(field(&text_of_abort, "kind"), "SIGABRT", "{text_of_abort}");
    assert!(
        text_of_abort.contains("#0 LLVMFuzzerTestOneInput "),
        "{text_of_abort}"
    );
    assert!(text_of_abort.contains("crashme.c:21"), "{text_of_abort}");
    let minimize = field(&text_of_abort, "minimize");
    assert!(minimize.contains(" minimize "), "{text_of_abort}");

    let hang = inputs(&out.join("hangs"))[0].clone();
    let text_of_hang = description(&hang);
    assert_eq!(field(&text_of_hang, "kind"), "timeout", "{text_of_hang}");
    assert!(
        text_of_hang.contains("crashme.c:"),
        "where it hung: {text_of_hang}"
    );
    assert!(!text_of_hang.contains("minimize:"), "{text_of_hang}");

    // `replay crashes/*` runs the inputs, not their descriptions.
    let described = format!("{}.txt", abort.display());
    let replayed = run(&target, &["replay", abort.to_str().unwrap(), &described]);
    let shown = text(&replayed);
    assert!(shown.contains("1 input(s), 1 failed"), "{shown}");
    assert!(
        shown.contains("ERROR: lafuzz: deadly signal SIGABRT"),
        "{shown}"
    );
    assert!(shown.contains("in LLVMFuzzerTestOneInput"), "{shown}");
}

/// A standalone target's crash or hang, run alone by its own command line, prints its stack
/// through our runtime; the fuzzer symbolizes it: the same description as in process.
#[test]
fn standalone_crashes_are_described_with_their_stack() {
    let tmp = TempDir::new("triage-standalone");
    let seeds = tmp.seeds(&[("crash", "CRAS"), ("boom", "BOOX"), ("hang", "HANG")]);
    let out = tmp.path().join("out");
    let target = fuzzer("crashme-standalone");
    let args = [
        "--max-time",
        "120",
        "-t",
        "300",
        "--",
        target.to_str().unwrap(),
    ];
    let mut campaign = Campaign::fuzz(&driver(), "forkserver", &seeds, &out, &args);
    campaign.wait_for(Duration::from_secs(90), "two crashes and a hang", |s| {
        stat(s, "saved_crashes") >= 2 && stat(s, "saved_hangs") >= 1
    });
    assert!(
        campaign.stop_with(libc::SIGINT).success(),
        "{}",
        campaign.log()
    );
    let abort = input_starting_with(&out.join("crashes"), b"CRAS").unwrap();
    let text = description(&abort);
    assert_eq!(field(&text, "kind"), "SIGABRT", "{text}");
    assert!(text.contains("#0 LLVMFuzzerTestOneInput "), "{text}");
    assert!(text.contains("crashme.c:21"), "{text}");
    assert!(
        field(&text, "reproduce").contains("crashme-standalone <"),
        "{text}"
    );
    let hang = inputs(&out.join("hangs"))[0].clone();
    let text_of_hang = description(&hang);
    assert_eq!(field(&text_of_hang, "kind"), "timeout", "{text_of_hang}");
    assert!(
        text_of_hang.contains("crashme.c:"),
        "where it hung: {text_of_hang}"
    );
}

#[test]
fn triage_of_a_directory_that_is_no_campaign_is_an_error() {
    let tmp = TempDir::new("triage-bad");
    let listed = run(
        &fuzzer("crashme"),
        &["triage", tmp.path().to_str().unwrap()],
    );
    assert_eq!(listed.status.code(), Some(1));
    assert!(text(&listed).contains("is not a campaign's output directory"));
}
