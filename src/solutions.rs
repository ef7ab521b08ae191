//! Crash and hang triage: an input that crashes or hangs is saved to `crashes/` or `hangs/`
//! only when its coverage is new among the solutions of that kind (AFL-style dedup), so a
//! campaign stores one file per distinct bug path, not one per crashing execution.
//!
//! In the in-process modes one input can leave state behind for the next, so a crash is first
//! run again alone in a fresh process: reproducible crashes go to `crashes/`, the others to
//! `crashes-flaky/<name>/` with the inputs that ran before them in that client.

use std::{
    borrow::Cow,
    collections::HashSet,
    fs, io,
    marker::PhantomData,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use libafl::{
    corpus::Testcase,
    executors::ExitKind,
    feedbacks::{Feedback, StateInitializer},
    fuzzer::InputFilter,
    inputs::HasTargetBytes,
    observers::MapObserver,
    Error, HasMetadata, HasNamedMetadata,
};
use libafl_bolts::{
    tuples::{Handle, Handled, MatchName, MatchNameRef},
    Named,
};
use serde::{Deserialize, Serialize};

use crate::{harness, output};

/// Re-runs a crashing input alone in a fresh process of this same binary.
#[derive(Debug, Clone)]
pub struct Triage {
    pub exe: PathBuf,
    pub timeout_ms: u64,
}

impl Triage {
    pub fn for_this_binary(timeout_ms: u64) -> io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            timeout_ms,
        })
    }

    /// True when `input` crashes on its own (`replay` exits with 1 for a crash).
    fn reproduces(&self, input: &Path) -> bool {
        Command::new(&self.exe)
            .args(["replay", "--quiet", "-t", &self.timeout_ms.to_string()])
            .arg(input)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.code() == Some(1))
    }
}

/// Highest hit-count bucket seen per map entry among the saved solutions of one kind.
/// Kept in the fuzzer state, so it survives the client restart that follows every crash.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SolutionCoverage {
    max: Vec<u8>,
    saved_any: bool,
}
libafl_bolts::impl_serdeany!(SolutionCoverage);

impl SolutionCoverage {
    /// Merges `map` in; true when it has an entry above everything seen so far
    /// (or when nothing of this kind was saved yet).
    pub fn merge(&mut self, map: impl Iterator<Item = u8>) -> bool {
        let mut new = !self.saved_any;
        for (i, value) in map.enumerate() {
            if i >= self.max.len() {
                self.max.resize(i + 1, 0);
            }
            if value > self.max[i] {
                self.max[i] = value;
                new = true;
            }
        }
        self.saved_any = true;
        new
    }
}

/// Hashes of the inputs that crashed or hung in this client, kept in the state so a restarted
/// in-process client still knows them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct KnownSolutions {
    hashes: HashSet<u64>,
}
libafl_bolts::impl_serdeany!(KnownSolutions);

fn input_hash(input: &[u8]) -> u64 {
    libafl_bolts::hash_std(input)
}

/// The fuzzer's input filter: mutated inputs already known to crash or hang are not run again.
/// Once a bug is found, mutations (comparison solving above all) keep producing the same input,
/// and each rerun costs an in-process client a restart and any mode a whole timeout per hang.
/// Calibration and tracing run corpus entries directly, never through this filter.
#[derive(Debug, Default, Clone, Copy)]
pub struct SkipKnownSolutions;

impl<EM, I, S> InputFilter<EM, I, S> for SkipKnownSolutions
where
    I: HasTargetBytes,
    S: HasMetadata,
{
    fn should_execute(&mut self, input: &I, state: &mut S, _mgr: &mut EM) -> Result<bool, Error> {
        Ok(match state.metadata_map().get::<KnownSolutions>() {
            Some(known) if !known.hashes.is_empty() => {
                !known.hashes.contains(&input_hash(&input.target_bytes()))
            }
            _ => true,
        })
    }
}

/// Enough for every distinct solution of a long campaign; past it, they just run.
const MAX_KNOWN_SOLUTIONS: usize = 1 << 16;

/// What kind of solution the last interesting execution was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SolutionKind {
    Crash,
    Hang,
}

impl SolutionKind {
    fn of(exit: &ExitKind) -> Option<Self> {
        match exit {
            ExitKind::Crash | ExitKind::Oom => Some(Self::Crash),
            ExitKind::Timeout => Some(Self::Hang),
            _ => None,
        }
    }
    fn metadata_name(self) -> &'static str {
        match self {
            Self::Crash => "lafuzz_crash_coverage",
            Self::Hang => "lafuzz_hang_coverage",
        }
    }
}

/// The objective feedback: crashes and hangs with new coverage, written to disk.
#[derive(Debug)]
pub struct SaveNewSolutions<C, O> {
    map: Handle<C>,
    crashes: PathBuf,
    flaky_crashes: PathBuf,
    hangs: PathBuf,
    triage: Option<Triage>,
    last: Option<SolutionKind>,
    phantom: PhantomData<O>,
}

impl<C, O> SaveNewSolutions<C, O>
where
    C: Named + Handled,
{
    /// `triage`: re-run crashes in a fresh process before reporting them.
    pub fn new(map_observer: &C, out: &Path, triage: Option<Triage>) -> Self {
        Self {
            map: map_observer.handle(),
            crashes: output::crashes_dir(out),
            flaky_crashes: output::flaky_crashes_dir(out),
            hangs: output::hangs_dir(out),
            triage,
            last: None,
            phantom: PhantomData,
        }
    }
}

impl<C, O> SaveNewSolutions<C, O> {
    fn save_crash(&self, bytes: &[u8]) -> io::Result<()> {
        let name = output::input_name(bytes);
        let Some(triage) = &self.triage else {
            return fs::write(self.crashes.join(&name), bytes);
        };
        // Hidden until triaged: users and the monitor only see decided crashes.
        let pending = self.crashes.join(format!(".triage-{name}"));
        fs::write(&pending, bytes)?;
        if triage.reproduces(&pending) {
            return fs::rename(pending, self.crashes.join(&name));
        }
        let sequence = self.flaky_crashes.join(&name);
        fs::create_dir_all(&sequence)?;
        let mut recent = harness::recent_inputs();
        if recent.last().map(Vec::as_slice) != Some(bytes) {
            recent.push(bytes.to_vec());
        }
        for (i, input) in recent.iter().enumerate() {
            fs::write(sequence.join(format!("{i:04}")), input)?;
        }
        fs::remove_file(pending)
    }
}

impl<C, O> Named for SaveNewSolutions<C, O> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("SaveNewSolutions");
        &NAME
    }
}

impl<C, O, S> StateInitializer<S> for SaveNewSolutions<C, O> {}

impl<C, O, EM, I, OT, S> Feedback<EM, I, OT, S> for SaveNewSolutions<C, O>
where
    C: AsRef<O>,
    O: MapObserver<Entry = u8>,
    OT: MatchName,
    I: HasTargetBytes,
    S: HasNamedMetadata + HasMetadata,
{
    fn is_interesting(
        &mut self,
        state: &mut S,
        _manager: &mut EM,
        input: &I,
        observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, Error> {
        self.last = None;
        let Some(kind) = SolutionKind::of(exit_kind) else {
            return Ok(false);
        };
        let known = state.metadata_or_insert_with(KnownSolutions::default);
        if known.hashes.len() < MAX_KNOWN_SOLUTIONS {
            known.hashes.insert(input_hash(&input.target_bytes()));
        }
        // The comparison-tracing executor runs without the coverage observer: a crash there
        // has no coverage to compare, and is new only if it is the first of its kind.
        let coverage: Vec<u8> = observers.get(&self.map).map_or_else(Vec::new, |observer| {
            let map = observer.as_ref();
            (0..map.usable_count()).map(|i| map.get(i)).collect()
        });
        let seen =
            state.named_metadata_or_insert_with(kind.metadata_name(), SolutionCoverage::default);
        let new = seen.merge(coverage.into_iter());
        if new {
            self.last = Some(kind);
        }
        Ok(new)
    }

    fn append_metadata(
        &mut self,
        _state: &mut S,
        _manager: &mut EM,
        _observers: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        let Some(kind) = self.last.take() else {
            return Ok(());
        };
        let Some(input) = testcase.input() else {
            return Ok(());
        };
        let bytes = input.target_bytes();
        let saved = match kind {
            SolutionKind::Crash => self.save_crash(&bytes),
            SolutionKind::Hang => fs::write(self.hangs.join(output::input_name(&bytes)), &*bytes),
        };
        saved.map_err(|e| Error::os_error(e, "cannot save a solution"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_solution_is_always_new_even_without_coverage() {
        let mut seen = SolutionCoverage::default();
        assert!(seen.merge([0u8, 0, 0].into_iter()));
        assert!(!seen.merge([0u8, 0, 0].into_iter()));
    }

    #[test]
    fn only_higher_buckets_are_new() {
        let mut seen = SolutionCoverage::default();
        assert!(seen.merge([1u8, 0, 2].into_iter()));
        assert!(!seen.merge([1u8, 0, 1].into_iter()));
        assert!(seen.merge([1u8, 4, 0].into_iter()));
        assert!(!seen.merge([1u8, 4, 2].into_iter()));
    }
}
