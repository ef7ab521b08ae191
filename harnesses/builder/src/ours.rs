//! Our fuzzers on the suite's libraries: which builds each library gets (`NAME`,
//! `NAME-standalone`, `NAME-nocmplog`) and their compile, archive and link jobs. One list for
//! `harness-builder` (optimized, into `target/fuzzers/`) and the bench's quick runs
//! (unoptimized, into `target/bench-build-quick/`).

use crate::{compile::Job, Library};
use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// A library compiled one way (objects in `OBJECTS/NAME[SUFFIX]`, with the wrapper's `flags`);
/// the fuzzers `NAME[SUFFIX]` are linked from those objects, each with its own wrapper flag.
struct LibraryBuild {
    suffix: &'static str,
    flags: &'static [&'static str],
    fuzzers: &'static [(&'static str, Option<&'static str>)],
}

/// The build without comparison logging is the bench's yardstick for what comparison logging
/// costs.
const LIBRARY_BUILDS: &[LibraryBuild] = &[
    LibraryBuild {
        suffix: "",
        flags: &[],
        fuzzers: &[("", None), ("-standalone", Some("--standalone"))],
    },
    LibraryBuild {
        suffix: "-nocmplog",
        flags: &["--no-cmplog"],
        fuzzers: &[("-nocmplog", None)],
    },
];

/// Where the builds read and write.
pub struct Places<'a> {
    /// The repository root.
    pub root: &'a Path,
    /// `target/release`: the wrapper binaries and the runtime.
    pub bin: &'a Path,
    /// Objects and archives, a folder per library build.
    pub objects: &'a Path,
    /// The linked fuzzers.
    pub fuzzers: &'a Path,
}

/// The jobs of each step, to run in order (each step's jobs in parallel).
#[derive(Default)]
pub struct Steps {
    pub compiles: Vec<Job>,
    pub archives: Vec<Job>,
    pub links: Vec<Job>,
}

impl Steps {
    pub fn run(self) -> Result<(), String> {
        for step in [self.compiles, self.archives, self.links] {
            crate::compile::run_all(step)?;
        }
        Ok(())
    }
}

/// Adds to `steps` the builds of `libraries` whose fuzzer name (`zlib-standalone`) `wanted`
/// accepts, compiled with `opt` (`-O2`, or `-O0` for quick runs) and `-g`. A library build
/// none of whose fuzzers is wanted is not compiled.
pub fn plan(
    p: &Places,
    libraries: &[&Library],
    opt: &str,
    wanted: impl Fn(&str) -> bool,
    steps: &mut Steps,
) -> Result<(), String> {
    let (cc, cxx) = (p.bin.join("libafl_cc"), p.bin.join("libafl_cxx"));
    let runtime = p.bin.join("liblafuzz.a");
    for lib in libraries {
        for how in LIBRARY_BUILDS {
            let names: Vec<(String, Option<&str>)> = how
                .fuzzers
                .iter()
                .map(|&(suffix, extra)| (format!("{}{suffix}", lib.name), extra))
                .filter(|(name, _)| wanted(name))
                .collect();
            if names.is_empty() {
                continue;
            }
            let build = p.objects.join(format!("{}{}", lib.name, how.suffix));
            let mut flags: Vec<String> = how.flags.iter().map(|f| f.to_string()).collect();
            flags.extend([opt.into(), "-g".into()]);
            let (jobs, objects) = lib.library_jobs(p.root, (&cc, &cxx), &flags, &build)?;
            steps.compiles.extend(jobs);
            let harness = build.join("harness.o");
            let harness_job = lib.harness_job(p.root, (&cc, &cxx), &flags, &build, &harness)?;
            steps.compiles.push(harness_job);
            let archive = build.join(format!("lib{}.a", lib.name));
            steps.archives.push(Job::archive(&archive, &objects));
            for (name, extra) in names {
                let out = p.fuzzers.join(name);
                let mut link = Command::new(&cxx);
                link.args(&flags)
                    .args(extra)
                    .arg(&harness)
                    .arg(&archive)
                    .args(lib.libs)
                    .arg("-o")
                    .arg(&out);
                let inputs: Vec<PathBuf> = vec![
                    harness.clone(),
                    archive.clone(),
                    cxx.clone(),
                    runtime.clone(),
                ];
                steps.links.push(Job {
                    command: link,
                    output: out,
                    inputs,
                });
            }
        }
    }
    Ok(())
}
