//! A campaign as its clients see it: the options, and what was checked and read before start
//! (`campaign/prepare.rs` makes it once; every client process gets a copy).

use std::path::PathBuf;

use libafl::mutators::Tokens;

use crate::options::FuzzOptions;

/// A campaign as its clients see it: the options and what was checked and read before start.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    pub opts: FuzzOptions,
    pub output: PathBuf,
    /// The `-x` dictionaries' tokens.
    pub tokens: Tokens,
    /// Every seed file found in the `-i` directories (and a previous run's queue).
    pub seeds: Vec<PathBuf>,
    /// Entries in the coverage map: the linked harness's counters, or what the standalone
    /// target reports.
    pub map_size: usize,
    /// `--cmplog`: the separate build that comparison tracing runs.
    pub cmplog_target: Option<TracerTarget>,
    /// The seeds are text and `--only-ascii` is off (Grimoire inserts dictionary tokens as
    /// they are): new entries are generalized and get Grimoire's mutations.
    pub grimoire: bool,
}

/// A standalone build with comparison logging that the tracing stage runs out of process, as
/// AFL++'s `-c` binary: its command line and the coverage map size it reported.
#[derive(Debug, Clone)]
pub struct TracerTarget {
    pub command: Vec<String>,
    pub map_size: usize,
}
