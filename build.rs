//! Compiles the C shim that looks up the harness's optional hooks (weak symbols Rust cannot
//! declare on stable).
fn main() {
    println!("cargo:rerun-if-changed=src/hooks.c");
    cc::Build::new().file("src/hooks.c").compile("lafuzz_hooks");
}
