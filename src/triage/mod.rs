//! What the campaign found, sorted into bugs. Each saved crash, hang, out-of-memory input
//! and leak is run again alone (`describer.rs`) and described (`description.rs`): its kind,
//! its stack, and its bucket, the hash of its crash state (ClusterFuzz's top three frames).
//! The description is written beside the input (`NAME.txt`). The objective keeps the first
//! crash of each bucket as well as each crash with new coverage, and counts every crash by
//! bucket (`buckets.rs`); the `triage` command prints the table (`table.rs`). Unsymbolized
//! frames (a standalone target's, and a sanitizer's in `replay`) are symbolized here by one
//! symbolizer kept running (`symbolize.rs`).
//!
//! Uses `target/` (the stack printer of `replay`'s children) and `platform/`.

pub mod buckets;
pub mod describer;
pub mod description;
pub mod symbolize;
mod table;

pub use describer::{Describer, Rerun};
pub use description::Description;
pub use table::run;
