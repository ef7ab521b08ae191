//! `minimize FILE` (AFL++'s `afl-tmin`) and `minimize-corpus` (`afl-cmin`).

use std::{path::PathBuf, time::Duration};

use clap::Args;

use super::values::{parse_millis, parse_seconds, DEFAULT_RSS_LIMIT_MB};

/// Limits of each run of the target, shared by both commands.
#[derive(Debug, Clone, Args)]
pub struct RunLimits {
    /// Per-input timeout in milliseconds.
    #[arg(short = 't', long = "timeout", value_name = "MS", default_value = "1000", value_parser = parse_millis)]
    pub timeout: Duration,
    /// Memory limit in MiB (0: none).
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_RSS_LIMIT_MB)]
    pub rss_limit_mb: u64,
}

#[derive(Debug, Clone, Args)]
pub struct MinimizeOptions {
    /// The crashing (or out-of-memory) input.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Where the smallest input that still fails the same way is written.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Stop after this many seconds (default: when no byte can be removed).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub max_time: Option<Duration>,
    /// Stop after this many runs of the target.
    #[arg(long, value_name = "N")]
    pub runs: Option<u64>,
    #[command(flatten)]
    pub limits: RunLimits,
}

#[derive(Debug, Clone, Args)]
pub struct MinimizeCorpusOptions {
    /// Corpus directory to minimize (repeatable).
    #[arg(short = 'i', long = "input", value_name = "DIR", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output directory: inputs already there are kept and counted first; the inputs that add
    /// coverage are copied in, named by their SHA-1.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub limits: RunLimits,
}
