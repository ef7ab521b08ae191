//! Execution modes: each file builds the executor for one `--mode`; everything else is shared
//! (see `client.rs`).

pub mod direct;
