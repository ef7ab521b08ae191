//! The ways the bench compiles the peers (-O2 each): libFuzzer, AFL++, AFL++ CmpLog, llvm-cov
//! and plain (and ours with AddressSanitizer, for the bug benchmark); and what each compiles: a
//! library of the suite with its harness, one-file helpers.

use harness_builder::{compile::Job, Library};
use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::paths::Paths;

/// One way of compiling: C compiler, C++ compiler, flags for compiling, env.
pub struct Flavor {
    pub name: &'static str,
    /// Compilers looked up in PATH, or ours (`libafl_cc`) in `target/release/`.
    cc: &'static str,
    cxx: &'static str,
    cflags: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    /// Needs AFL++'s compilers (built only where afl-fuzz is installed).
    pub needs_afl: bool,
}

pub const LIBFUZZER: Flavor = Flavor {
    name: "libfuzzer",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2", "-fsanitize=fuzzer-no-link"],
    env: &[],
    needs_afl: false,
};
pub const AFL: Flavor = Flavor {
    name: "afl",
    cc: "afl-clang-fast",
    cxx: "afl-clang-fast++",
    cflags: &["-O2"],
    env: &[("AFL_QUIET", "1")],
    needs_afl: true,
};
pub const AFL_CMPLOG: Flavor = Flavor {
    name: "afl-cmplog",
    cc: "afl-clang-fast",
    cxx: "afl-clang-fast++",
    cflags: &["-O2"],
    env: &[("AFL_QUIET", "1"), ("AFL_LLVM_CMPLOG", "1")],
    needs_afl: true,
};
pub const COVERAGE: Flavor = Flavor {
    name: "cov",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2", "-fprofile-instr-generate", "-fcoverage-mapping"],
    env: &[],
    needs_afl: false,
};
/// The bug benchmark's builds: AddressSanitizer for every fuzzer (ours through our wrapper).
pub const OURS_ASAN: Flavor = Flavor {
    name: "ours-asan",
    cc: "libafl_cc",
    cxx: "libafl_cxx",
    cflags: &["-O2", "-g", "-fsanitize=address"],
    env: &[],
    needs_afl: false,
};
pub const LIBFUZZER_ASAN: Flavor = Flavor {
    name: "libfuzzer-asan",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2", "-g", "-fsanitize=fuzzer-no-link,address"],
    env: &[],
    needs_afl: false,
};
pub const AFL_CMPLOG_ASAN: Flavor = Flavor {
    name: "afl-cmplog-asan",
    cc: "afl-clang-fast",
    cxx: "afl-clang-fast++",
    cflags: &["-O2", "-g"],
    env: &[
        ("AFL_QUIET", "1"),
        ("AFL_LLVM_CMPLOG", "1"),
        ("AFL_USE_ASAN", "1"),
    ],
    needs_afl: true,
};
pub const PLAIN: Flavor = Flavor {
    name: "plain",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2"],
    env: &[],
    needs_afl: false,
};

impl Flavor {
    fn flags(&self, p: &Paths) -> Vec<String> {
        self.cflags
            .iter()
            .map(|&f| if p.quick && f == "-O2" { "-O0" } else { f })
            .map(str::to_string)
            .collect()
    }

    fn compilers(&self, p: &Paths) -> (PathBuf, PathBuf) {
        let find = |name: &str| {
            if name.starts_with("libafl_") {
                p.release.join(name)
            } else {
                PathBuf::from(name)
            }
        };
        (find(self.cc), find(self.cxx))
    }

    /// Our wrapper, which links our runtime (and its own main) by itself.
    pub fn is_ours(&self) -> bool {
        self.cc.starts_with("libafl_")
    }

    fn with_env(&self, p: &Paths, mut job: Job) -> Job {
        job.command.envs(self.env.iter().copied());
        if p.quick {
            // AFL++'s compilers add -O3 of their own unless told not to.
            job.command.env("AFL_DONT_OPTIMIZE", "1");
        }
        job
    }

    /// `lib` in this flavor, in `target/bench-build/objects-FLAVOR/NAME/`: the compile jobs
    /// (library and harness), the archive job, and the harness object and the archive.
    pub fn library(&self, p: &Paths, lib: &Library) -> Result<LibraryJobs, String> {
        let dir = p
            .build
            .join(format!("objects-{}", self.name))
            .join(lib.name);
        let flags = self.flags(p);
        let (cc, cxx) = self.compilers(p);
        let (jobs, objects) = lib.library_jobs(&p.root, (&cc, &cxx), &flags, &dir)?;
        let harness = dir.join("harness.o");
        let mut compiles: Vec<Job> = jobs.into_iter().map(|j| self.with_env(p, j)).collect();
        compiles.push(self.with_env(
            p,
            lib.harness_job(&p.root, (&cc, &cxx), &flags, &dir, &harness)?,
        ));
        let archive = dir.join(format!("lib{}.a", lib.name));
        Ok(LibraryJobs {
            compiles,
            archive_job: Job::archive(&archive, &objects),
            harness,
            archive,
        })
    }

    /// A one-file C helper (`bench/c/NAME.c` or a harness) as an object in this flavor.
    pub fn helper(&self, p: &Paths, source: &Path) -> (Job, PathBuf) {
        let stem = source.file_stem().unwrap().to_string_lossy();
        let obj = p.build.join(format!("{stem}-{}.o", self.name));
        let job = Job::compile(&self.compilers(p).0, &self.flags(p), &[], source, &obj);
        (self.with_env(p, job), obj)
    }

    /// Links `inputs` with the C++ driver; `link_flags` decide the main (e.g.
    /// `-fsanitize=fuzzer`), `libs` are the system libraries.
    pub fn link(
        &self,
        p: &Paths,
        inputs: &[PathBuf],
        link_flags: &[&str],
        libs: &[&str],
        out: &Path,
    ) -> Job {
        let mut command = Command::new(self.compilers(p).1);
        command
            .args(self.flags(p))
            .args(link_flags)
            .args(inputs)
            .args(libs)
            .arg("-o")
            .arg(out);
        self.with_env(
            p,
            Job {
                command,
                output: out.to_path_buf(),
                inputs: inputs.to_vec(),
            },
        )
    }
}

/// One library compiled in one flavor.
pub struct LibraryJobs {
    pub compiles: Vec<Job>,
    pub archive_job: Job,
    pub harness: PathBuf,
    pub archive: PathBuf,
}
