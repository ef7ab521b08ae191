//! Builds every peer from the same sources and flags (-O2): each library of the suite (from
//! its crates.io crate) with its harness, for libFuzzer, AFL++ (persistent, CmpLog, one file
//! per run) and llvm-cov; the empty and the magic harnesses. Ours come from `cargo make
//! build` (`target/fuzzers/`), except the empty harness's and, in quick runs, the suite's
//! (built here unoptimized as the peers are, from `harness-builder`'s list,
//! `harness_builder::ours`: a quick run checks that everything builds and runs, and `cargo
//! make test` then builds no optimized library it does not fuzz). Only what
//! is older than its inputs is rebuilt (ours whenever our runtime is newer).

use std::path::PathBuf;

use harness_builder::{
    compile::Job,
    ours::{self, Places, Steps},
    Library,
};

use crate::{
    build_lock::BuildLock,
    flavor::{
        Flavor, LibraryJobs, AFL, AFL_CMPLOG, AFL_CMPLOG_ASAN, COVERAGE, LIBFUZZER, LIBFUZZER_ASAN,
        OURS_ASAN, PLAIN,
    },
    fuzzers::Bin,
    paths::Paths,
};

/// What goes into a link besides the library.
#[derive(Debug, Clone, Copy)]
enum Main {
    /// The fuzzer's own main (libFuzzer's, or with AFL++'s compilers its persistent driver).
    Fuzzer,
    /// A `bench/c/` helper with a `main`.
    Helper(&'static str),
}

/// A build of every target: `target/bench-build/NAME SUFFIX`.
struct TargetBuild {
    suffix: &'static str,
    flavor: &'static Flavor,
    main: Main,
}

const TARGET_BUILDS: &[TargetBuild] = &[
    TargetBuild {
        suffix: "-libfuzzer",
        flavor: &LIBFUZZER,
        main: Main::Fuzzer,
    },
    // Replays a list of inputs, for coverage.
    TargetBuild {
        suffix: "-cov",
        flavor: &COVERAGE,
        main: Main::Helper("bench/c/replay_main.c"),
    },
    TargetBuild {
        suffix: "-afl",
        flavor: &AFL,
        main: Main::Fuzzer,
    },
    TargetBuild {
        suffix: "-afl-cmplog",
        flavor: &AFL_CMPLOG,
        main: Main::Fuzzer,
    },
    // One input file per run (`@@`): AFL++'s fork server without its persistent loop.
    TargetBuild {
        suffix: "-afl-onefile",
        flavor: &AFL,
        main: Main::Helper("bench/c/onefile_main.c"),
    },
];

/// The bug benchmark's targets, with AddressSanitizer: ours, libFuzzer's (also the bench's
/// judge of every fuzzer's crashes) and AFL++'s with CmpLog.
const BUG_BUILDS: &[TargetBuild] = &[
    TargetBuild {
        suffix: "-ours-asan",
        flavor: &OURS_ASAN,
        main: Main::Fuzzer,
    },
    TargetBuild {
        suffix: "-libfuzzer-asan",
        flavor: &LIBFUZZER_ASAN,
        main: Main::Fuzzer,
    },
    TargetBuild {
        suffix: "-afl-cmplog-asan",
        flavor: &AFL_CMPLOG_ASAN,
        main: Main::Fuzzer,
    },
];

/// No fuzzer: the libpng harness in a loop over the seeds (an extra).
const BARE_LOOP: TargetBuild = TargetBuild {
    suffix: "-bare",
    flavor: &PLAIN,
    main: Main::Helper("bench/c/bare_loop.c"),
};

/// A one-file harness built by a peer, or by our wrapper (`flavor` None).
struct OneFileBuild {
    bin: Bin,
    source: &'static str,
    flavor: Option<&'static Flavor>,
}

const MAGIC: &str = "harnesses/magic/magic.c";
const EMPTY: &str = "bench/c/empty.c";

const ONE_FILE_BUILDS: &[OneFileBuild] = &[
    OneFileBuild {
        bin: Bin::bench("empty", "-libfuzzer"),
        source: EMPTY,
        flavor: Some(&LIBFUZZER),
    },
    OneFileBuild {
        bin: Bin::bench("empty", "-lafuzz"),
        source: EMPTY,
        flavor: None,
    },
    OneFileBuild {
        bin: Bin::bench("empty", "-afl"),
        source: EMPTY,
        flavor: Some(&AFL),
    },
    OneFileBuild {
        bin: Bin::bench("magic", "-libfuzzer"),
        source: MAGIC,
        flavor: Some(&LIBFUZZER),
    },
    OneFileBuild {
        bin: Bin::bench("magic", "-afl"),
        source: MAGIC,
        flavor: Some(&AFL),
    },
    OneFileBuild {
        bin: Bin::bench("magic", "-afl-cmplog"),
        source: MAGIC,
        flavor: Some(&AFL_CMPLOG),
    },
];

/// The jobs of each build step: compiles, archives, links.
#[derive(Default)]
struct Plan {
    steps: Steps,
    /// (library, flavor) pairs already planned, with their harness object and archive.
    libraries: Vec<(&'static str, &'static str, PathBuf, PathBuf)>,
}

impl Plan {
    /// `lib` in `flavor` (once): its harness object and archive.
    fn library(
        &mut self,
        p: &Paths,
        lib: &'static Library,
        flavor: &'static Flavor,
    ) -> Result<(PathBuf, PathBuf), String> {
        if let Some((_, _, harness, archive)) = self
            .libraries
            .iter()
            .find(|(l, f, _, _)| *l == lib.name && *f == flavor.name)
        {
            return Ok((harness.clone(), archive.clone()));
        }
        let LibraryJobs {
            compiles,
            archive_job,
            harness,
            archive,
        } = flavor.library(p, lib)?;
        self.steps.compiles.extend(compiles);
        self.steps.archives.push(archive_job);
        self.libraries
            .push((lib.name, flavor.name, harness.clone(), archive.clone()));
        Ok((harness, archive))
    }

    /// A one-file helper compiled in `flavor` (once: every target links the same object, and
    /// two jobs writing one file in parallel would race).
    fn helper(&mut self, p: &Paths, flavor: &Flavor, source: &str) -> PathBuf {
        let (job, obj) = flavor.helper(p, &p.root.join(source));
        if !self.steps.compiles.iter().any(|j| j.output == obj) {
            self.steps.compiles.push(job);
        }
        obj
    }

    fn target(&mut self, p: &Paths, lib: &'static Library, b: &TargetBuild) -> Result<(), String> {
        let (harness, archive) = self.library(p, lib, b.flavor)?;
        let mut inputs = vec![harness];
        let link_flags: &[&str] = match b.main {
            // Our wrapper links our runtime, main included.
            Main::Fuzzer if b.flavor.is_ours() => &[],
            Main::Fuzzer => &["-fsanitize=fuzzer"],
            Main::Helper(source) => {
                inputs.push(self.helper(p, b.flavor, source));
                &[]
            }
        };
        inputs.push(archive);
        let out = Bin::bench(lib.name, b.suffix).path(p);
        let mut link = b.flavor.link(p, &inputs, link_flags, lib.libs, &out);
        if b.flavor.is_ours() {
            link.inputs.push(p.release.join("liblafuzz.a"));
        }
        self.steps.links.push(link);
        Ok(())
    }

    fn one_file(&mut self, p: &Paths, b: &OneFileBuild) {
        let out = b.bin.path(p);
        let source = p.root.join(b.source);
        match b.flavor {
            Some(flavor) => {
                let obj = self.helper(p, flavor, b.source);
                self.steps
                    .links
                    .push(flavor.link(p, &[obj], &["-fsanitize=fuzzer"], &[], &out));
            }
            None => self
                .steps
                .links
                .push(Job::ours_one_file(&p.release, &["-O2"], &source, &out)),
        }
    }
}

fn needs_afl(flavor: &Flavor) -> bool {
    flavor.needs_afl
}

/// Builds what the chosen `targets` and the extras need (AFL++'s builds only if `with_afl`),
/// and in quick runs `ours`, the builds of ours the run fuzzes (`fuzzers::ours_builds`).
pub fn build_all(
    p: &Paths,
    with_afl: bool,
    targets: &[&'static Library],
    extras: bool,
    ours: &[Bin],
) -> Result<(), String> {
    std::fs::create_dir_all(&p.build).map_err(|e| e.to_string())?;
    let _lock = BuildLock::take(&p.build)?;
    let mut plan = Plan::default();
    if p.quick {
        let places = Places {
            root: &p.root,
            bin: &p.release,
            objects: &p.build.join("objects-ours"),
            // Where `Bin::path` finds ours in quick runs.
            fuzzers: &p.build,
        };
        let wanted = |name: &str| ours.iter().any(|b| b.name() == name);
        ours::plan(&places, targets, "-O0", wanted, &mut plan.steps)?;
    }
    for lib in targets {
        for b in TARGET_BUILDS
            .iter()
            .filter(|b| with_afl || !needs_afl(b.flavor))
        {
            plan.target(p, lib, b)?;
        }
        if extras && lib.name == "libpng" {
            plan.target(p, lib, &BARE_LOOP)?;
        }
    }
    if extras {
        for b in ONE_FILE_BUILDS
            .iter()
            .filter(|b| with_afl || !b.flavor.is_some_and(needs_afl))
        {
            plan.one_file(p, b);
        }
    }
    plan.steps.run()
}

/// Builds the bug benchmark's `targets` (AFL++'s only if `with_afl`).
pub fn build_bug_targets(
    p: &Paths,
    with_afl: bool,
    targets: &[&'static Library],
) -> Result<(), String> {
    std::fs::create_dir_all(&p.build).map_err(|e| e.to_string())?;
    let _lock = BuildLock::take(&p.build)?;
    let mut plan = Plan::default();
    for lib in targets {
        for b in BUG_BUILDS
            .iter()
            .filter(|b| with_afl || !needs_afl(b.flavor))
        {
            plan.target(p, lib, b)?;
        }
    }
    plan.steps.run()
}
