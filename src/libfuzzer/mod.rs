//! libFuzzer's contract, for infrastructure that drives fuzz targets that way (ClusterFuzz,
//! OSS-Fuzz, ClusterFuzzLite, FuzzBench): a binary called with `-flag=value` arguments and
//! paths, instead of one of our subcommands, behaves as libFuzzer 19 does, on our engine.
//! - directories: fuzz them (`fuzz.rs`: our campaign, libFuzzer's output and artifacts);
//! - files: run each once (or `-runs` times) and exit (`files.rs`);
//! - `-merge=1`, `-minimize_crash=1`, `-cleanse_crash=1`: our minimizers (`minimize/`).

mod files;
mod flags;
mod fuzz;
mod watch;

use std::{
    fs,
    path::{Path, PathBuf},
    time::Duration,
};

use clap::CommandFactory;

use crate::{
    minimize::{self, crash, sha1_name, Budget},
    options::Cli,
    target::{
        harness,
        isolated::{Limits, Outcome},
    },
};
pub use flags::Flags;

/// libFuzzer's exit code for an out-of-memory input (it has no flag for it).
const OOM_EXIT_CODE: i32 = 71;
/// libFuzzer's `-timeout=0`: no limit; a day stands for it.
const NO_TIMEOUT: Duration = Duration::from_secs(86_400);

/// True when the arguments (after the program's name) are libFuzzer's rather than one of our
/// subcommands: anything but nothing, a subcommand's name or a `--long` option.
pub fn is_libfuzzer_call(args: &[String]) -> bool {
    let Some(first) = args.first() else {
        return false;
    };
    let ours = Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == first)
        || first == "help";
    !ours && !first.starts_with("--") && first != "-h" && first != "-V"
}

/// Runs a libFuzzer command line; returns the exit code.
pub fn run(program: &str, args: &[String]) -> i32 {
    let flags = match flags::parse(args) {
        Ok(flags) => flags,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return 1;
        }
    };
    for note in &flags.notes {
        eprintln!("{note}");
    }
    if flags.help {
        eprint!("{}", flags::HELP.replace("PROGRAM", program));
        return 0;
    }
    let result = if flags.merge {
        merge(&flags)
    } else if flags.minimize_crash || flags.cleanse_crash {
        minimize_crash(&flags)
    } else if !flags.paths.is_empty() && flags.paths.iter().all(|p| p.is_file()) {
        files::run(program, &flags)
    } else {
        fuzz::run(&flags)
    };
    result.unwrap_or_else(|e| {
        eprintln!("ERROR: {e}");
        1
    })
}

impl Flags {
    fn limits(&self) -> Limits {
        Limits {
            timeout: self.timeout.unwrap_or(NO_TIMEOUT),
            rss_limit_mb: self.rss_limit_mb,
        }
    }

    /// Where an artifact of `kind` (`crash`, `timeout`, `oom`) with these bytes is written.
    fn artifact_path(&self, kind: &str, bytes: &[u8]) -> PathBuf {
        self.exact_artifact_path.clone().unwrap_or_else(|| {
            PathBuf::from(format!(
                "{}{kind}-{}",
                self.artifact_prefix,
                sha1_name(bytes)
            ))
        })
    }

    /// `-fork=N` with `-ignore_crashes=1`: fuzzing goes on after crashes (and leaks).
    fn goes_on_after_crashes(&self) -> bool {
        self.fork > 0 && self.ignore_crashes
    }

    /// As libFuzzer, a path that is not a directory where directories are wanted is an error
    /// (in libFuzzer's words); true when one was reported.
    fn reports_missing_directory(&self) -> bool {
        let missing = self.paths.iter().find(|dir| !dir.is_dir());
        if let Some(dir) = missing {
            eprintln!(
                "ERROR: The required directory \"{}\" does not exist",
                dir.display()
            );
        }
        missing.is_some()
    }

    /// Before running inputs in this process's children: the target's initializer, the malloc
    /// limit (`-malloc_limit_mb`, else `-rss_limit_mb`, as libFuzzer), `-detect_leaks`.
    fn set_up_harness(&self) {
        harness::set_up(
            self.malloc_limit_mb.unwrap_or(self.rss_limit_mb),
            self.detect_leaks,
        );
    }

    /// Reads an input, cut to `-max_len` as libFuzzer does.
    fn read_input(&self, path: &Path) -> Result<Vec<u8>, String> {
        let mut bytes =
            fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if let Some(max_len) = self.max_len {
            bytes.truncate(max_len as usize);
        }
        Ok(bytes)
    }
}

/// libFuzzer's kind of artifact for a failure, and its lines, and its exit code.
fn report(outcome: Outcome, flags: &Flags) -> (&'static str, i32) {
    let pid = std::process::id();
    let (kind, error, summary, code) = match outcome {
        Outcome::Timeout => (
            "timeout",
            format!("timeout after {} seconds", flags.limits().timeout.as_secs()),
            "timeout",
            flags.timeout_exitcode,
        ),
        Outcome::OutOfMemory(0) => (
            "oom",
            "out-of-memory (malloc over -malloc_limit_mb)".to_string(),
            "out-of-memory",
            OOM_EXIT_CODE,
        ),
        Outcome::OutOfMemory(mb) => (
            "oom",
            format!(
                "out-of-memory (used: {mb}Mb; exceeds: {}Mb)",
                flags.rss_limit_mb
            ),
            "out-of-memory",
            OOM_EXIT_CODE,
        ),
        Outcome::Leak => {
            // LeakSanitizer's report came first, from the process that ran the input.
            eprintln!("INFO: to ignore leaks on libFuzzer side use -detect_leaks=0.");
            return ("leak", flags.error_exitcode);
        }
        Outcome::Exit(_) => (
            "crash",
            "fuzz target exited".into(),
            "fuzz target exited",
            flags.error_exitcode,
        ),
        Outcome::Crash(_) | Outcome::Ok => (
            "crash",
            "deadly signal".into(),
            "deadly signal",
            flags.error_exitcode,
        ),
    };
    // A child of a run on files printed that line itself, before its stack (`stack.rs`).
    if !outcome.reported_by_child() {
        eprintln!("=={pid}== ERROR: libFuzzer: {error}");
    }
    eprintln!("SUMMARY: libFuzzer: {summary}");
    (kind, code)
}

/// Writes an artifact and says so as libFuzzer does (ClusterFuzz reads that line).
fn write_artifact(flags: &Flags, kind: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let path = flags.artifact_path(kind, bytes);
    fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!(
        "artifact_prefix='{}'; Test unit written to {}",
        flags.artifact_prefix,
        path.display()
    );
    Ok(path)
}

/// `-minimize_crash=1` / `-cleanse_crash=1 FILE`: the result goes to `-exact_artifact_path`
/// (else `minimized-from-SHA1` / `cleansed-from-SHA1` under `-artifact_prefix`).
fn minimize_crash(flags: &Flags) -> Result<i32, String> {
    let [input] = flags.paths.as_slice() else {
        return Err("-minimize_crash and -cleanse_crash take exactly one input file".into());
    };
    let bytes = flags.read_input(input)?;
    flags.set_up_harness();
    let limits = flags.limits();
    let mut budget = Budget::new(flags.max_total_time, flags.runs);
    let expected = crash::outcome_of(&bytes, budget.capped(limits))?;
    if !expected.is_failure() {
        eprintln!("ERROR: the input {} did not crash", input.display());
        return Ok(1);
    }
    let (what, result) = if flags.cleanse_crash {
        eprintln!(
            "CLEANSE_CRASH: cleansing {} ({} bytes)",
            input.display(),
            bytes.len()
        );
        (
            "cleansed",
            crash::cleanse(&bytes, expected, limits, &mut budget)?,
        )
    } else {
        eprintln!(
            "CRASH_MIN: minimizing crash input: '{}' ({} bytes)",
            input.display(),
            bytes.len()
        );
        let smallest = crash::shrink(&bytes, expected, limits, &mut budget, |smaller| {
            eprintln!(
                "CRASH_MIN: ({} bytes) caused a crash. Will try to minimize it further",
                smaller.len()
            )
        })?;
        ("minimized", smallest)
    };
    let path = flags.exact_artifact_path.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "{}{what}-from-{}",
            flags.artifact_prefix,
            sha1_name(&bytes)
        ))
    });
    fs::write(&path, &result).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!(
        "CRASH_MIN: failed to minimize beyond {} ({} bytes), exiting",
        path.display(),
        result.len()
    );
    Ok(0)
}

/// `-merge=1 OUT IN...`: the inputs of IN that add coverage are copied into OUT.
fn merge(flags: &Flags) -> Result<i32, String> {
    let Some((out, inputs)) = flags.paths.split_first() else {
        return Err("-merge=1 needs an output corpus directory and input directories".into());
    };
    if flags.reports_missing_directory() {
        return Ok(1);
    }
    flags.set_up_harness();
    let temporary_control;
    let control = match &flags.merge_control_file {
        Some(path) => path.as_path(),
        None => {
            temporary_control =
                std::env::temp_dir().join(format!("libFuzzerTemp.Merge{}.txt", std::process::id()));
            &temporary_control
        }
    };
    let mut budget = Budget::new(flags.max_total_time, None);
    let merged = minimize::corpus::merge(
        out,
        inputs,
        control,
        flags.limits(),
        &mut budget,
        |file, bytes, outcome| {
            eprintln!("MERGE-INNER: {} failed ({outcome:?})", file.display());
            let (kind, _) = report(outcome, flags);
            if let Err(e) = write_artifact(flags, kind, bytes) {
                eprintln!("WARNING: {e}");
            }
        },
    )?;
    if flags.merge_control_file.is_none() {
        let _ = fs::remove_file(control);
    }
    eprintln!(
        "MERGE-OUTER: {} new files with {} new features added; {} new coverage edges",
        merged.new_files, merged.new_features, merged.new_edges
    );
    Ok(0)
}
