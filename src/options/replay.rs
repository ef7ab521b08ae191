//! `replay FILE...`: run inputs in a fresh process and say what they do; `triage OUT`: what a
//! campaign's findings are.

use std::{path::PathBuf, time::Duration};

use clap::Args;

use super::values::{parse_millis, DEFAULT_RSS_LIMIT_MB};

#[derive(Debug, Clone, Args)]
pub struct ReplayOptions {
    /// Inputs to run, each in a fresh process.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Run the files (or the files in each directory, by name) one after another in one
    /// process, as a flaky crash's sequence in `crashes-flaky/` was run.
    #[arg(long)]
    pub sequence: bool,
    /// Print nothing; only the exit status tells (used to triage crashes).
    #[arg(long, hide = true)]
    pub quiet: bool,
    /// Per-input timeout in milliseconds.
    #[arg(short = 't', long = "timeout", value_name = "MS", default_value = "1000", value_parser = parse_millis)]
    pub timeout: Duration,
    /// Memory limit in MiB: an input whose run goes over it is `OUT-OF-MEMORY` (0: no limit).
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_RSS_LIMIT_MB)]
    pub rss_limit_mb: u64,
    /// With a sanitizer allocator: a single allocation larger than this many MiB is
    /// `OUT-OF-MEMORY` (default: --rss-limit-mb; 0: no limit).
    #[arg(long, value_name = "MB")]
    pub malloc_limit_mb: Option<u64>,
    /// Do not look for memory leaks (LeakSanitizer builds look by default: `LEAK`).
    #[arg(long)]
    pub no_detect_leaks: bool,
}

#[derive(Debug, Clone, Args)]
pub struct TriageOptions {
    /// The campaign's output directory (`fuzz -o`).
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
    /// Per-input timeout in milliseconds, for findings described now (saved without one).
    #[arg(short = 't', long = "timeout", value_name = "MS", default_value = "1000", value_parser = parse_millis)]
    pub timeout: Duration,
    /// Memory limit in MiB for findings described now (0: none).
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_RSS_LIMIT_MB)]
    pub rss_limit_mb: u64,
}
