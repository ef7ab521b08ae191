//! Execution modes: each file holds what its `--mode` does differently (how an input is run);
//! everything else is shared (see `client.rs`).

pub mod direct;
pub mod fork;
pub mod forkserver;
pub mod reset;
