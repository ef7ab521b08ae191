//! Compiles the standalone runtime (fork server, persistent loop) that `--standalone` links.
fn main() {
    println!("cargo:rerun-if-changed=runtime/standalone.c");
    cc::Build::new()
        .file("runtime/standalone.c")
        .opt_level(2)
        .warnings(true)
        .cargo_metadata(false)
        .compile("lafuzz_standalone");
}
