//! Compiles the standalone runtime that `--standalone` links: the fork server and persistent
//! loop, comparison logging, the logging comparison functions, the sanitizer defaults and the
//! child's memory limit, one
//! file each around `runtime/lafuzz_runtime.h` (which the fuzzer crate's build reads too).
const SOURCES: &[&str] = &[
    "runtime/forkserver.c",
    "runtime/cmplog.c",
    "runtime/compare.c",
    "runtime/sanitizers.c",
    "runtime/memory.c",
];

fn main() {
    println!("cargo:rerun-if-changed=runtime/lafuzz_runtime.h");
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
}
