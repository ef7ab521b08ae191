//! `harness-builder`: builds every harness with our compiler wrapper into `target/fuzzers/`.
//!
//! Runs after `cargo build --release` (the wrapper and `liblafuzz.a` must exist); cargo-make's
//! `build` task does both. libpng's source comes from the `libpng-src` crate.

use harness_builder::LIBPNG_SOURCES;
use std::{
    env, fs,
    path::{Path, PathBuf},
    process::{exit, Command},
    thread,
    time::SystemTime,
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
];

/// libpng compiled one way (in `target/harness-build/DIR`, with the wrapper's `flags`) and
/// the fuzzers linked from those objects, each with its own link flag.
struct LibpngBuild {
    dir: &'static str,
    flags: &'static [&'static str],
    fuzzers: &'static [(&'static str, Option<&'static str>)],
}

/// The in-process fuzzer and the standalone target share objects; the build without
/// comparison logging is the bench's yardstick for what comparison logging costs.
const LIBPNG_BUILDS: &[LibpngBuild] = &[
    LibpngBuild {
        dir: "libpng",
        flags: &[],
        fuzzers: &[
            ("libpng", None),
            ("libpng-standalone", Some("--standalone")),
        ],
    },
    LibpngBuild {
        dir: "libpng-nocmplog",
        flags: &["--no-cmplog"],
        fuzzers: &[("libpng-nocmplog", None)],
    },
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
    let wanted: Vec<String> = env::args().skip(1).collect();
    let want = |name: &str| wanted.is_empty() || wanted.iter().any(|w| w == name);
    for h in C_HARNESSES.iter().filter(|h| want(h.group)) {
        build_c(&paths, h)?;
    }
    if want("libpng") {
        for build in LIBPNG_BUILDS {
            build_libpng(&paths, build)?;
        }
    }
    Ok(())
}

fn run_cmd(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("command failed ({status}): {cmd:?}"))
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// True when `output` is missing or older than any of `inputs`.
fn stale(output: &Path, inputs: &[&Path]) -> bool {
    let Some(out) = modified(output) else {
        return true;
    };
    inputs.iter().any(|i| modified(i).is_none_or(|t| t > out))
}

fn build_c(p: &Paths, h: &CHarness) -> Result<(), String> {
    let out = p.fuzzers.join(h.name);
    println!("building {}", out.display());
    run_cmd(
        Command::new(p.bin.join("libafl_cc"))
            .args(["-O2", "-g"])
            .args(h.flags)
            .arg(p.root.join(h.source))
            .arg("-o")
            .arg(&out),
    )
}

fn build_libpng(p: &Paths, how: &LibpngBuild) -> Result<(), String> {
    let src = libpng_src::source_path();
    let build = p.build.join(how.dir);
    fs::create_dir_all(&build).map_err(|e| e.to_string())?;
    fs::copy(
        src.join("scripts/pnglibconf.h.prebuilt"),
        build.join("pnglibconf.h"),
    )
    .map_err(|e| format!("cannot copy pnglibconf.h: {e}"))?;

    let cc = p.bin.join("libafl_cc");
    let jobs: Vec<(PathBuf, PathBuf)> = LIBPNG_SOURCES
        .iter()
        .map(|name| {
            let obj = build.join(name.replace(".c", ".o"));
            (src.join(name), obj)
        })
        .filter(|(c, o)| stale(o, &[c, &cc]))
        .collect();
    println!("compiling {} libpng source file(s)", jobs.len());
    let threads = thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = jobs.len().div_ceil(threads).max(1);
    thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                s.spawn(|| {
                    part.iter().try_for_each(|(c, o)| {
                        run_cmd(
                            Command::new(&cc)
                                .args(how.flags)
                                .args(["-O2", "-g", "-c"])
                                .arg("-I")
                                .arg(&build)
                                .arg("-I")
                                .arg(&src)
                                .arg(c)
                                .arg("-o")
                                .arg(o),
                        )
                    })
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .map_err(|_| "compile thread panicked".to_string())?
        })
    })?;

    let archive = build.join("libpng.a");
    let _ = fs::remove_file(&archive);
    run_cmd(
        Command::new("ar").arg("rcs").arg(&archive).args(
            LIBPNG_SOURCES
                .iter()
                .map(|n| build.join(n.replace(".c", ".o"))),
        ),
    )?;

    for &(name, extra) in how.fuzzers {
        let out = p.fuzzers.join(name);
        println!("building {}", out.display());
        run_cmd(
            Command::new(p.bin.join("libafl_cxx"))
                .args(how.flags)
                .args(extra)
                .args(["-O2", "-g"])
                .arg("-I")
                .arg(&build)
                .arg("-I")
                .arg(&src)
                .arg(p.root.join("harnesses/libpng/libpng_read_fuzzer.cc"))
                .arg(&archive)
                .args(["-lz", "-o"])
                .arg(&out),
        )?;
    }
    Ok(())
}
