//! Compiles the C shims that look up the harness's optional hooks, the sanitizers' interface and
//! clang's profile runtime (weak symbols Rust cannot declare on stable) and hold the in-process
//! switch hook, and the standalone runtime's constants for `runtime_abi` (read from the
//! runtime's header, `compiler-wrapper/runtime/lafuzz_runtime.h`, their one home). Sets the
//! `aflpp` cfg when AFL++'s `afl-clang-fast` is installed: tests that need it are ignored,
//! with the reason, where it is not.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(aflpp)");
    println!("cargo:rerun-if-env-changed=PATH");
    let has_aflpp = std::process::Command::new("afl-clang-fast")
        .arg("--version")
        .output()
        .is_ok();
    if has_aflpp {
        println!("cargo:rustc-cfg=aflpp");
    }

    println!("cargo:rerun-if-changed=src/target/hooks.c");
    println!("cargo:rerun-if-changed=compiler-wrapper/runtime/cmplog_log.h");
    println!("cargo:rerun-if-changed=src/target/sanitizers.c");
    println!("cargo:rerun-if-changed=src/target/profile.c");
    let mut shims = cc::Build::new();
    shims
        .file("src/target/hooks.c")
        .file("src/target/sanitizers.c")
        .file("src/target/profile.c")
        .include("compiler-wrapper/runtime");
    if let Some(symbolizer) = llvm_symbolizer() {
        shims.define("LAFUZZ_SYMBOLIZER", format!("{symbolizer:?}").as_str());
    }
    shims.compile("lafuzz_hooks");

    println!("cargo:rerun-if-changed=src/target/runtime_constants.c");
    println!("cargo:rerun-if-changed=compiler-wrapper/runtime/lafuzz_runtime.h");
    cc::Build::new()
        .file("src/target/runtime_constants.c")
        .include("compiler-wrapper/runtime")
        .warnings(true)
        .compile("lafuzz_runtime_constants");
}

/// The `llvm-symbolizer` of the LLVM whose clang builds the targets (`$LLVM_CONFIG`, else
/// `llvm-config-19`): sanitizer reports are symbolized with it, PATH may have none.
fn llvm_symbolizer() -> Option<String> {
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    let config = std::env::var("LLVM_CONFIG").unwrap_or_else(|_| "llvm-config-19".into());
    let out = std::process::Command::new(config)
        .arg("--bindir")
        .output()
        .ok()?;
    let bindir = String::from_utf8(out.stdout).ok()?;
    let symbolizer = std::path::Path::new(bindir.trim()).join("llvm-symbolizer");
    symbolizer
        .exists()
        .then(|| symbolizer.to_string_lossy().into_owned())
}
