//! The `replay` command: runs inputs in a fresh child process and reports what happened, so
//! one crashing input does not hide the others. Exit status: 1 if anything crashed, ran out
//! of memory or leaked, else 2 if anything timed out or exited, else 0.

use std::{
    fs,
    path::{Path, PathBuf},
    time::Duration,
};

use crate::{
    options::ReplayOptions,
    platform::output,
    target::{
        harness,
        isolated::{self, Limits, Outcome},
        stack::{self, signal_name},
    },
};

fn describe(outcome: Outcome, timeout: Duration) -> String {
    match outcome {
        Outcome::Ok => "ok".into(),
        Outcome::Crash(sig) => format!("CRASH (signal {sig}, {})", signal_name(sig)),
        Outcome::Timeout => format!("TIMEOUT (over {} ms)", timeout.as_millis()),
        Outcome::OutOfMemory(0) => "OUT-OF-MEMORY (an allocation over the malloc limit)".into(),
        Outcome::OutOfMemory(mb) => format!("OUT-OF-MEMORY ({mb} MiB resident)"),
        Outcome::Exit(code) => format!("EXIT (the target called exit({code}))"),
        Outcome::Leak => "LEAK (LeakSanitizer's report above)".into(),
    }
}

pub fn run(opts: &ReplayOptions) -> Result<i32, String> {
    let timeout = opts.timeout;
    // The children print their stack when they crash or time out, as libFuzzer does.
    stack::print_on_fatal_signals();
    harness::set_up(
        opts.malloc_limit_mb.unwrap_or(opts.rss_limit_mb),
        !opts.no_detect_leaks,
    );
    let limits = Limits {
        timeout,
        rss_limit_mb: opts.rss_limit_mb,
    };
    let mut outcomes = Vec::new();
    if opts.sequence {
        let mut inputs = Vec::new();
        for path in &opts.files {
            for file in sequence_files(path)? {
                inputs.push(read(&file)?);
            }
        }
        let inputs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let (outcome, _) = isolated::run(&inputs, limits, false)?;
        if !opts.quiet {
            println!(
                "sequence of {} input(s): {}",
                inputs.len(),
                describe(outcome, timeout)
            );
        }
        outcomes.push(outcome);
    } else {
        // `replay out/crashes/*` means the inputs, not their descriptions.
        let inputs = opts.files.iter().filter(|f| !output::is_description(f));
        for file in inputs {
            let (outcome, _) = isolated::run(&[&read(file)?], limits, false)?;
            if !opts.quiet {
                println!("{}: {}", file.display(), describe(outcome, timeout));
            }
            outcomes.push(outcome);
        }
    }
    let failed = outcomes.iter().filter(|o| **o != Outcome::Ok).count();
    if !opts.quiet && !opts.sequence {
        println!("{} input(s), {failed} failed", outcomes.len());
    }
    Ok(
        if outcomes.iter().any(|o| {
            matches!(
                o,
                Outcome::Crash(_) | Outcome::OutOfMemory(_) | Outcome::Leak
            )
        }) {
            1
        } else if failed > 0 {
            2
        } else {
            0
        },
    )
}

fn read(file: &Path) -> Result<Vec<u8>, String> {
    fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))
}

/// A sequence argument: a file, or a directory's inputs in name order.
fn sequence_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    crate::platform::output::collect_files(path, &mut files)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(files)
}
