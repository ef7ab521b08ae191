//! The fair coverage figure: a corpus replayed through one llvm-cov build of the target,
//! counting branches and lines in the library's own files (not the harness's). Over time: the entries a fuzzer had written by
//! each quarter of the run, by file modification time.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, SystemTime},
};

use lafuzz::platform::output::visible_entries;

use harness_builder::Library;

use crate::{
    fuzzers::Bin,
    parse::{self, Coverage},
    paths::Paths,
    report::Run,
};

/// Coverage of `lib` by the given files.
fn of_files(
    p: &Paths,
    lib: &Library,
    files: &[PathBuf],
    scratch: &Path,
) -> Result<Coverage, String> {
    fs::create_dir_all(scratch).map_err(|e| e.to_string())?;
    let list = scratch.join("inputs.list");
    let text: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    fs::write(&list, text.join("\n")).map_err(|e| e.to_string())?;
    let raw = scratch.join("replay.profraw");
    let data = scratch.join("replay.profdata");
    let cov_bin = Bin::bench(lib.name, "-cov").path(p);
    Command::new(&cov_bin)
        .arg(&list)
        .env("LLVM_PROFILE_FILE", &raw)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", cov_bin.display()))?;
    let merged = Command::new("llvm-profdata-19")
        .args(["merge", "-sparse"])
        .arg(&raw)
        .arg("-o")
        .arg(&data)
        .status()
        .map_err(|e| format!("llvm-profdata-19: {e}"))?;
    if !merged.success() {
        return Err("llvm-profdata-19 merge failed".into());
    }
    let export = Command::new("llvm-cov-19")
        .args(["export", "-summary-only"])
        .arg(format!("-instr-profile={}", data.display()))
        .arg(&cov_bin)
        .output()
        .map_err(|e| format!("llvm-cov-19: {e}"))?;
    let json = String::from_utf8_lossy(&export.stdout);
    let filter = format!("{}/", lib.source_dir(&p.root)?.display());
    parse::llvm_cov_summary(&json, &filter)
}

/// The saved inputs of `dir`, sorted, with their modification times.
fn files_in(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    visible_entries(dir)
        .into_iter()
        .filter(|f| f.is_file())
        .filter_map(|f| {
            let modified = fs::symlink_metadata(&f).ok()?.modified().ok()?;
            Some((f, modified))
        })
        .collect()
}

/// Branches covered by the seeds alone (the start of every curve).
pub fn of_dir(p: &Paths, lib: &Library, dir: &Path, scratch: &Path) -> Result<u64, String> {
    let files: Vec<PathBuf> = files_in(dir).into_iter().map(|(f, _)| f).collect();
    Ok(of_files(p, lib, &files, scratch)?.branches)
}

/// Fills `run`'s branches, lines and coverage over time from its corpus directory `corpus`;
/// the replays' scratch files go in `work`.
pub fn measure(
    p: &Paths,
    lib: &Library,
    run: &mut Run,
    corpus: &Path,
    work: &Path,
    secs: u64,
    seeds_branches: u64,
) -> Result<(), String> {
    let files = files_in(corpus);
    let Some(start) = files.iter().map(|(_, t)| *t).min() else {
        return Ok(());
    };
    run.over_time.push((0.0, seeds_branches));
    for quarter in 1..=4u32 {
        let t = Duration::from_secs(secs) * quarter / 4;
        let upto: Vec<PathBuf> = if quarter == 4 {
            files.iter().map(|(f, _)| f.clone()).collect()
        } else {
            files
                .iter()
                .filter(|(_, m)| *m <= start + t)
                .map(|(f, _)| f.clone())
                .collect()
        };
        let cov = of_files(p, lib, &upto, &work.join("cov"))?;
        run.over_time.push((t.as_secs_f64(), cov.branches));
        if quarter == 4 {
            run.branches = Some(cov.branches);
            run.lines = Some(cov.lines);
        }
    }
    Ok(())
}
