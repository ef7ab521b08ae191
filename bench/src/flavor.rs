//! The ways the bench compiles the peers (-O2 each): libFuzzer, AFL++, AFL++ CmpLog, llvm-cov
//! and plain; and what each compiles: libpng, the libpng harness, one-file helpers.

use harness_builder::LIBPNG_SOURCES;
use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    thread,
};

use crate::paths::Paths;

/// One way of compiling: C compiler, C++ compiler, flags for compiling, env.
pub struct Flavor {
    name: &'static str,
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
pub const PLAIN: Flavor = Flavor {
    name: "plain",
    cc: "clang-19",
    cxx: "clang++-19",
    cflags: &["-O2"],
    env: &[],
    needs_afl: false,
};

pub fn run(program: &str, args: &[String], env: &[(&str, &str)]) -> Result<(), String> {
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

pub fn s(p: &Path) -> String {
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
    pub fn link(&self, inputs: &[PathBuf], link_flags: &[&str], out: &Path) -> Result<(), String> {
        let mut args: Vec<String> = self.cflags.iter().map(|f| f.to_string()).collect();
        args.extend(link_flags.iter().map(|f| f.to_string()));
        args.extend(inputs.iter().map(|p| s(p)));
        args.extend(["-lz".into(), "-o".into(), s(out)]);
        run(self.cxx, &args, self.env)
    }

    /// libpng as a static library, compiled in this flavor.
    pub fn libpng(&self, p: &Paths) -> Result<PathBuf, String> {
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

    /// The libpng harness as an object in this flavor: it needs libpng's headers and this
    /// flavor's pnglibconf.h (so libpng is built first).
    pub fn libpng_harness(&self, p: &Paths) -> Result<PathBuf, String> {
        let lib = self.libpng(p)?;
        let harness = p.root.join("harnesses/libpng/libpng_read_fuzzer.cc");
        let obj = p.build.join(format!("libpng_read_fuzzer-{}.o", self.name));
        let mut args: Vec<String> = self.cflags.iter().map(|f| f.to_string()).collect();
        args.extend([
            format!("-I{}", s(lib.parent().unwrap())),
            format!("-I{}", s(&libpng_src::source_path())),
        ]);
        args.extend(["-c".into(), s(&harness), "-o".into(), s(&obj)]);
        run(self.cxx, &args, self.env)?;
        Ok(obj)
    }

    /// A one-file C helper (`bench/c/NAME.c` or a harness) as an object in this flavor.
    pub fn helper(&self, p: &Paths, source: &Path) -> Result<PathBuf, String> {
        let stem = source.file_stem().unwrap().to_string_lossy();
        let obj = p.build.join(format!("{stem}-{}.o", self.name));
        self.compile_c(source, &obj, &[])?;
        Ok(obj)
    }
}
