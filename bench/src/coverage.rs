//! The fair coverage figure: a corpus replayed through one llvm-cov build of libpng, counting
//! branches and lines in libpng's own files. Over time: the entries a fuzzer had written by
//! each quarter of the run, by file modification time.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, SystemTime},
};

use crate::{
    builds::Paths,
    parse::{self, Coverage},
    report::Run,
    runner,
};

/// Coverage of the given files.
fn of_files(p: &Paths, files: &[PathBuf], scratch: &Path) -> Result<Coverage, String> {
    fs::create_dir_all(scratch).map_err(|e| e.to_string())?;
    let list = scratch.join("inputs.list");
    let text: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    fs::write(&list, text.join("\n")).map_err(|e| e.to_string())?;
    let raw = scratch.join("replay.profraw");
    let data = scratch.join("replay.profdata");
    let cov_bin = p.bin("libpng-cov");
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
    let filter = format!("{}/", libpng_src::source_path().display());
    parse::llvm_cov_summary(&json, &filter)
}

fn files_in(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut files: Vec<(PathBuf, SystemTime)> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().is_file() && !e.file_name().to_string_lossy().starts_with('.'))
                .filter_map(|e| Some((e.path(), e.metadata().ok()?.modified().ok()?)))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Branches covered by the seeds alone (the start of every curve).
pub fn of_dir(p: &Paths, dir: &Path, scratch: &Path) -> Result<u64, String> {
    let files: Vec<PathBuf> = files_in(dir).into_iter().map(|(f, _)| f).collect();
    Ok(of_files(p, &files, scratch)?.branches)
}

/// Fills `run`'s branches, lines and coverage over time from its corpus.
pub fn measure(
    p: &Paths,
    run: &mut Run,
    work: &Path,
    secs: u64,
    seeds_branches: u64,
) -> Result<(), String> {
    let kind = runner::Fuzzer::libpng_fuzzers(p)
        .into_iter()
        .find(|f| f.name == run.fuzzer)
        .map(|f| f.kind)
        .ok_or("unknown fuzzer")?;
    let files = files_in(&runner::corpus_dir(kind, work));
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
        let cov = of_files(p, &upto, &work.join("cov"))?;
        run.over_time.push((t.as_secs_f64(), cov.branches));
        if quarter == 4 {
            run.branches = Some(cov.branches);
            run.lines = Some(cov.lines);
        }
    }
    Ok(())
}
