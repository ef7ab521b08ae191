//! The target linked into this binary: libFuzzer's `LLVMFuzzerTestOneInput` and friends.

use libafl_targets::{libfuzzer_initialize, libfuzzer_test_one_input};

/// Calls the target's `LLVMFuzzerInitialize`, if it has one, with our command line.
pub fn initialize() {
    let args: Vec<String> = std::env::args().collect();
    // SAFETY: the target's initializer runs once per process, before any input.
    if unsafe { libfuzzer_initialize(&args) } == -1 {
        eprintln!("lafuzz: warning: LLVMFuzzerInitialize returned -1");
    }
}

/// Runs one input through the target.
pub fn run(input: &[u8]) {
    // SAFETY: the linked harness takes any byte buffer, as libFuzzer's contract says.
    unsafe {
        libfuzzer_test_one_input(input);
    }
}
