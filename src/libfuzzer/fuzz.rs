//! libFuzzer's fuzzing run on our campaign: the corpus directories are the seeds, new inputs
//! are copied into the first one (named by SHA-1), and the first finding stops the run with
//! libFuzzer's lines, artifact and exit code (with `-fork=N`, `-ignore_*` keep it going).
//! The campaign runs with a private output directory, removed at the end; a watcher in the
//! supervising process (`watch.rs`) turns its `fuzzer_stats` and finding directories into
//! libFuzzer's output.

use std::{fs, path::Path};

use clap::Parser;

use super::{watch::Watcher, Flags};
use crate::{
    campaign,
    options::{Cli, Command},
    target::stack,
};

pub fn run(flags: &Flags) -> Result<i32, String> {
    if flags.reports_missing_directory() {
        return Ok(1);
    }
    let work = std::env::temp_dir().join(format!("lafuzz-libfuzzer-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    let mut opts = match Cli::try_parse_from(native_command_line(flags, &work)) {
        Ok(Cli {
            command: Command::Fuzz(opts),
        }) => *opts,
        Ok(_) => unreachable!("the command line starts with `fuzz`"),
        Err(e) => return Err(e.render().to_string().lines().next().unwrap_or("").into()),
    };
    opts.empty_corpus_ok = true;
    // Each client silences what the mask says (see `harness::silence_output`).
    opts.silence = (flags.close_fd_mask & 1 != 0, flags.close_fd_mask & 2 != 0);
    if let Some(seed) = opts.seed {
        eprintln!("INFO: Seed: {seed}");
    }
    eprintln!(
        "INFO: fuzzing with lafuzz ({} core(s)); new inputs go to {}",
        opts.clients(),
        flags
            .paths
            .first()
            .map_or("nowhere".into(), |d| d.display().to_string())
    );
    // A client's crash report opens with libFuzzer's line, before its stack; unless crashes
    // are ignored, the first ends the run, and only its report is printed.
    stack::use_libfuzzer_words(flags.limits().timeout, !flags.goes_on_after_crashes());
    let mut watcher = Watcher::new(flags, &work);
    let ended = campaign::run_watched(opts, || watcher.stop_now());
    watcher.look();
    let stats = watcher.stats();
    let _ = fs::remove_dir_all(&work);
    let code = ended?;
    if let Some(code) = watcher.exit_code {
        if flags.print_final_stats {
            stats.print_final(watcher.new_units);
        }
        return Ok(code);
    }
    if code != 0 {
        return Ok(code);
    }
    stats.print("DONE");
    eprintln!(
        "Done {} runs in {} second(s)",
        stats.execs,
        watcher.start.elapsed().as_secs()
    );
    if flags.print_final_stats {
        stats.print_final(watcher.new_units);
    }
    Ok(0)
}

/// Our `fuzz` command line for these flags.
fn native_command_line(flags: &Flags, work: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["lafuzz", "fuzz", "--mode", "direct", "--quiet", "-o"]
        .map(String::from)
        .into();
    args.push(work.display().to_string());
    for dir in &flags.paths {
        args.extend(["-i".into(), dir.display().to_string()]);
    }
    for dict in &flags.dicts {
        args.extend(["-x".into(), dict.display().to_string()]);
    }
    let timeout_ms = flags.limits().timeout.as_millis().max(1);
    args.extend(["-t".into(), timeout_ms.to_string()]);
    args.extend(["--rss-limit-mb".into(), flags.rss_limit_mb.to_string()]);
    if let Some(mb) = flags.malloc_limit_mb {
        args.extend(["--malloc-limit-mb".into(), mb.to_string()]);
    }
    if let Some(len) = flags.max_len {
        args.extend(["--max-len".into(), len.to_string()]);
    }
    if let Some(seed) = flags.seed {
        args.extend(["--seed".into(), seed.to_string()]);
    }
    if let Some(runs) = flags.runs.filter(|&r| r > 0) {
        args.extend(["--runs".into(), runs.to_string()]);
    }
    if let Some(time) = flags.max_total_time {
        args.extend(["--max-time".into(), time.as_secs().to_string()]);
    }
    // One worker on no fixed core, as libFuzzer runs (ClusterFuzz runs several on one machine).
    let cores = cores_for(flags);
    if cores > 1 {
        args.extend(["--cores".into(), format!("0-{}", cores - 1)]);
    }
    if flags.only_ascii {
        args.push("--only-ascii".into());
    }
    args.push("--show-output".into());
    if !flags.detect_leaks {
        args.push("--no-detect-leaks".into());
    }
    if flags.use_value_profile {
        args.push("--value-profile".into());
    }
    args
}

/// Cores for `-fork=N`, or `-jobs=N` with `-workers=M` (libFuzzer's default workers:
/// min(jobs, cores / 2)); one campaign on them.
fn cores_for(flags: &Flags) -> u64 {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let wanted = if flags.fork > 0 {
        flags.fork
    } else if flags.jobs > 0 {
        if flags.workers > 0 {
            flags.workers
        } else {
            flags.jobs.min(available / 2)
        }
    } else {
        1
    };
    wanted.clamp(1, available)
}
