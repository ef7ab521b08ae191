//! The fuzzer with no harness linked: fuzzes standalone targets
//! (`fuzzer fuzz --mode forkserver -i seeds -o out -- ./target @@`).
fn main() {
    std::process::exit(lafuzz::run_command_line());
}
