//! Deciding which crashes and hangs are new: the objective feedback.

use std::{
    borrow::Cow,
    marker::PhantomData,
    path::{Path, PathBuf},
    time::Instant,
};

use libafl::{
    corpus::Testcase,
    executors::ExitKind,
    feedbacks::{Feedback, StateInitializer},
    inputs::HasTargetBytes,
    observers::MapObserver,
    state::HasStartTime,
    Error, HasMetadata, HasNamedMetadata,
};
use libafl_bolts::{
    current_time,
    tuples::{Handle, Handled, MatchName, MatchNameRef},
    Named,
};

use super::{
    coverage::SolutionCoverage,
    rerun_time::{
        confirmations_over_budget, CrashPaths, HangConfirmations, RerunTime, MAX_CRASH_PATHS,
    },
    Described, KnownSolutions, SolutionKind,
};
use crate::{
    platform::output,
    triage::{buckets, Describer, Rerun},
};

/// The objective: a crash, hang, out-of-memory input or leak whose coverage is new among the
/// solutions of its kind, or a crash in a bucket the campaign has not saved yet (see
/// `triage/`). It remembers every failing input (for the input filter), describes what it
/// keeps and tags it with its [`SolutionKind`] and [`Described`]; saving them is the
/// solutions corpus's job.
#[derive(Debug)]
pub struct NewSolutions<C, O> {
    map: Handle<C>,
    last: Option<(SolutionKind, Option<Described>)>,
    /// How findings are run again to be described; the output directory holds the buckets.
    describer: Describer,
    /// Inputs time out sooner than the describer's timeout (`-t auto`, see
    /// `engine/exec_timeout.rs`): a hang is one that also times out there.
    confirms_hangs: bool,
    out: PathBuf,
    phantom: PhantomData<O>,
}

impl<C, O> NewSolutions<C, O>
where
    C: Named + Handled,
{
    pub fn new(map_observer: &C, describer: Describer, confirms_hangs: bool, out: &Path) -> Self {
        Self {
            map: map_observer.handle(),
            last: None,
            describer,
            confirms_hangs,
            out: out.to_path_buf(),
            phantom: PhantomData,
        }
    }
}

impl<C, O> NewSolutions<C, O> {
    /// Runs `input` again alone to describe it, the time it takes counted in `time`.
    fn describe(&self, input: &[u8], time: &mut RerunTime) -> Result<Rerun, Error> {
        let started = Instant::now();
        let pending = buckets::dir(&self.out).join(format!(".describing-{}", std::process::id()));
        std::fs::create_dir_all(buckets::dir(&self.out))?;
        output::write_atomic(&pending, input)?;
        let rerun = self.describer.run(&pending);
        let _ = std::fs::remove_file(&pending);
        time.record(started.elapsed());
        Ok(rerun)
    }

    /// An input that timed out under the timeout chosen from the seeds, with coverage new
    /// among the hangs, run again under the hang timeout (AFL++'s confirmation; as AFL++, its
    /// coverage is merged first, so one slow path is run again once): `None` when it ran to
    /// its end (not a hang), else what it did: a hang, or what more time let it become (a
    /// crash, an input over the memory limit).
    fn confirm_hang(
        &self,
        input: &[u8],
        time: &mut RerunTime,
    ) -> Result<Option<(SolutionKind, Rerun)>, Error> {
        let rerun = self.describe(input, time)?;
        if !rerun.failed {
            return Ok(None);
        }
        let kind = match rerun.description.kind.as_str() {
            "timeout" => SolutionKind::Hang,
            "out-of-memory" => SolutionKind::OutOfMemory,
            "memory leak" => SolutionKind::Leak,
            _ => SolutionKind::Crash,
        };
        Ok(Some((kind, rerun)))
    }

    /// Whether to keep a failing input, and its description when kept. A crash with new
    /// coverage or in a new bucket is kept; any other kind only with new coverage. `rerun`:
    /// the input was already run again alone.
    fn classify<S: HasMetadata + HasStartTime>(
        &self,
        state: &mut S,
        (kind, rerun): (SolutionKind, Option<Rerun>),
        input: &[u8],
        path: u64,
        new_coverage: bool,
    ) -> Result<(bool, Option<Described>), Error> {
        let crash = kind == SolutionKind::Crash;
        if !new_coverage && !crash {
            return Ok((false, None));
        }
        let running = current_time().saturating_sub(*state.start_time());
        let known = state.metadata_or_insert_with(CrashPaths::default);
        let counted_unrun = crash && !new_coverage && known.over_budget(running);
        if let Some(bucket) = known.buckets.get(&path).filter(|_| counted_unrun) {
            // An empty bucket: the path's crash did not fail alone.
            if !bucket.is_empty() {
                buckets::record_hit(&self.out, bucket)?;
            }
            return Ok((false, None));
        }
        let rerun = match rerun {
            Some(rerun) => rerun,
            None => {
                let time = &mut state.metadata_or_insert_with(CrashPaths::default).described;
                self.describe(input, time)?
            }
        };
        let described = Described {
            reproduced: rerun.failed,
            text: rerun.description.to_text(),
        };
        // One that did not fail alone (a flaky crash) has no bucket; it is kept with new
        // coverage only.
        let bucket = rerun.failed.then(|| rerun.description.bucket());
        let new_bucket = match &bucket {
            Some(bucket) => buckets::claim(&self.out, bucket)?,
            None => false,
        };
        if crash {
            if let Some(bucket) = &bucket {
                buckets::record_hit(&self.out, bucket)?;
            }
            let known = state.metadata_or_insert_with(CrashPaths::default);
            if known.buckets.len() < MAX_CRASH_PATHS {
                known.buckets.insert(path, bucket.unwrap_or_default());
            }
        }
        Ok((new_coverage || (crash && new_bucket), Some(described)))
    }
}

impl<C, O> Named for NewSolutions<C, O> {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("NewSolutions");
        &NAME
    }
}

impl<C, O, S> StateInitializer<S> for NewSolutions<C, O> {}

impl<C, O, EM, I, OT, S> Feedback<EM, I, OT, S> for NewSolutions<C, O>
where
    C: AsRef<O>,
    O: MapObserver<Entry = u8>,
    OT: MatchName,
    I: HasTargetBytes,
    S: HasNamedMetadata + HasMetadata + HasStartTime,
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
        let Some(mut kind) = SolutionKind::of(exit_kind) else {
            return Ok(false);
        };
        state
            .metadata_or_insert_with(KnownSolutions::default)
            .insert(&input.target_bytes());
        // Over the budget an input that timed out is dropped before its map is read: its
        // coverage stays unseen.
        let confirms = kind == SolutionKind::Hang && self.confirms_hangs;
        if confirms && confirmations_over_budget(state, self.describer.timeout()) {
            return Ok(false);
        }
        // The comparison-tracing executor runs without the coverage observer: a crash there
        // has no coverage to compare, and is new only if it is the first of its kind.
        let coverage: Vec<u8> = observers.get(&self.map).map_or_else(Vec::new, |observer| {
            let map = observer.as_ref();
            (0..map.usable_count()).map(|i| map.get(i)).collect()
        });
        let path = libafl_bolts::hash_std(&coverage);
        let seen = state.named_metadata_or_insert_with(
            kind.coverage_metadata_name(),
            SolutionCoverage::default,
        );
        let new_coverage = seen.merge(coverage.into_iter().map(|hits| kind.novelty_entry(hits)));
        let mut rerun = None;
        if confirms && new_coverage {
            let time = &mut state.metadata_or_insert_with(HangConfirmations::default).0;
            let Some((confirmed, again)) = self.confirm_hang(&input.target_bytes(), time)? else {
                return Ok(false);
            };
            (kind, rerun) = (confirmed, Some(again));
        }
        let (keep, described) = self.classify(
            state,
            (kind, rerun),
            &input.target_bytes(),
            path,
            new_coverage,
        )?;
        if keep {
            self.last = Some((kind, described));
        }
        Ok(keep)
    }

    fn append_metadata(
        &mut self,
        _state: &mut S,
        _manager: &mut EM,
        _observers: &OT,
        testcase: &mut Testcase<I>,
    ) -> Result<(), Error> {
        if let Some((kind, described)) = self.last.take() {
            testcase.add_metadata(kind);
            if let Some(described) = described {
                testcase.add_metadata(described);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hang_is_new_by_the_edges_it_reached_not_their_counts() {
        let mut seen = SolutionCoverage::default();
        let hang = |map: [u8; 3]| map.into_iter().map(|h| SolutionKind::Hang.novelty_entry(h));
        assert!(seen.merge(hang([1, 0, 4])));
        assert!(!seen.merge(hang([128, 0, 1])));
        assert!(seen.merge(hang([1, 2, 0])));
        // A crash still counts by bucket.
        let crash = |map: [u8; 3]| {
            map.into_iter()
                .map(|h| SolutionKind::Crash.novelty_entry(h))
        };
        let mut seen = SolutionCoverage::default();
        assert!(seen.merge(crash([1, 0, 4])));
        assert!(seen.merge(crash([2, 0, 4])));
    }
}
