//! Crashes and hangs. The objective feedback decides (`feedback.rs`: new coverage among the
//! solutions of one kind, AFL-style, so a campaign keeps one file per distinct bug path, and
//! the first crash of each bucket, see `triage/`, which describes each one it keeps, within
//! the time `rerun_time.rs` allows); the
//! state's solutions corpus saves (`corpus.rs`, the one writer of `crashes/`, `hangs/`,
//! `ooms/`, `leaks/` and `crashes-flaky/`, and of each finding's description); the fuzzer's
//! input filter skips inputs already known to crash or hang (`filter.rs`).

mod corpus;
mod coverage;
mod feedback;
mod filter;
mod rerun_time;

use std::collections::HashSet;

use libafl::executors::ExitKind;
use serde::{Deserialize, Serialize};

use crate::target::{harness, leaks};

pub use corpus::{save_killed_clients_input, SolutionsOnDisk};
pub use feedback::NewSolutions;
pub use filter::SkipKnownSolutions;

/// A finding run again alone and described (`triage/`): the objective attaches it, the
/// corpus writes its text beside the input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Described {
    /// It failed again alone; an in-process crash that did not is flaky.
    pub reproduced: bool,
    pub text: String,
}
libafl_bolts::impl_serdeany!(Described);

/// What kind of solution a testcase is: the feedback attaches it, the corpus files by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SolutionKind {
    Crash,
    Hang,
    /// Over the memory limit: a fork-mode child, or an in-process input's allocation over the
    /// malloc limit (a client over the RSS limit is killed and its restarter saves its input).
    OutOfMemory,
    /// Memory nothing points to after the input ran (LeakSanitizer's check, `target/leaks.rs`).
    Leak,
}
libafl_bolts::impl_serdeany!(SolutionKind);

impl SolutionKind {
    fn of(exit: &ExitKind) -> Option<Self> {
        match exit {
            // The in-process modes end a leaking input as a crash (see `modes/in_process.rs`).
            ExitKind::Crash if leaks::last_run_leaked() => Some(Self::Leak),
            // Ended by the malloc limit (see `modes/watchdog`).
            ExitKind::Crash if harness::ran_over_malloc_limit() => Some(Self::OutOfMemory),
            ExitKind::Crash => Some(Self::Crash),
            ExitKind::Oom => Some(Self::OutOfMemory),
            ExitKind::Timeout => Some(Self::Hang),
            _ => None,
        }
    }

    /// A map entry as it counts when deciding whether a solution of this kind is new. A hang
    /// counts by the edges it reached, not how often (AFL++'s `simplify_trace` for its timeout
    /// map): where it was stopped in an endless loop is chance, and each hang counted new costs
    /// a run of up to the hang timeout to describe (Oniguruma's real hangs took 14 s a minute).
    fn novelty_entry(self, hits: u8) -> u8 {
        match self {
            Self::Hang => u8::from(hits != 0),
            _ => hits,
        }
    }

    /// The state metadata holding the coverage of saved solutions of this kind.
    fn coverage_metadata_name(self) -> &'static str {
        match self {
            Self::Crash => "lafuzz_crash_coverage",
            Self::Hang => "lafuzz_hang_coverage",
            Self::OutOfMemory => "lafuzz_oom_coverage",
            Self::Leak => "lafuzz_leak_coverage",
        }
    }
}

/// Hashes of the inputs that crashed or hung in this client, kept in the state so a restarted
/// in-process client still knows them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct KnownSolutions {
    hashes: HashSet<u64>,
}
libafl_bolts::impl_serdeany!(KnownSolutions);

/// Enough for every distinct solution of a long campaign; past it, they just run.
const MAX_KNOWN_SOLUTIONS: usize = 1 << 16;

impl KnownSolutions {
    fn insert(&mut self, input: &[u8]) {
        if self.hashes.len() < MAX_KNOWN_SOLUTIONS {
            self.hashes.insert(input_hash(input));
        }
    }

    fn contains(&self, input: &[u8]) -> bool {
        !self.hashes.is_empty() && self.hashes.contains(&input_hash(input))
    }
}

/// Marks as known what the output directory already holds (files are named by their input's
/// hash, see `output::input_name`): a client started afresh does not run them again, which
/// for an input that takes a client over the memory limit would be another restart.
pub fn remember_saved(state: &mut impl libafl::HasMetadata, out: &std::path::Path) {
    let known = state.metadata_or_insert_with(KnownSolutions::default);
    let dirs = [
        crate::platform::output::crashes_dir(out),
        crate::platform::output::flaky_crashes_dir(out),
        crate::platform::output::hangs_dir(out),
        crate::platform::output::ooms_dir(out),
    ];
    for file in dirs
        .iter()
        .flat_map(|dir| crate::platform::output::visible_entries(dir))
    {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        if let Ok(hash) = u64::from_str_radix(&name, 16) {
            if known.hashes.len() < MAX_KNOWN_SOLUTIONS {
                known.hashes.insert(hash);
            }
        }
    }
}

/// True when some input is known in this client to crash or hang.
pub fn any_known(state: &impl libafl::HasMetadata) -> bool {
    state
        .metadata_map()
        .get::<KnownSolutions>()
        .is_some_and(|known| !known.hashes.is_empty())
}

/// True when `input` is known in this client to crash or hang.
pub fn is_known(state: &impl libafl::HasMetadata, input: &[u8]) -> bool {
    state
        .metadata_map()
        .get::<KnownSolutions>()
        .is_some_and(|known| known.contains(input))
}

fn input_hash(input: &[u8]) -> u64 {
    libafl_bolts::hash_std(input)
}
