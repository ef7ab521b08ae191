//! `harness-builder`: builds every harness with our compiler wrapper into `target/fuzzers/`.
//!
//! Runs after `cargo build --release` (the wrapper and `liblafuzz.a` must exist); cargo-make's
//! `build` task does both. The libraries' sources come from crates.io crates
//! (`harness_builder::library`). Only what is older than its inputs is rebuilt.
//!
//! `harness-builder [--no-yardstick | --for-tests] [NAME...]`: only the named harness groups and
//! libraries (default: all); `--no-yardstick` leaves out the libraries' `-nocmplog` builds,
//! `--for-tests` builds what `cargo make test` needs: the one-file harnesses and
//! [`TESTS_LIBRARY`], without its `-nocmplog` build.

use harness_builder::{
    compile::{self, Job},
    ours, Library, LIBRARIES, TESTS_LIBRARY,
};
use std::{
    env, fs,
    path::{Path, PathBuf},
    process::exit,
};

/// A one-file C harness built into `target/fuzzers/NAME`.
struct CHarness {
    /// The name on the command line that selects it (`harness-builder magic`).
    group: &'static str,
    name: &'static str,
    /// Relative to the repository root.
    source: &'static str,
    /// Flags before the source: the wrapper's (`--standalone`: a target for our
    /// out-of-process modes; `--no-cmplog`) or the compiler's (`-DNO_RESET`).
    flags: &'static [&'static str],
}

const fn c(
    group: &'static str,
    name: &'static str,
    source: &'static str,
    flags: &'static [&'static str],
) -> CHarness {
    CHarness {
        group,
        name,
        source,
        flags,
    }
}

const CRASHME: &str = "harnesses/crashme/crashme.c";
const MAGIC: &str = "harnesses/magic/magic.c";
const STATEFUL: &str = "harnesses/stateful/stateful.c";
const MEMHOG: &str = "harnesses/memhog/memhog.c";

/// The one-file C harnesses, in build order (libpng, built from a library, comes last).
const C_HARNESSES: &[CHarness] = &[
    c("crashme", "crashme", CRASHME, &[]),
    c("crashme", "crashme-standalone", CRASHME, &["--standalone"]),
    c("magic", "magic", MAGIC, &[]),
    c("magic", "magic-nocmplog", MAGIC, &["--no-cmplog"]),
    c("magic", "magic-standalone", MAGIC, &["--standalone"]),
    c(
        "aflstyle",
        "aflstyle-standalone",
        "harnesses/aflstyle/aflstyle.c",
        &["--standalone"],
    ),
    c("memhog", "memhog", MEMHOG, &[]),
    c("memhog", "memhog-standalone", MEMHOG, &["--standalone"]),
    c("memhog", "memhog-asan", MEMHOG, &["-fsanitize=address"]),
    c("stateful", "stateful", STATEFUL, &[]),
    c("stateful", "stateful-noreset", STATEFUL, &["-DNO_RESET"]),
    c(
        "slowinput",
        "slowinput",
        "harnesses/slowinput/slowinput.c",
        &[],
    ),
];

struct Paths {
    /// `target/release`: the wrapper binaries and the runtime.
    bin: PathBuf,
    /// `target/fuzzers`: the built fuzzers.
    fuzzers: PathBuf,
    /// `target/harness-build`: objects and archives.
    build: PathBuf,
    /// The repository root.
    root: PathBuf,
}

fn main() {
    if let Err(msg) = run() {
        eprintln!("harness-builder: error: {msg}");
        exit(1);
    }
}

fn run() -> Result<(), String> {
    let exe = env::current_exe().map_err(|e| e.to_string())?;
    let bin = exe.parent().ok_or("no exe dir")?.to_path_buf();
    let target = bin.parent().ok_or("no target dir")?.to_path_buf();
    let paths = Paths {
        fuzzers: target.join("fuzzers"),
        build: target.join("harness-build"),
        root: Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
        bin,
    };
    for tool in ["libafl_cc", "libafl_cxx", "liblafuzz.a"] {
        if !paths.bin.join(tool).exists() {
            return Err(format!(
                "{} missing: run `cargo build --release` first",
                paths.bin.join(tool).display()
            ));
        }
    }
    fs::create_dir_all(&paths.fuzzers).map_err(|e| e.to_string())?;
    fs::create_dir_all(&paths.build).map_err(|e| e.to_string())?;
    let (flags, wanted): (Vec<String>, Vec<String>) =
        env::args().skip(1).partition(|a| a.starts_with("--"));
    if let Some(unknown) = flags
        .iter()
        .find(|f| !["--no-yardstick", "--for-tests"].contains(&f.as_str()))
    {
        return Err(format!(
            "unknown option {unknown} (only --no-yardstick or --for-tests)"
        ));
    }
    if flags.len() > 1 {
        return Err("--no-yardstick and --for-tests: one at most".into());
    }
    let for_tests = flags.iter().any(|f| f == "--for-tests");
    let want = |name: &str| {
        let named = wanted.is_empty() || wanted.iter().any(|w| w == name);
        let library = LIBRARIES.iter().any(|l| l.name == name);
        named && !(for_tests && library && name != TESTS_LIBRARY)
    };
    let harnesses = C_HARNESSES
        .iter()
        .filter(|h| want(h.group))
        .map(|h| c_harness_job(&paths, h))
        .collect();
    compile::run_all(harnesses)?;
    // The libraries' `-nocmplog` builds: for all, or none (what `run-*` and the tests need).
    let yardstick = flags.is_empty();
    let libraries: Vec<&Library> = LIBRARIES.iter().filter(|l| want(l.name)).collect();
    let places = ours::Places {
        root: &paths.root,
        bin: &paths.bin,
        objects: &paths.build,
        fuzzers: &paths.fuzzers,
    };
    let mut steps = ours::Steps::default();
    let wanted = |name: &str| yardstick || !name.ends_with("-nocmplog");
    ours::plan(&places, &libraries, "-O2", wanted, &mut steps)?;
    steps.run()
}

fn c_harness_job(p: &Paths, h: &CHarness) -> Job {
    let flags: Vec<&str> = ["-O2", "-g"]
        .into_iter()
        .chain(h.flags.iter().copied())
        .collect();
    Job::ours_one_file(
        &p.bin,
        &flags,
        &p.root.join(h.source),
        &p.fuzzers.join(h.name),
    )
}
