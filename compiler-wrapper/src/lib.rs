//! `libafl_cc` / `libafl_cxx`: clang wrappers that add SanitizerCoverage inline 8-bit counters
//! to every compiled file and, when linking an executable, link the fuzzer runtime
//! (`liblafuzz.a`) so the result is a fuzzer with the `lafuzz` command line.
//!
//! With `--standalone` (or `LAFUZZ_STANDALONE=1`) an executable gets the standalone runtime
//! instead: an ordinary program that runs its input files, and speaks AFL++'s fork server
//! protocol when a fuzzer (ours in `forkserver`/`persistent` mode, or afl-fuzz) runs it.
//!
//! Comparison logging (CmpLog) is on by default for the in-process runtime: SanitizerCoverage
//! `trace-cmp` for integer comparisons, and `memcmp`/`strcmp`-style calls kept as calls (not
//! inlined by the compiler) so the runtime's interceptors log them. A pass plugin of ours
//! (`pass/cmp-guard.cc`) calls each `trace-cmp` hook only while a tracing run is on, so other
//! executions pay a load and an untaken branch per comparison instead of a call. `--no-cmplog`
//! (or `LAFUZZ_NO_CMPLOG=1`) turns it off.
//!
//! With `--coverage` (or `LAFUZZ_COVERAGE=1`) the target gets clang's source-based coverage
//! instead (`-fprofile-instr-generate -fcoverage-mapping`, as `cargo fuzz coverage` builds it):
//! no SanitizerCoverage, no comparison logging, no passes. The fuzzer runtime is linked as
//! usual, so the binary has the same command line; its `coverage` command runs a corpus and
//! reports the lines and branches it reached.
//!
//! The runtimes and passes are found by `parts.rs`: where cargo built them, or in an install's
//! `lib/lafuzz/` beside the wrapper's `bin/` (`cargo make install PREFIX=DIR`);
//! `--print-parts` lists them.

use std::{env, path::PathBuf, process};

use libafl_cc::{ClangWrapper, CompilerWrapper, ToolWrapper};

mod parts;
pub use parts::Part;

/// Linker script giving the 8-bit counters whole pages of their own: fork mode maps those pages
/// shared with its children, which must not share any other global with the parent. The page is
/// the runtime header's `LAFUZZ_PAGE_SIZE` (handed over by the build script).
fn counters_linker_script_text() -> String {
    let page = env!("LAFUZZ_PAGE_SIZE");
    format!(
        "/* lafuzz: coverage counters alone on their pages (see compiler-wrapper) */\n\
         SECTIONS\n\
         {{\n\
         \x20 __sancov_cntrs : ALIGN({page}) {{ *(__sancov_cntrs) }}\n\
         \x20 . = ALIGN({page});\n\
         }}\n\
         INSERT AFTER .bss;\n"
    )
}

/// Writes the linker script once (named by its content) and returns its path.
fn counters_linker_script() -> std::io::Result<PathBuf> {
    let script = counters_linker_script_text();
    let hash = script.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = env::temp_dir().join(format!("lafuzz-counters-{hash:016x}.ld"));
    if !path.exists() {
        let tmp = path.with_extension(format!("{}.tmp", process::id()));
        std::fs::write(&tmp, &script)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(path)
}

/// AFL++'s source-level API, as afl-clang-fast defines it, mapped onto the standalone runtime.
const AFL_API_DEFINES: &[&str] = &[
    "-D__AFL_HAVE_MANUAL_CONTROL=1",
    // Declared in place, bound to the C symbol by an asm label: works in C and C++ alike.
    "-D__AFL_INIT()=do { void _lafuzz_init(void) __asm__(\"__afl_manual_init\"); _lafuzz_init(); } while (0)",
    "-D__AFL_LOOP(_n)=({ int _lafuzz_loop(unsigned int) __asm__(\"__afl_persistent_loop\"); _lafuzz_loop(_n); })",
    "-D__AFL_FUZZ_INIT()=int __afl_sharedmem_fuzzing = 1; extern unsigned int *__afl_fuzz_len; extern unsigned char *__afl_fuzz_ptr; unsigned char __afl_fuzz_alt[1048576]; unsigned char *__afl_fuzz_alt_ptr = __afl_fuzz_alt;",
    "-D__AFL_FUZZ_TESTCASE_BUF=(__afl_fuzz_ptr ? __afl_fuzz_ptr : __afl_fuzz_alt_ptr)",
    "-D__AFL_FUZZ_TESTCASE_LEN=(__afl_fuzz_ptr ? *__afl_fuzz_len : (*__afl_fuzz_len = read(0, __afl_fuzz_alt_ptr, 1048576)) == 0xffffffff ? 0 : *__afl_fuzz_len)",
    "-D__AFL_COVERAGE()=int __afl_selective_coverage = 1",
];

/// Comparison logging: integer compares through SanitizerCoverage hooks, and the string and
/// memory comparison functions kept as calls so the runtime's interceptors see them.
const CMPLOG_FLAGS: &[&str] = &[
    "-fsanitize-coverage=trace-cmp",
    "-fno-builtin-memcmp",
    "-fno-builtin-bcmp",
    "-fno-builtin-strcmp",
    "-fno-builtin-strncmp",
    "-fno-builtin-strcasecmp",
    "-fno-builtin-strncasecmp",
    "-fno-builtin-strstr",
    "-fno-builtin-memmem",
];

/// Source-based coverage, for the `coverage` command's reports (clang adds the profile runtime
/// when linking with the first flag).
const SOURCE_COVERAGE_FLAGS: &[&str] = &["-fprofile-instr-generate", "-fcoverage-mapping"];

/// Removes `flag` from `args`; true if it was there.
fn take_flag(args: &mut Vec<String>, flag: &str) -> bool {
    let before = args.len();
    args.retain(|a| a != flag);
    args.len() != before
}

/// libFuzzer's own engine flags, which OSS-Fuzz-style builds pass (`-fsanitize=fuzzer-no-link`
/// in `CFLAGS`, `-fsanitize=fuzzer` as `$LIB_FUZZING_ENGINE`): this wrapper is the engine, so
/// they are dropped (other sanitizers in the same list are kept), and a link gets our runtime.
fn without_libfuzzer_flags(args: Vec<String>) -> Vec<String> {
    args.into_iter()
        .filter_map(|arg| {
            let Some(list) = arg.strip_prefix("-fsanitize=") else {
                return Some(arg);
            };
            let kept: Vec<&str> = list
                .split(',')
                .filter(|s| *s != "fuzzer" && *s != "fuzzer-no-link")
                .collect();
            (!kept.is_empty()).then(|| format!("-fsanitize={}", kept.join(",")))
        })
        .collect()
}

fn env_on(name: &str) -> bool {
    env::var(name).is_ok_and(|v| v == "1")
}

/// The part's path, `None` for a pass the build left out; a part that is missing ends the wrapper
/// with an error naming it, rather than a build without it.
fn part(part: Part) -> Option<PathBuf> {
    part.find().unwrap_or_else(|e| {
        eprintln!("libafl_cc: error: {e}");
        process::exit(1);
    })
}

/// `--print-parts`: each part's path, one per line (what `cargo make install` copies).
fn print_parts() -> ! {
    for p in Part::ALL {
        match p.find() {
            Ok(Some(path)) => println!("{}", path.display()),
            Ok(None) => {}
            Err(e) => {
                eprintln!("libafl_cc: error: {e}");
                process::exit(1);
            }
        }
    }
    process::exit(0)
}

/// What a fuzzing build adds to every compile: SanitizerCoverage's 8-bit counters, comparison
/// logging (unless turned off) and the autotokens pass.
fn add_fuzzing_instrumentation(cc: &mut ClangWrapper, cmplog: bool) {
    cc.add_arg("-fsanitize-coverage=inline-8bit-counters");
    if cmplog {
        for flag in CMPLOG_FLAGS {
            cc.add_arg(flag);
        }
        if let Some(pass) = part(Part::CmpGuardPass) {
            cc.add_arg(format!("-fpass-plugin={}", pass.display()));
        }
    }
    if let Some(pass) = part(Part::AutotokensPass) {
        // As libafl_cc's `add_pass` loads its passes, from wherever the part is.
        let pass = pass.display().to_string();
        for arg in ["-Xclang", "-load", "-Xclang", &pass, "-Xclang"] {
            cc.add_arg(arg);
        }
        cc.add_arg(format!("-fpass-plugin={pass}"));
    }
}

/// Runs clang (C or C++) with our instrumentation and runtime, and exits with its status.
pub fn run(is_cpp: bool) -> ! {
    let mut args = without_libfuzzer_flags(env::args().collect());
    let standalone = take_flag(&mut args, "--standalone") || env_on("LAFUZZ_STANDALONE");
    let source_coverage = take_flag(&mut args, "--coverage") || env_on("LAFUZZ_COVERAGE");
    let cmplog = !(take_flag(&mut args, "--no-cmplog") || env_on("LAFUZZ_NO_CMPLOG"));
    if source_coverage && standalone {
        eprintln!(
            "libafl_cc: error: --coverage builds the fuzzer runtime's binary, not --standalone"
        );
        process::exit(2);
    }
    if args.len() <= 1 {
        eprintln!(
            "usage: {} [clang arguments]  (compiles with coverage, links the lafuzz runtime)",
            args.first().map_or("libafl_cc", String::as_str)
        );
        process::exit(2);
    }
    if args.get(1).map(String::as_str) == Some("--print-parts") {
        print_parts();
    }
    let mut cc = ClangWrapper::new();
    cc.cpp(is_cpp)
        .silence(true)
        // Our flags come from the build, not from the user's CFLAGS: keep the user's -O level.
        .dont_optimize();
    if let Err(e) = cc.parse_args(&args) {
        eprintln!("libafl_cc: cannot parse arguments: {e:?}");
        process::exit(2);
    }
    if source_coverage {
        for flag in SOURCE_COVERAGE_FLAGS {
            cc.add_arg(flag);
        }
    } else {
        add_fuzzing_instrumentation(&mut cc, cmplog);
    }
    if standalone {
        for define in AFL_API_DEFINES {
            cc.add_arg(define);
        }
        if cc.is_linking() {
            let runtime = part(Part::StandaloneRuntime).unwrap_or_default();
            cc.add_link_arg("-Wl,--whole-archive")
                .add_link_arg(runtime.display().to_string())
                .add_link_arg("-Wl,--no-whole-archive");
        }
    } else if cc.is_linking() {
        let runtime = part(Part::Runtime).unwrap_or_default();
        cc.add_link_arg("-Wl,--whole-archive")
            .add_link_arg(runtime.display().to_string())
            .add_link_arg("-Wl,--no-whole-archive");
    }
    if cc.is_linking() {
        match counters_linker_script() {
            Ok(script) => {
                cc.add_link_arg(format!("-Wl,-T,{}", script.display()));
            }
            Err(e) => {
                eprintln!("libafl_cc: cannot write the counters linker script: {e}");
                process::exit(1);
            }
        }
    }
    match cc.run() {
        Ok(Some(code)) => process::exit(code),
        Ok(None) => process::exit(0),
        Err(e) => {
            eprintln!("libafl_cc: {e:?}");
            process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libfuzzer_engine_flags_are_dropped_other_sanitizers_kept() {
        let args = [
            "cc",
            "-fsanitize=fuzzer",
            "-fsanitize=address,fuzzer-no-link",
            "-O1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            without_libfuzzer_flags(args),
            ["cc", "-fsanitize=address", "-O1"]
                .map(String::from)
                .to_vec()
        );
    }
}
