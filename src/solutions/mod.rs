//! Crashes and hangs. The objective feedback decides (`feedback.rs`: new coverage among the
//! solutions of one kind, AFL-style, so a campaign keeps one file per distinct bug path); the
//! state's solutions corpus saves (`corpus.rs`, the one writer of `crashes/`, `hangs/` and
//! `crashes-flaky/`, which triages in-process crashes in a fresh process first, `triage.rs`);
//! the fuzzer's input filter skips inputs already known to crash or hang (`filter.rs`).

mod corpus;
mod feedback;
mod filter;
mod triage;

use std::collections::HashSet;

use libafl::executors::ExitKind;
use serde::{Deserialize, Serialize};

pub use corpus::SolutionsOnDisk;
pub use feedback::NewSolutions;
pub use filter::SkipKnownSolutions;
pub use triage::Triage;

/// What kind of solution a testcase is: the feedback attaches it, the corpus files by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SolutionKind {
    Crash,
    Hang,
}
libafl_bolts::impl_serdeany!(SolutionKind);

impl SolutionKind {
    fn of(exit: &ExitKind) -> Option<Self> {
        match exit {
            ExitKind::Crash | ExitKind::Oom => Some(Self::Crash),
            ExitKind::Timeout => Some(Self::Hang),
            _ => None,
        }
    }

    /// The state metadata holding the coverage of saved solutions of this kind.
    fn coverage_metadata_name(self) -> &'static str {
        match self {
            Self::Crash => "lafuzz_crash_coverage",
            Self::Hang => "lafuzz_hang_coverage",
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

fn input_hash(input: &[u8]) -> u64 {
    libafl_bolts::hash_std(input)
}
