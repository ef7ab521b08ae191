//! The target: the harness linked into this binary (`harness.rs`, with its C shim `hooks.c`),
//! when its comparison hooks run (`comparison_hooks.rs`: tracing, value profile), its
//! sanitizers' leak check (`leaks.rs`, with `sanitizers.c`), the input it is running (`inflight.rs`), one input in a forked child (`isolated.rs`), how much
//! memory a process uses (`memory.rs`), clang's profile runtime in a `--coverage` build
//! (`profile.rs`, with `profile.c`), what the standalone runtime and the fuzzer agree on
//! (`runtime_abi.rs`, read from `runtime_constants.c`), the command that reproduces a
//! saved input (`reproduce.rs`), and the stack a dying child prints (`stack.rs`; only the
//! first crash's, in a run that ends at it: `first_report.rs`).
//!
//! Uses `platform/` and the hit-count buckets of `coverage/`.

pub mod comparison_hooks;
pub mod first_report;
pub mod harness;
pub mod inflight;
pub mod isolated;
pub mod leaks;
pub mod memory;
pub mod profile;
pub mod reproduce;
pub mod runtime_abi;
pub mod stack;
