//! Saving crashes and hangs: the state's solutions corpus, the one writer of `crashes/`,
//! `hangs/`, `ooms/` and `crashes-flaky/` (as libFuzzer's artifacts are written by LibAFL's
//! `ArtifactCorpus`, beside the feedback that decides), and of the input a client was running
//! when it was killed from outside ([`save_killed_clients_input`], for the restarter).

use std::{
    cell::RefCell,
    fs, io,
    path::{Path, PathBuf},
};

use libafl::{
    corpus::{Corpus, CorpusId, InMemoryCorpus, Testcase},
    inputs::HasTargetBytes,
    Error, HasMetadata,
};
use serde::{Deserialize, Serialize};

use super::{SolutionKind, Triage};
use crate::{platform::output, target::harness};

/// Writes each solution the objective accepted to the output directory, then keeps it in
/// memory (solutions are few: one per new coverage). Lives in the fuzzer state, so a restarted
/// client keeps its directories and triage.
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound = "I: Serialize + for<'a> Deserialize<'a>")]
pub struct SolutionsOnDisk<I> {
    crashes: PathBuf,
    flaky_crashes: PathBuf,
    hangs: PathBuf,
    ooms: PathBuf,
    leaks: PathBuf,
    /// In-process modes: crashes are run again alone before being called reproducible.
    triage: Option<Triage>,
    saved: InMemoryCorpus<I>,
}

impl<I> SolutionsOnDisk<I> {
    pub fn new(out: &Path, triage: Option<Triage>) -> Self {
        Self {
            crashes: output::crashes_dir(out),
            flaky_crashes: output::flaky_crashes_dir(out),
            hangs: output::hangs_dir(out),
            ooms: output::ooms_dir(out),
            leaks: output::leaks_dir(out),
            triage,
            saved: InMemoryCorpus::new(),
        }
    }

    fn save(&self, kind: SolutionKind, bytes: &[u8]) -> io::Result<()> {
        let name = output::input_name(bytes);
        match (kind, &self.triage) {
            (SolutionKind::Hang, _) => output::write_atomic(&self.hangs.join(name), bytes),
            (SolutionKind::OutOfMemory, _) => output::write_atomic(&self.ooms.join(name), bytes),
            // LeakSanitizer's report is the proof: a leak needs no second run.
            (SolutionKind::Leak, _) => output::write_atomic(&self.leaks.join(name), bytes),
            (SolutionKind::Crash, None) => output::write_atomic(&self.crashes.join(name), bytes),
            (SolutionKind::Crash, Some(triage)) => self.save_triaged_crash(triage, &name, bytes),
        }
    }

    /// A crash that reproduces alone goes to `crashes/`; one that does not goes to
    /// `crashes-flaky/NAME/` with the inputs that ran before it in this process.
    fn save_triaged_crash(&self, triage: &Triage, name: &str, bytes: &[u8]) -> io::Result<()> {
        // Hidden until triaged: users and the monitor only see decided crashes.
        let pending = self.crashes.join(format!(".triage-{name}"));
        fs::write(&pending, bytes)?;
        if triage.reproduces(&pending) {
            return fs::rename(pending, self.crashes.join(name));
        }
        let sequence = self.flaky_crashes.join(name);
        let partial = self.flaky_crashes.join(format!(".{name}.partial"));
        let _ = fs::remove_dir_all(&partial);
        fs::create_dir_all(&partial)?;
        let mut recent = harness::recent_inputs();
        if recent.last().map(Vec::as_slice) != Some(bytes) {
            recent.push(bytes.to_vec());
        }
        for (i, input) in recent.iter().enumerate() {
            fs::write(partial.join(format!("{i:04}")), input)?;
        }
        if sequence.exists() {
            let _ = fs::remove_dir_all(&partial);
        } else {
            fs::rename(partial, sequence)?;
        }
        fs::remove_file(pending)
    }
}

impl<I: HasTargetBytes> Corpus<I> for SolutionsOnDisk<I> {
    fn add(&mut self, testcase: Testcase<I>) -> Result<CorpusId, Error> {
        let kind = testcase.metadata::<SolutionKind>().ok().copied();
        if let (Some(kind), Some(input)) = (kind, testcase.input()) {
            self.save(kind, &input.target_bytes())
                .map_err(|e| Error::os_error(e, "cannot save a solution"))?;
        }
        self.saved.add(testcase)
    }

    fn count(&self) -> usize {
        self.saved.count()
    }
    fn count_disabled(&self) -> usize {
        self.saved.count_disabled()
    }
    fn count_all(&self) -> usize {
        self.saved.count_all()
    }
    fn add_disabled(&mut self, testcase: Testcase<I>) -> Result<CorpusId, Error> {
        self.saved.add_disabled(testcase)
    }
    fn replace(&mut self, id: CorpusId, testcase: Testcase<I>) -> Result<Testcase<I>, Error> {
        self.saved.replace(id, testcase)
    }
    fn remove(&mut self, id: CorpusId) -> Result<Testcase<I>, Error> {
        self.saved.remove(id)
    }
    fn get(&self, id: CorpusId) -> Result<&RefCell<Testcase<I>>, Error> {
        self.saved.get(id)
    }
    fn get_from_all(&self, id: CorpusId) -> Result<&RefCell<Testcase<I>>, Error> {
        self.saved.get_from_all(id)
    }
    fn current(&self) -> &Option<CorpusId> {
        self.saved.current()
    }
    fn current_mut(&mut self) -> &mut Option<CorpusId> {
        self.saved.current_mut()
    }
    fn next(&self, id: CorpusId) -> Option<CorpusId> {
        self.saved.next(id)
    }
    fn peek_free_id(&self) -> CorpusId {
        self.saved.peek_free_id()
    }
    fn prev(&self, id: CorpusId) -> Option<CorpusId> {
        self.saved.prev(id)
    }
    fn first(&self) -> Option<CorpusId> {
        self.saved.first()
    }
    fn last(&self) -> Option<CorpusId> {
        self.saved.last()
    }
    fn nth_from_all(&self, nth: usize) -> CorpusId {
        self.saved.nth_from_all(nth)
    }
    fn load_input_into(&self, testcase: &mut Testcase<I>) -> Result<(), Error> {
        self.saved.load_input_into(testcase)
    }
    fn store_input_from(&self, testcase: &Testcase<I>) -> Result<(), Error> {
        self.saved.store_input_from(testcase)
    }
}

/// Saves the input a client was running when it was killed from outside (`kill -9`, the
/// kernel's OOM killer, the RSS limit), which its restarter read back: to `ooms/` when it died
/// for memory, else `crashes/`, named by its content like every finding. Returns where, and
/// whether it is new there.
pub fn save_killed_clients_input(
    out: &Path,
    oom: bool,
    input: &[u8],
) -> io::Result<(PathBuf, bool)> {
    let dir = if oom {
        output::ooms_dir(out)
    } else {
        output::crashes_dir(out)
    };
    let path = dir.join(output::input_name(input));
    let new = !path.exists();
    output::write_atomic(&path, input)?;
    Ok((path, new))
}

#[cfg(test)]
mod tests {
    use libafl::inputs::BytesInput;

    use super::*;

    #[test]
    fn solutions_are_filed_by_kind() {
        let out = std::env::temp_dir().join(format!("lafuzz-solutions-{}", std::process::id()));
        output::prepare(&out).unwrap();
        let mut corpus = SolutionsOnDisk::<BytesInput>::new(&out, None);
        for (bytes, kind) in [
            (&b"boom"[..], SolutionKind::Crash),
            (b"slow", SolutionKind::Hang),
        ] {
            let mut testcase = Testcase::new(BytesInput::new(bytes.to_vec()));
            testcase.add_metadata(kind);
            corpus.add(testcase).unwrap();
        }
        assert_eq!(corpus.count(), 2);
        let crash = output::crashes_dir(&out).join(output::input_name(b"boom"));
        let hang = output::hangs_dir(&out).join(output::input_name(b"slow"));
        assert_eq!(fs::read(crash).unwrap(), b"boom");
        assert_eq!(fs::read(hang).unwrap(), b"slow");
        assert_eq!(output::visible_entries(&output::crashes_dir(&out)).len(), 1);
        fs::remove_dir_all(&out).unwrap();
    }
}
