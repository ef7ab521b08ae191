//! Corpus minimization (libFuzzer's `-merge=1`, AFL++'s `afl-cmin`): every input runs once in
//! a child and reports its coverage features; the inputs already in the output directory
//! count first, then the others, smallest first, are kept when they add a feature.
//!
//! Progress goes to a control file in libFuzzer's format (the file list, then `STARTED i
//! size` and `FT i features...` per input), so a merge that is killed resumes where it
//! stopped when run again with the same control file.

use std::{
    collections::HashMap,
    fs,
    io::Write,
    path::{Path, PathBuf},
};

use super::{sha1_name, Budget};
use crate::{
    platform::output::collect_files,
    target::isolated::{self, edges, Features, Limits, Outcome},
};

/// What a merge did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Merged {
    /// Inputs in the output directory before.
    pub initial: usize,
    /// Inputs of the other directories copied into it.
    pub new_files: usize,
    pub new_features: usize,
    pub new_edges: usize,
    /// Edges of the whole output directory after.
    pub edges: usize,
    /// Inputs that crashed, hung or ran out of memory (not kept).
    pub failed: usize,
}

/// Merges the inputs of `inputs` into `out` (see the module comment). `on_failure` sees each
/// input that failed, to save it as a finding.
pub fn merge(
    out: &Path,
    inputs: &[PathBuf],
    control_file: &Path,
    limits: Limits,
    budget: &mut Budget,
    mut on_failure: impl FnMut(&Path, &[u8], Outcome),
) -> Result<Merged, String> {
    let cannot_read = |dir: &Path, e: std::io::Error| format!("cannot read {}: {e}", dir.display());
    let mut files = Vec::new();
    collect_files(out, &mut files).map_err(|e| cannot_read(out, e))?;
    let initial = files.len();
    for dir in inputs {
        collect_files(dir, &mut files).map_err(|e| cannot_read(dir, e))?;
    }
    let mut control = Control::open(control_file, &files, initial)?;
    let skipped_before = control.done.len();
    if skipped_before > 0 {
        println!(
            "MERGE-OUTER: resuming from {}: {skipped_before} of {} inputs run earlier",
            control_file.display(),
            files.len()
        );
    }
    run_each(
        &files,
        &mut control,
        control_file,
        limits,
        budget,
        &mut on_failure,
    )?;
    keep_what_is_new(out, &files, initial, &control)
}

/// Runs every input the control file does not have yet, recording its features (or its
/// failure) there.
fn run_each(
    files: &[PathBuf],
    control: &mut Control,
    control_file: &Path,
    limits: Limits,
    budget: &mut Budget,
    on_failure: &mut impl FnMut(&Path, &[u8], Outcome),
) -> Result<(), String> {
    for (index, file) in files.iter().enumerate() {
        if control.done.contains_key(&index) {
            continue;
        }
        if !budget.take_run() {
            return Err(format!(
                "merge stopped by its time or run limit after {index} of {} inputs; run it again \
                 with -merge_control_file={} to resume",
                files.len(),
                control_file.display()
            ));
        }
        let bytes = fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        control.started(index, bytes.len())?;
        let (outcome, features) = isolated::run(&[&bytes], limits, true)?;
        if outcome != Outcome::Ok {
            on_failure(file, &bytes, outcome);
            control.done.insert(index, None);
            continue;
        }
        control.features(index, &features)?;
        control.done.insert(index, Some(features));
    }
    Ok(())
}

/// Copies into `out` the inputs, smallest first, that add features to what `out`'s own inputs
/// (the first `initial` files) and those copied before them have.
fn keep_what_is_new(
    out: &Path,
    files: &[PathBuf],
    initial: usize,
    control: &Control,
) -> Result<Merged, String> {
    let mut merged = Merged {
        initial,
        ..Merged::default()
    };
    let mut known = Features::new();
    for index in 0..initial {
        if let Some(Some(features)) = control.done.get(&index) {
            known.extend(features);
        }
    }
    let initial_edges = edges(&known);
    let mut candidates: Vec<(u64, &PathBuf, &Features)> = (initial..files.len())
        .filter_map(|i| match control.done.get(&i) {
            Some(Some(features)) => {
                let size = fs::metadata(&files[i]).map_or(u64::MAX, |m| m.len());
                Some((size, &files[i], features))
            }
            _ => None,
        })
        .collect();
    candidates.sort();
    for (_, file, features) in candidates {
        let new = features.difference(&known).count();
        if new == 0 {
            continue;
        }
        let bytes = fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let copy = out.join(sha1_name(&bytes));
        fs::write(&copy, &bytes).map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
        known.extend(features);
        merged.new_files += 1;
        merged.new_features += new;
    }
    merged.edges = edges(&known);
    merged.new_edges = merged.edges - initial_edges;
    merged.failed = control.done.values().filter(|f| f.is_none()).count();
    Ok(merged)
}

/// The control file: which inputs were run, and what they covered.
struct Control {
    file: fs::File,
    /// Input index -> its features, or `None` when it failed (or killed the merge).
    done: HashMap<usize, Option<Features>>,
}

impl Control {
    /// Opens `path`, resuming from it when it lists the same inputs, else starting it afresh.
    fn open(path: &Path, files: &[PathBuf], initial: usize) -> Result<Self, String> {
        let header = format!(
            "{}\n{initial}\n{}",
            files.len(),
            files
                .iter()
                .map(|f| format!("{}\n", f.display()))
                .collect::<String>()
        );
        let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        let previous = fs::read_to_string(path).unwrap_or_default();
        let done = match previous.strip_prefix(&header) {
            Some(progress) => parse_progress(progress),
            None => {
                fs::write(path, &header).map_err(cannot)?;
                HashMap::new()
            }
        };
        let file = fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(cannot)?;
        Ok(Self { file, done })
    }

    fn started(&mut self, index: usize, size: usize) -> Result<(), String> {
        self.append(&format!("STARTED {index} {size}\n"))
    }

    fn features(&mut self, index: usize, features: &Features) -> Result<(), String> {
        let list: Vec<String> = features.iter().map(u32::to_string).collect();
        self.append(&format!("FT {index} {}\n", list.join(" ")))
    }

    fn append(&mut self, line: &str) -> Result<(), String> {
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| format!("cannot write the merge control file: {e}"))
    }
}

/// The inputs a previous run finished: `FT` lines give features; a `STARTED` with no `FT`
/// is an input that failed or was running when the merge was killed, and is not run again.
fn parse_progress(progress: &str) -> HashMap<usize, Option<Features>> {
    let mut done = HashMap::new();
    for line in progress.lines() {
        let mut words = line.split_whitespace();
        let (Some(kind), Some(Ok(index))) = (words.next(), words.next().map(str::parse)) else {
            continue;
        };
        match kind {
            "STARTED" => {
                done.insert(index, None);
            }
            "FT" => {
                done.insert(index, Some(words.filter_map(|w| w.parse().ok()).collect()));
            }
            _ => {}
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_resume_finished_and_failed_inputs() {
        let done = parse_progress("STARTED 0 4\nFT 0 8 17\nSTARTED 1 9\nSTARTED 2 1\nFT 2\n");
        assert_eq!(done[&0], Some([8, 17].into_iter().collect()));
        assert_eq!(done[&1], None);
        assert_eq!(done[&2], Some(Features::new()));
        assert!(!done.contains_key(&3));
    }
}
