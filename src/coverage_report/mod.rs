//! The `coverage` command, as `cargo fuzz coverage`: runs every input of the corpus
//! directories through the harness of a `libafl_cc --coverage` build, each in a forked child
//! (`target/isolated.rs`: a crashing or hanging input ends only its child, and the lines it ran
//! before still count), then merges the profile and reports with LLVM's tools (`llvm.rs`). Only
//! the target's own sources are in the report: the fuzzer's code carries no coverage mapping.

mod llvm;

use std::{
    fs,
    path::{Path, PathBuf},
};

use crate::{
    options::CoverageOptions,
    platform::output,
    target::{
        harness,
        isolated::{self, Limits, Outcome},
        profile,
    },
};

/// How often a progress line is printed.
const PROGRESS_EVERY: usize = 1000;

pub fn run(opts: &CoverageOptions) -> Result<i32, String> {
    if !profile::linked() {
        return Err(
            "this binary has no coverage instrumentation: build the target with \
                    `libafl_cc --coverage` (or `libafl_cxx --coverage`) for a coverage report"
                .into(),
        );
    }
    let tools = llvm::Tools::find()?;
    let inputs = corpus_files(&opts.inputs)?;
    let binary =
        std::env::current_exe().map_err(|e| format!("cannot find this binary's path: {e}"))?;
    let scratch = Scratch::new()?;
    profile::write_into(&scratch.0)?;
    harness::set_up(opts.limits.rss_limit_mb, false);
    let failed = run_all(&inputs, opts)?;
    // This process's own write at exit goes nowhere (its counters are in every child's).
    profile::discard_at_exit();
    let raw = raw_profiles(&scratch.0)?;
    let merged = scratch.0.join("merged.profdata");
    tools.merge(&raw, &merged)?;
    if opts.text {
        tools.text(&binary, &merged)?;
    }
    if let Some(dir) = &opts.html {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        tools.html(&binary, &merged, dir)?;
        eprintln!(
            "lafuzz: coverage of {} input(s) ({failed} crashed or timed out): {}",
            inputs.len(),
            dir.join("index.html").display()
        );
    }
    Ok(0)
}

/// Every input under the directories, recursively, in a stable order; hidden files and the
/// descriptions beside saved findings (`NAME.txt`) left out.
fn corpus_files(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for dir in dirs {
        if !dir.is_dir() {
            return Err(format!("{} is not a directory", dir.display()));
        }
        output::collect_files(dir, &mut files)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    }
    files.retain(|f| !output::is_description(f));
    if files.is_empty() {
        let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(format!("no inputs in {}", names.join(", ")));
    }
    Ok(files)
}

/// Runs each input in its own child; returns how many did not end normally.
fn run_all(inputs: &[PathBuf], opts: &CoverageOptions) -> Result<usize, String> {
    let limits = Limits {
        timeout: opts.limits.timeout,
        rss_limit_mb: opts.limits.rss_limit_mb,
    };
    let mut failed = 0;
    for (done, file) in inputs.iter().enumerate() {
        let data = fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let (outcome, _) = isolated::run(&[&data], limits, false)?;
        if outcome != Outcome::Ok {
            failed += 1;
        }
        if (done + 1) % PROGRESS_EVERY == 0 {
            eprintln!("lafuzz: coverage: {}/{} inputs run", done + 1, inputs.len());
        }
    }
    Ok(failed)
}

/// The raw profiles the children wrote (one, merged by the runtime; any left by a child killed
/// while writing are taken too, llvm-profdata says if one is unreadable).
fn raw_profiles(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let raw: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "profraw"))
        .collect();
    if raw.is_empty() {
        return Err(
            "no profile was written: was the target built with `libafl_cc --coverage`?".into(),
        );
    }
    Ok(raw)
}

/// A scratch directory for the profiles, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!("lafuzz-coverage-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
