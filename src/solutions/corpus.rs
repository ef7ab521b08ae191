//! Saving crashes and hangs: the state's solutions corpus, the one writer of `crashes/`,
//! `hangs/`, `ooms/`, `leaks/` and `crashes-flaky/`, and of each finding's description
//! `NAME.txt` (as libFuzzer's artifacts are written by LibAFL's
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

use super::{Described, SolutionKind};
use crate::{
    platform::output,
    target::{harness, reproduce::Reproduce},
};

/// Writes each solution the objective accepted to the output directory, with its description,
/// then keeps it in memory (solutions are few: one per new coverage or bucket). Lives in the
/// fuzzer state, so a restarted client keeps its directories.
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound = "I: Serialize + for<'a> Deserialize<'a>")]
pub struct SolutionsOnDisk<I> {
    crashes: PathBuf,
    flaky_crashes: PathBuf,
    hangs: PathBuf,
    ooms: PathBuf,
    leaks: PathBuf,
    /// In-process modes: a crash that does not fail again alone is flaky.
    flaky_aware: bool,
    /// Written into each description: how to reproduce (and minimize) the finding.
    reproduce: Reproduce,
    saved: InMemoryCorpus<I>,
}

impl<I> SolutionsOnDisk<I> {
    pub fn new(out: &Path, flaky_aware: bool, reproduce: Reproduce) -> Self {
        Self {
            crashes: output::crashes_dir(out),
            flaky_crashes: output::flaky_crashes_dir(out),
            hangs: output::hangs_dir(out),
            ooms: output::ooms_dir(out),
            leaks: output::leaks_dir(out),
            flaky_aware,
            reproduce,
            saved: InMemoryCorpus::new(),
        }
    }

    fn save(
        &self,
        kind: SolutionKind,
        bytes: &[u8],
        described: Option<&Described>,
    ) -> io::Result<()> {
        let name = output::input_name(bytes);
        let flaky = self.flaky_aware && described.is_some_and(|d| !d.reproduced);
        let dir = match kind {
            SolutionKind::Crash if flaky => return self.save_flaky_crash(&name, bytes),
            SolutionKind::Crash => &self.crashes,
            SolutionKind::Hang => &self.hangs,
            SolutionKind::OutOfMemory => &self.ooms,
            SolutionKind::Leak => &self.leaks,
        };
        let file = dir.join(name);
        // The description first: whoever sees the input can read what it is.
        if let Some(described) = described {
            let minimizable = matches!(kind, SolutionKind::Crash | SolutionKind::OutOfMemory);
            let text = described.text.clone() + &self.reproduce.described(&file, minimizable);
            output::write_atomic(&output::description_file(&file), text.as_bytes())?;
        }
        output::write_atomic(&file, bytes)
    }

    /// A crash that does not fail alone goes to `crashes-flaky/NAME/` with the inputs that ran
    /// before it in this process.
    fn save_flaky_crash(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
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
            fs::remove_dir_all(&partial)
        } else {
            fs::rename(partial, sequence)
        }
    }
}

impl<I: HasTargetBytes> Corpus<I> for SolutionsOnDisk<I> {
    fn add(&mut self, testcase: Testcase<I>) -> Result<CorpusId, Error> {
        let kind = testcase.metadata::<SolutionKind>().ok().copied();
        let described = testcase.metadata::<Described>().ok();
        if let (Some(kind), Some(input)) = (kind, testcase.input()) {
            self.save(kind, &input.target_bytes(), described)
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
        let mut corpus =
            SolutionsOnDisk::<BytesInput>::new(&out, false, Reproduce::for_this_binary(Vec::new()));
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
