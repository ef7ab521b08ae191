//! The mutations every mode applies: the power-scheduled havoc stage with stacked mutations
//! (`havoc.rs`), and `--only-ascii` as a wrapper around any mutator (`only_ascii.rs`).
//!
//! Uses `types.rs` and LibAFL only.

pub mod custom;
pub mod havoc;
pub mod only_ascii;
