//! Compiles the standalone runtime that `--standalone` links: the fork server and persistent
//! loop, comparison logging, the logging comparison functions, the sanitizer defaults, the
//! child's memory limit and the stack of a crash run alone, one
//! file each around `runtime/lafuzz_runtime.h` (which the fuzzer crate's build reads too).
//! Also the LLVM pass plugin `pass/cmp-guard.cc` (see there), built with the LLVM whose clang
//! the wrapper runs.
use std::{env, path::PathBuf, process::Command};
const SOURCES: &[&str] = &[
    "runtime/forkserver.c",
    "runtime/answers.c",
    "runtime/protocol.c",
    "runtime/cmplog.c",
    "runtime/compare.c",
    "runtime/sanitizers.c",
    "runtime/memory.c",
    "runtime/stack.c",
];

fn main() {
    println!("cargo:rerun-if-changed=runtime/lafuzz_runtime.h");
    export_page_size();
    println!("cargo:rerun-if-changed=runtime/cmplog_log.h");
    for source in SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
    cc::Build::new()
        .files(SOURCES)
        .include("runtime")
        .opt_level(2)
        .warnings(true)
        .cargo_metadata(false)
        .compile("lafuzz_standalone");
    build_cmp_guard_pass();
}

/// Hands the wrapper `LAFUZZ_PAGE_SIZE` from the runtime's header, its one home: the linker
/// script aligns the counters to it, and the runtime and the fuzzer map them in such pages.
fn export_page_size() {
    const NAME: &str = "LAFUZZ_PAGE_SIZE";
    let header = std::fs::read_to_string("runtime/lafuzz_runtime.h").expect("the runtime header");
    let value = header
        .lines()
        .find_map(|line| line.strip_prefix(&format!("#define {NAME} ")))
        .map(str::trim)
        .filter(|v| v.parse::<u32>().is_ok_and(|n| n.is_power_of_two()))
        .unwrap_or_else(|| panic!("runtime/lafuzz_runtime.h defines no {NAME} (a power of two)"));
    println!("cargo:rustc-env={NAME}={value}");
}

/// Builds `OUT_DIR/lafuzz-cmp-guard.so`. Without it (no LLVM development files) the wrapper still
/// works, with every comparison hook called unconditionally (slower): a warning says so.
fn build_cmp_guard_pass() {
    const SOURCE: &str = "pass/cmp-guard.cc";
    println!("cargo:rerun-if-changed={SOURCE}");
    for var in ["LLVM_CONFIG", "LLVM_BINDIR", "LLVM_CXXFLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("lafuzz-cmp-guard.so");
    let _ = std::fs::remove_file(&out);
    // libafl_cc's build finds the clang the wrapper runs the same way (LLVM_CONFIG, LLVM_BINDIR,
    // else the newest llvm-config-N): the plugin must be built against that clang's LLVM.
    let (Ok(bindir), Ok(cxxflags)) = (libafl_build::llvm_bindir(), libafl_build::llvm_cxxflags())
    else {
        println!("cargo:warning=no llvm-config found: comparison hooks stay unguarded");
        return;
    };
    let status = Command::new(PathBuf::from(bindir).join("clang++"))
        .args(["-shared", "-fPIC", "-O2"])
        .args(&cxxflags)
        .arg(SOURCE)
        .arg("-o")
        .arg(&out)
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        println!("cargo:warning=cannot build {SOURCE}: comparison hooks stay unguarded");
    }
}
