//! Builds every peer from the same sources and flags (-O2): libpng (from the `libpng-src`
//! crate) with libFuzzer, AFL++, a coverage build and a plain build; the empty and the magic
//! harnesses. Ours come from `cargo make build` (`target/fuzzers/`).

use harness_builder::LIBPNG_SOURCES;
use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    thread,
};

pub struct Paths {
    pub root: PathBuf,
    pub fuzzers: PathBuf,
    pub release: PathBuf,
    pub build: PathBuf,
}

impl Paths {
    pub fn new() -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let release = exe.parent().ok_or("no exe dir")?.to_path_buf();
        let target = release.parent().ok_or("no target dir")?.to_path_buf();
        Ok(Self {
            root: Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .ok_or("no repository root")?
                .to_path_buf(),
            fuzzers: target.join("fuzzers"),
            build: target.join("bench-build"),
            release,
        })
    }
    pub fn bin(&self, name: &str) -> PathBuf {
        self.build.join(name)
    }
}

/// One way of compiling: C compiler, C++ compiler, flags for compiling, env.
struct Flavor {
    name: &'static str,
    cc: &'static str,
    cxx: &'static str,
    cflags: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const LIBFUZZER: Flavor = Flavor {
    name: "libfuzzer",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2", "-fsanitize=fuzzer-no-link"],
    env: &[],
};
const AFL: Flavor = Flavor {
    name: "afl",
    cc: "afl-clang-fast",
    cxx: "afl-clang-fast++",
    cflags: &["-O2"],
    env: &[("AFL_QUIET", "1")],
};
const AFL_CMPLOG: Flavor = Flavor {
    name: "afl-cmplog",
    cc: "afl-clang-fast",
    cxx: "afl-clang-fast++",
    cflags: &["-O2"],
    env: &[("AFL_QUIET", "1"), ("AFL_LLVM_CMPLOG", "1")],
};
const COVERAGE: Flavor = Flavor {
    name: "cov",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2", "-fprofile-instr-generate", "-fcoverage-mapping"],
    env: &[],
};
const PLAIN: Flavor = Flavor {
    name: "plain",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2"],
    env: &[],
};

fn run(program: &str, args: &[String], env: &[(&str, &str)]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} {} failed ({status})", args.join(" ")))
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

impl Flavor {
    fn compile_c(&self, src: &Path, obj: &Path, include: &[&Path]) -> Result<(), String> {
        let mut args: Vec<String> = self.cflags.iter().map(|f| f.to_string()).collect();
        for dir in include {
            args.push(format!("-I{}", s(dir)));
        }
        args.extend(["-c".into(), s(src), "-o".into(), s(obj)]);
        run(self.cc, &args, self.env)
    }

    /// Links with the C++ driver; `link_flags` decide the main (e.g. `-fsanitize=fuzzer`).
    fn link(&self, inputs: &[PathBuf], link_flags: &[&str], out: &Path) -> Result<(), String> {
        let mut args: Vec<String> = self.cflags.iter().map(|f| f.to_string()).collect();
        args.extend(link_flags.iter().map(|f| f.to_string()));
        args.extend(inputs.iter().map(|p| s(p)));
        args.extend(["-lz".into(), "-o".into(), s(out)]);
        run(self.cxx, &args, self.env)
    }

    /// libpng as a static library, compiled in this flavor.
    fn libpng(&self, p: &Paths) -> Result<PathBuf, String> {
        let dir = p.build.join(format!("libpng-objects-{}", self.name));
        let archive = dir.join("libpng.a");
        if archive.exists() {
            return Ok(archive);
        }
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let src = libpng_src::source_path();
        fs::copy(
            src.join("scripts/pnglibconf.h.prebuilt"),
            dir.join("pnglibconf.h"),
        )
        .map_err(|e| e.to_string())?;
        let objs: Vec<PathBuf> = LIBPNG_SOURCES
            .iter()
            .map(|f| dir.join(f.replace(".c", ".o")))
            .collect();
        thread::scope(|scope| {
            let jobs: Vec<_> = LIBPNG_SOURCES
                .chunks(LIBPNG_SOURCES.len().div_ceil(2))
                .map(|chunk| {
                    let (src, dir) = (&src, &dir);
                    scope.spawn(move || {
                        chunk.iter().try_for_each(|f| {
                            self.compile_c(
                                &src.join(f),
                                &dir.join(f.replace(".c", ".o")),
                                &[dir, src],
                            )
                        })
                    })
                })
                .collect();
            jobs.into_iter().try_for_each(|j| {
                j.join()
                    .map_err(|_| "compile thread panicked".to_string())?
            })
        })?;
        let mut args = vec!["rcs".to_string(), s(&archive)];
        args.extend(objs.iter().map(|o| s(o)));
        run("ar", &args, &[])?;
        Ok(archive)
    }
}

/// Compiles a C helper (`bench/c/NAME.c` or a harness) to an object in this flavor.
fn helper(p: &Paths, flavor: &Flavor, source: &Path) -> Result<PathBuf, String> {
    let stem = source.file_stem().unwrap().to_string_lossy();
    let obj = p.build.join(format!("{stem}-{}.o", flavor.name));
    flavor.compile_c(source, &obj, &[])?;
    Ok(obj)
}

/// Builds `out` with `f` unless it exists.
fn once(out: &Path, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    if out.exists() {
        return Ok(());
    }
    println!("bench: building {}", out.display());
    f()
}

/// Everything the bench runs that is not ours.
pub fn build_all(p: &Paths, with_afl: bool) -> Result<(), String> {
    fs::create_dir_all(&p.build).map_err(|e| e.to_string())?;
    let harness = p.root.join("harnesses/libpng/libpng_read_fuzzer.cc");
    let src = libpng_src::source_path();
    let c = |name: &str| p.root.join("bench/c").join(format!("{name}.c"));
    let include = |dir: &Path| vec![format!("-I{}", s(dir)), format!("-I{}", s(&src))];

    // The harness object per flavor needs libpng's headers and that flavor's pnglibconf.h.
    let harness_obj = |flavor: &Flavor| -> Result<PathBuf, String> {
        let lib = flavor.libpng(p)?;
        let obj = p
            .build
            .join(format!("libpng_read_fuzzer-{}.o", flavor.name));
        let mut args: Vec<String> = flavor.cflags.iter().map(|f| f.to_string()).collect();
        args.extend(include(lib.parent().unwrap()));
        args.extend(["-c".into(), s(&harness), "-o".into(), s(&obj)]);
        run(flavor.cxx, &args, flavor.env)?;
        Ok(obj)
    };

    once(&p.bin("libpng-libfuzzer"), || {
        let lib = LIBFUZZER.libpng(p)?;
        LIBFUZZER.link(
            &[harness_obj(&LIBFUZZER)?, lib],
            &["-fsanitize=fuzzer"],
            &p.bin("libpng-libfuzzer"),
        )
    })?;
    once(&p.bin("libpng-cov"), || {
        let lib = COVERAGE.libpng(p)?;
        COVERAGE.link(
            &[
                harness_obj(&COVERAGE)?,
                helper(p, &COVERAGE, &c("replay_main"))?,
                lib,
            ],
            &[],
            &p.bin("libpng-cov"),
        )
    })?;
    once(&p.bin("libpng-bare"), || {
        let lib = PLAIN.libpng(p)?;
        PLAIN.link(
            &[
                harness_obj(&PLAIN)?,
                helper(p, &PLAIN, &c("bare_loop"))?,
                lib,
            ],
            &[],
            &p.bin("libpng-bare"),
        )
    })?;
    once(&p.bin("empty-libfuzzer"), || {
        LIBFUZZER.link(
            &[helper(p, &LIBFUZZER, &c("empty"))?],
            &["-fsanitize=fuzzer"],
            &p.bin("empty-libfuzzer"),
        )
    })?;
    once(&p.bin("empty-lafuzz"), || {
        run(
            &s(&p.release.join("libafl_cc")),
            &[
                "-O2".into(),
                s(&c("empty")),
                "-o".into(),
                s(&p.bin("empty-lafuzz")),
            ],
            &[],
        )
    })?;
    let magic = p.root.join("harnesses/magic/magic.c");
    once(&p.bin("magic-libfuzzer"), || {
        LIBFUZZER.link(
            &[helper(p, &LIBFUZZER, &magic)?],
            &["-fsanitize=fuzzer"],
            &p.bin("magic-libfuzzer"),
        )
    })?;
    if with_afl {
        once(&p.bin("libpng-afl"), || {
            let lib = AFL.libpng(p)?;
            AFL.link(
                &[harness_obj(&AFL)?, lib],
                &["-fsanitize=fuzzer"],
                &p.bin("libpng-afl"),
            )
        })?;
        once(&p.bin("libpng-afl-onefile"), || {
            let lib = AFL.libpng(p)?;
            AFL.link(
                &[
                    harness_obj(&AFL)?,
                    helper(p, &AFL, &c("onefile_main"))?,
                    lib,
                ],
                &[],
                &p.bin("libpng-afl-onefile"),
            )
        })?;
        once(&p.bin("empty-afl"), || {
            AFL.link(
                &[helper(p, &AFL, &c("empty"))?],
                &["-fsanitize=fuzzer"],
                &p.bin("empty-afl"),
            )
        })?;
        once(&p.bin("magic-afl"), || {
            AFL.link(
                &[helper(p, &AFL, &magic)?],
                &["-fsanitize=fuzzer"],
                &p.bin("magic-afl"),
            )
        })?;
        once(&p.bin("magic-afl-cmplog"), || {
            AFL_CMPLOG.link(
                &[helper(p, &AFL_CMPLOG, &magic)?],
                &["-fsanitize=fuzzer"],
                &p.bin("magic-afl-cmplog"),
            )
        })?;
    }
    Ok(())
}
