//! The `coverage` command of a `libafl_cc --coverage` build: an HTML report and `llvm-cov
//! report`'s table for a corpus, crashing inputs included; a fuzzing build refuses it.

mod common;

use std::{fs, path::Path, path::PathBuf};

use common::*;

/// crashme built with `libafl_cc --coverage` into `dir`.
fn coverage_build(dir: &Path) -> PathBuf {
    let binary = dir.join("crashme-cov");
    compile(
        &libafl_cc(),
        &["--coverage", "-O1"],
        "crashme/crashme.c",
        &binary,
        &[],
    );
    binary
}

/// A corpus directory `name` in `tmp` holding `inputs`.
fn corpus_of(tmp: &TempDir, name: &str, inputs: &[&str]) -> PathBuf {
    let dir = tmp.path().join(name);
    fs::create_dir_all(&dir).unwrap();
    for input in inputs {
        fs::write(dir.join(input), input).unwrap();
    }
    dir
}

/// `coverage -i CORPUS --text`: crashme.c's row of the table, and its covered lines.
fn text_report(binary: &Path, corpus: &Path) -> (String, u64) {
    let out = run(
        binary,
        &["coverage", "-i", corpus.to_str().unwrap(), "--text"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let row = stdout
        .lines()
        .find(|l| l.contains("crashme.c"))
        .unwrap_or_else(|| panic!("no crashme.c in the table:\n{stdout}"))
        .to_string();
    // Filename, then regions (3 columns), functions (3), lines: count, missed, cover.
    let fields: Vec<&str> = row.split_whitespace().collect();
    let lines: u64 = fields[7].parse().unwrap();
    let missed: u64 = fields[8].parse().unwrap();
    (row, lines - missed)
}

#[test]
fn corpus_coverage_as_html_and_table() {
    let tmp = TempDir::new("coverage");
    let binary = coverage_build(tmp.path());
    let corpus = corpus_of(&tmp, "corpus", &["CRAS", "BOOX", "A"]);
    // A saved finding's description beside it is no input.
    fs::write(corpus.join("CRAS.txt"), "kind: crash\n").unwrap();
    let html = tmp.path().join("html");
    let out = run(
        &binary,
        &[
            "coverage",
            "-i",
            corpus.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(html.join("index.html").is_file());
    let page = html
        .join("coverage")
        .join(
            root()
                .join("harnesses/crashme/crashme.c.html")
                .strip_prefix("/")
                .unwrap(),
        )
        .to_path_buf();
    assert!(page.is_file(), "no {}", page.display());
    assert!(String::from_utf8_lossy(&out.stderr).contains("index.html"));

    let (row, all) = text_report(&binary, &corpus);
    let cover: f64 = row
        .split_whitespace()
        .nth(9)
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert!(cover > 0.0 && cover < 100.0, "{row}");
    // "BOOX" alone reaches the 'B' branch's lines; "CRAS" counts though it crashes.
    let (_, a_only) = text_report(&binary, &corpus_of(&tmp, "a", &["A"]));
    let (_, crash_and_a) = text_report(&binary, &corpus_of(&tmp, "ca", &["CRAS", "A"]));
    assert!(crash_and_a > a_only, "{crash_and_a} <= {a_only}");
    assert!(all > crash_and_a, "{all} <= {crash_and_a}");
    // The runtime's default profile is not left in the working directory.
    assert!(!Path::new("default.profraw").exists());
}

#[test]
fn a_fuzzing_build_says_how_to_build_for_coverage() {
    let tmp = TempDir::new("coverage-refused");
    let corpus = corpus_of(&tmp, "corpus", &["A"]);
    assert_one_line_error(
        &fuzzer("crashme"),
        &["coverage", "-i", corpus.to_str().unwrap(), "--text"],
        "libafl_cc --coverage",
    );
    let empty = corpus_of(&tmp, "empty", &[]);
    let binary = coverage_build(tmp.path());
    assert_one_line_error(
        &binary,
        &["coverage", "-i", empty.to_str().unwrap(), "--text"],
        "no inputs in",
    );
}
