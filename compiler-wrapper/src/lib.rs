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

use std::{env, path::PathBuf, process};

use libafl_cc::{ClangWrapper, CompilerWrapper, LLVMPasses, ToolWrapper};

/// Name of the runtime static library (`lib<name>.a`) linked into every executable.
const RUNTIME_LIB: &str = "lafuzz";

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

/// Where `liblafuzz.a` lives: `LAFUZZ_RUNTIME_DIR` if set, else next to this wrapper
/// (cargo puts both in `target/<profile>/`).
fn runtime_dir() -> PathBuf {
    if let Some(dir) = env::var_os("LAFUZZ_RUNTIME_DIR") {
        return PathBuf::from(dir);
    }
    env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The standalone runtime, built by this crate's build script.
const STANDALONE_RUNTIME: &str = concat!(env!("OUT_DIR"), "/liblafuzz_standalone.a");

/// The pass plugin that puts each comparison hook behind a test of the tracing flag (built by
/// this crate's build script, absent when LLVM's development files were missing).
const CMP_GUARD_PASS: &str = concat!(env!("OUT_DIR"), "/lafuzz-cmp-guard.so");

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

/// Runs clang (C or C++) with our instrumentation and runtime, and exits with its status.
pub fn run(is_cpp: bool) -> ! {
    let mut args = without_libfuzzer_flags(env::args().collect());
    let standalone = take_flag(&mut args, "--standalone") || env_on("LAFUZZ_STANDALONE");
    let cmplog = !(take_flag(&mut args, "--no-cmplog") || env_on("LAFUZZ_NO_CMPLOG"));
    if args.len() <= 1 {
        eprintln!(
            "usage: {} [clang arguments]  (compiles with coverage, links the lafuzz runtime)",
            args.first().map_or("libafl_cc", String::as_str)
        );
        process::exit(2);
    }
    let dir = runtime_dir();
    let lib = dir.join(format!("lib{RUNTIME_LIB}.a"));
    let mut cc = ClangWrapper::new();
    cc.cpp(is_cpp)
        .silence(true)
        // Our flags come from the build, not from the user's CFLAGS: keep the user's -O level.
        .dont_optimize();
    if let Err(e) = cc.parse_args(&args) {
        eprintln!("libafl_cc: cannot parse arguments: {e:?}");
        process::exit(2);
    }
    if cc.is_linking() && !standalone && !lib.exists() {
        eprintln!(
            "libafl_cc: runtime {} not found; build it with `cargo build --release` \
             or set LAFUZZ_RUNTIME_DIR",
            lib.display()
        );
        process::exit(2);
    }
    cc.add_arg("-fsanitize-coverage=inline-8bit-counters");
    if cmplog {
        for flag in CMPLOG_FLAGS {
            cc.add_arg(flag);
        }
        if std::path::Path::new(CMP_GUARD_PASS).exists() {
            cc.add_arg(format!("-fpass-plugin={CMP_GUARD_PASS}"));
        }
    }
    if standalone {
        for define in AFL_API_DEFINES {
            cc.add_arg(define);
        }
        cc.add_link_arg("-Wl,--whole-archive")
            .add_link_arg(STANDALONE_RUNTIME)
            .add_link_arg("-Wl,--no-whole-archive");
    } else {
        cc.link_staticlib(&dir, RUNTIME_LIB);
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
    if LLVMPasses::AutoTokens.path().exists() {
        cc.add_pass(LLVMPasses::AutoTokens);
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
