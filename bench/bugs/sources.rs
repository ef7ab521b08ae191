//! Nothing to compile: this package only pins the bug benchmark's sources (Cargo.toml).
