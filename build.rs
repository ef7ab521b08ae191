//! Compiles the C shim that looks up the harness's optional hooks (weak symbols Rust cannot
//! declare on stable), and the standalone runtime's constants for `runtime_abi` (read from the
//! runtime's header, `compiler-wrapper/runtime/lafuzz_runtime.h`, their one home).
fn main() {
    println!("cargo:rerun-if-changed=src/hooks.c");
    cc::Build::new().file("src/hooks.c").compile("lafuzz_hooks");

    println!("cargo:rerun-if-changed=src/runtime_constants.c");
    println!("cargo:rerun-if-changed=compiler-wrapper/runtime/lafuzz_runtime.h");
    cc::Build::new()
        .file("src/runtime_constants.c")
        .include("compiler-wrapper/runtime")
        .warnings(true)
        .compile("lafuzz_runtime_constants");
}
