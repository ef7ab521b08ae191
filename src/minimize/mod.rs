//! Crash and corpus minimization, shared by the native `minimize` / `minimize-corpus`
//! commands and the libFuzzer front end (`-minimize_crash=1`, `-cleanse_crash=1`, `-merge=1`):
//! AFL++'s `afl-tmin` and `afl-cmin`. Every input runs in a forked child (`target/isolated.rs`), so
//! a crashing input never ends the minimization.

pub mod corpus;
pub mod crash;

use std::{
    fs,
    time::{Duration, Instant},
};

use crate::{
    options::{MinimizeCorpusOptions, MinimizeOptions, RunLimits},
    platform::output,
    target::{
        harness,
        isolated::{Limits, Outcome},
    },
};

impl From<&RunLimits> for Limits {
    fn from(limits: &RunLimits) -> Self {
        Self {
            timeout: limits.timeout,
            rss_limit_mb: limits.rss_limit_mb,
        }
    }
}

/// `minimize FILE -o OUT`.
pub fn run_minimize(opts: &MinimizeOptions) -> Result<i32, String> {
    let input =
        fs::read(&opts.input).map_err(|e| format!("cannot read {}: {e}", opts.input.display()))?;
    let limits = Limits::from(&opts.limits);
    harness::initialize();
    let expected = crash::outcome_of(&input, limits)?;
    if !expected.is_failure() {
        return Err(format!(
            "{} does not crash (it {}): nothing to minimize",
            opts.input.display(),
            if expected == Outcome::Timeout {
                "times out"
            } else {
                "runs fine"
            }
        ));
    }
    println!(
        "lafuzz: minimizing {} ({} bytes, {expected:?})",
        opts.input.display(),
        input.len()
    );
    let mut budget = Budget::new(opts.max_time, opts.runs);
    let smallest = crash::shrink(&input, expected, limits, &mut budget, |smaller| {
        println!("lafuzz: {} bytes still fail", smaller.len());
    })?;
    output::write_atomic(&opts.output, &smallest)
        .map_err(|e| format!("cannot write {}: {e}", opts.output.display()))?;
    println!(
        "lafuzz: {} bytes -> {} bytes: {}",
        input.len(),
        smallest.len(),
        opts.output.display()
    );
    Ok(0)
}

/// `minimize-corpus -i DIR -o OUT`.
pub fn run_minimize_corpus(opts: &MinimizeCorpusOptions) -> Result<i32, String> {
    for dir in &opts.inputs {
        if !dir.is_dir() {
            return Err(format!("corpus {} is not a directory", dir.display()));
        }
    }
    fs::create_dir_all(&opts.output)
        .map_err(|e| format!("cannot create {}: {e}", opts.output.display()))?;
    harness::initialize();
    let control = opts.output.join(".lafuzz-merge-control");
    let mut budget = Budget::new(None, None);
    let merged = corpus::merge(
        &opts.output,
        &opts.inputs,
        &control,
        Limits::from(&opts.limits),
        &mut budget,
        |file, _, outcome| println!("lafuzz: {} fails ({outcome:?}); not kept", file.display()),
    )?;
    let _ = fs::remove_file(control);
    println!(
        "lafuzz: kept {} new input(s) with {} edges ({} were already in {}); {} failing input(s) left out",
        merged.new_files,
        merged.edges,
        merged.initial,
        opts.output.display(),
        merged.failed
    );
    Ok(0)
}

/// How much work a minimization may do: executions and wall time, whichever ends first.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    deadline: Option<Instant>,
    runs_left: Option<u64>,
}

impl Budget {
    pub fn new(max_time: Option<Duration>, runs: Option<u64>) -> Self {
        Self {
            deadline: max_time.map(|t| Instant::now() + t),
            runs_left: runs,
        }
    }

    /// A run's limits with its timeout cut to the time the budget has left (a hang must not
    /// outlast it).
    pub fn capped(&self, limits: Limits) -> Limits {
        let timeout = self.deadline.map_or(limits.timeout, |d| {
            limits.timeout.min(
                d.saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1)),
            )
        });
        Limits { timeout, ..limits }
    }

    /// Takes one execution from the budget; false when none is left.
    pub fn take_run(&mut self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        match &mut self.runs_left {
            Some(0) => false,
            Some(n) => {
                *n -= 1;
                true
            }
            None => true,
        }
    }
}

/// libFuzzer's name for an input: the SHA-1 of its bytes, in hex.
pub fn sha1_name(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_names_match_libfuzzer() {
        // As `printf abc | sha1sum` prints it.
        assert_eq!(
            sha1_name(b"abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }

    #[test]
    fn budget_counts_runs() {
        let mut budget = Budget::new(None, Some(2));
        assert!(budget.take_run() && budget.take_run() && !budget.take_run());
        assert!(!Budget::new(Some(Duration::ZERO), None).take_run());
    }
}
