//! The output directory, in AFL++'s layout: `queue/`, `crashes/`, `hangs/`, `fuzzer_stats`,
//! `plot_data`. One directory per campaign, whatever the number of cores.

use std::{
    collections::HashMap,
    ffi::OsStr,
    fs,
    path::{Path, PathBuf},
};

/// Hidden files (`.name`) in an output or corpus directory are bookkeeping (locks, metadata,
/// files being written), never inputs. Shared with the bench and the tests.
pub fn is_hidden(file_name: &OsStr) -> bool {
    file_name.as_encoded_bytes().starts_with(b".")
}

/// A saved input of an output directory: neither bookkeeping nor a finding's description
/// (`NAME.txt`; our inputs' names are hashes, with no dot).
fn is_saved_input(file_name: &OsStr) -> bool {
    !is_hidden(file_name)
        && !file_name
            .as_encoded_bytes()
            .ends_with(DESCRIPTION_SUFFIX.as_bytes())
}

const DESCRIPTION_SUFFIX: &str = ".txt";

/// A saved finding's description, beside the finding (a shell's `crashes/*` names both).
pub fn is_description(path: &Path) -> bool {
    let text = path.as_os_str().as_encoded_bytes();
    text.ends_with(DESCRIPTION_SUFFIX.as_bytes()) && path.with_extension("").is_file()
}

/// Where a saved finding's description goes: beside it, `NAME.txt` (see `triage/`).
pub fn description_file(input: &Path) -> PathBuf {
    let mut name = input.as_os_str().to_owned();
    name.push(DESCRIPTION_SUFFIX);
    PathBuf::from(name)
}

/// The saved inputs of one output directory, sorted (not recursive; a flaky crash is a
/// directory of inputs).
pub fn visible_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| is_saved_input(&e.file_name()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    entries
}

/// Regular, non-hidden files under `dir`, recursively, in a stable order (seed corpora).
pub fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        if is_hidden(&entry.file_name()) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect_files(&path, out)?;
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// Parses AFL-style `key : value` lines (`fuzzer_stats`, ours and AFL++'s).
pub fn parse_fuzzer_stats(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

pub fn queue_dir(out: &Path) -> PathBuf {
    out.join("queue")
}
pub fn crashes_dir(out: &Path) -> PathBuf {
    out.join("crashes")
}
/// Where a client keeps its corpus on disk. The first client writes the campaign's `queue/`
/// (it receives every other client's finds through the broker); the others keep theirs in
/// hidden directories, so no two processes write the same files.
pub fn client_queue_dir(out: &Path, client_id: usize) -> PathBuf {
    if client_id <= 1 {
        queue_dir(out)
    } else {
        out.join(format!(".client-{client_id}")).join("queue")
    }
}

/// Every client queue directory a campaign on `out` has (for resuming).
pub fn client_queue_dirs(out: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![queue_dir(out)];
    if let Ok(entries) = fs::read_dir(out) {
        dirs.extend(
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(".client-"))
                .map(|e| e.path().join("queue"))
                .filter(|q| q.is_dir()),
        );
    }
    dirs
}

/// Crashes that did not reproduce alone in a fresh process, each a directory holding the
/// inputs that ran before it in its client, in order, the crashing one last.
pub fn flaky_crashes_dir(out: &Path) -> PathBuf {
    out.join("crashes-flaky")
}
pub fn hangs_dir(out: &Path) -> PathBuf {
    out.join("hangs")
}
/// Inputs that took a client over the memory limit (or had it killed by the kernel for memory).
pub fn ooms_dir(out: &Path) -> PathBuf {
    out.join("ooms")
}
/// Inputs that leaked memory (LeakSanitizer's report).
pub fn leaks_dir(out: &Path) -> PathBuf {
    out.join("leaks")
}
pub fn stats_file(out: &Path) -> PathBuf {
    out.join("fuzzer_stats")
}
pub fn plot_file(out: &Path) -> PathBuf {
    out.join("plot_data")
}
/// Seeds longer than the longest input, cut to that length (hidden: not findings).
pub fn truncated_seeds_dir(out: &Path) -> PathBuf {
    out.join(".truncated-seeds")
}
/// One line per client started again after it died without saving its state, appended by
/// its restarter (whose own output is silenced with the clients'); the monitor prints them.
pub fn client_restarts_file(out: &Path) -> PathBuf {
    out.join(".client-restarts")
}

/// Appends one line to the restarts log.
pub fn log_client_restart(out: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(client_restarts_file(out))?;
    // One write per line, so lines from several restarters do not interleave.
    file.write_all(format!("{line}\n").as_bytes())
}

/// Creates the layout and checks that it is writable, before any process starts.
pub fn prepare(out: &Path) -> Result<(), String> {
    for dir in [
        queue_dir(out),
        crashes_dir(out),
        flaky_crashes_dir(out),
        hangs_dir(out),
        ooms_dir(out),
        leaks_dir(out),
    ] {
        fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
    }
    let probe = out.join(".write_test");
    fs::write(&probe, b"")
        .and_then(|()| fs::remove_file(&probe))
        .map_err(|e| format!("output directory {} is not writable: {e}", out.display()))
}

/// Number of saved inputs in a directory (hidden files are bookkeeping, not inputs).
pub fn count_inputs(dir: &Path) -> usize {
    fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| is_saved_input(&e.file_name()))
            .count()
    })
}

/// The most recently written input in a directory.
pub fn newest_input(dir: &Path) -> Option<PathBuf> {
    fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| is_saved_input(&e.file_name()))
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
}

/// A saved input's file name: the hash of its bytes, so the same input is saved once.
pub fn input_name(bytes: &[u8]) -> String {
    format!("{:016x}", libafl_bolts::hash_std(bytes))
}

/// Writes a file atomically (to a hidden temporary name, then renamed) so readers never see
/// half a file, and a failed write (a full disk) leaves no half-written input behind.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    if let Err(e) = fs::write(&tmp, contents) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_creates_layout_and_rejects_unwritable() {
        let out = std::env::temp_dir().join(format!("lafuzz-out-{}", std::process::id()));
        prepare(&out).unwrap();
        assert!(queue_dir(&out).is_dir() && crashes_dir(&out).is_dir() && hangs_dir(&out).is_dir());
        fs::write(crashes_dir(&out).join("x"), b"1").unwrap();
        fs::write(crashes_dir(&out).join(".x.lock"), b"").unwrap();
        assert_eq!(count_inputs(&crashes_dir(&out)), 1);
        assert_eq!(
            newest_input(&crashes_dir(&out)),
            Some(crashes_dir(&out).join("x"))
        );
        // A path below a regular file cannot be created, even by root.
        assert!(prepare(&out.join("fuzzer_stats_file_as_dir").join("x")).is_ok());
        fs::write(out.join("file"), b"").unwrap();
        assert!(prepare(&out.join("file").join("sub")).is_err());
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn stats_lines_parse_to_keys_and_values() {
        let stats = parse_fuzzer_stats("execs_done        : 42\ncommand_line      : a -x b:c\n");
        assert_eq!(stats["execs_done"], "42");
        assert_eq!(stats["command_line"], "a -x b:c");
        assert!(is_hidden(OsStr::new(".lock")) && !is_hidden(OsStr::new("a.b")));
    }

    #[test]
    fn collect_files_skips_hidden_and_recurses() {
        let dir = std::env::temp_dir().join(format!("lafuzz-files-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a"), "x").unwrap();
        fs::write(dir.join(".a.lafl_lock"), "").unwrap();
        fs::write(dir.join("sub/b"), "y").unwrap();
        let mut files = Vec::new();
        collect_files(&dir, &mut files).unwrap();
        assert_eq!(files, vec![dir.join("a"), dir.join("sub/b")]);
        assert_eq!(visible_entries(&dir), vec![dir.join("a"), dir.join("sub")]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn input_names_are_stable_and_distinct() {
        assert_eq!(input_name(b"abc"), input_name(b"abc"));
        assert_ne!(input_name(b"abc"), input_name(b"abd"));
        assert_eq!(input_name(b"abc").len(), 16);
    }
}
