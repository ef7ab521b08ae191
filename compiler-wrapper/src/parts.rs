//! Where the wrapper finds its parts: the fuzzer runtime (`liblafuzz.a`), the standalone runtime,
//! the comparison-guard pass and LibAFL's autotokens pass.
//! - In cargo's `target/release/` (the wrapper as built): the runtime next to the wrapper, the
//!   others where their build scripts put them. A pass the build could not make (no LLVM
//!   development files) is left out, as it was at build time.
//! - In an install (`cargo make install PREFIX=DIR`): every part in `DIR/lib/lafuzz/`, found
//!   from the wrapper's own path, so the install can move; a missing part is an error.
//!
//! `LAFUZZ_RUNTIME_DIR` names another directory holding them.

use std::{
    env,
    path::{Path, PathBuf},
};

use libafl_cc::LLVMPasses;

/// One part of the wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Runtime,
    StandaloneRuntime,
    CmpGuardPass,
    AutotokensPass,
}

impl Part {
    pub const ALL: [Part; 4] = [
        Part::Runtime,
        Part::StandaloneRuntime,
        Part::CmpGuardPass,
        Part::AutotokensPass,
    ];

    pub fn file_name(self) -> String {
        match self {
            Part::Runtime => "liblafuzz.a".into(),
            Part::StandaloneRuntime => "liblafuzz_standalone.a".into(),
            Part::CmpGuardPass => "lafuzz-cmp-guard.so".into(),
            Part::AutotokensPass => LLVMPasses::AutoTokens
                .path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }

    /// Where the build left it.
    fn built(self) -> PathBuf {
        match self {
            Part::Runtime => wrapper_dir().join(self.file_name()),
            Part::StandaloneRuntime => concat!(env!("OUT_DIR"), "/liblafuzz_standalone.a").into(),
            Part::CmpGuardPass => concat!(env!("OUT_DIR"), "/lafuzz-cmp-guard.so").into(),
            Part::AutotokensPass => LLVMPasses::AutoTokens.path(),
        }
    }

    /// The part's path; `Ok(None)` for a pass the build left out; `Err` for a part that should be
    /// there and is not.
    pub fn find(self) -> Result<Option<PathBuf>, String> {
        let installed = installed_dir();
        let dir = env::var_os("LAFUZZ_RUNTIME_DIR")
            .map(PathBuf::from)
            .or_else(|| installed.is_dir().then_some(installed));
        let path = match &dir {
            Some(dir) => dir.join(self.file_name()),
            None => self.built(),
        };
        // Where cargo built the wrapper, a pass the build could not make is left out.
        let optional = dir.is_none() && matches!(self, Part::CmpGuardPass | Part::AutotokensPass);
        match (path.exists(), optional) {
            (true, _) => Ok(Some(path)),
            (false, true) => Ok(None),
            (false, false) => Err(format!(
                "{} not found (the wrapper's {}); build with `cargo build --release`, \
                 reinstall with `cargo make install PREFIX=DIR`, or set LAFUZZ_RUNTIME_DIR",
                path.display(),
                self.what()
            )),
        }
    }

    fn what(self) -> &'static str {
        match self {
            Part::Runtime => "fuzzer runtime",
            Part::StandaloneRuntime => "standalone runtime",
            Part::CmpGuardPass => "comparison-guard pass",
            Part::AutotokensPass => "autotokens pass",
        }
    }
}

/// The directory of the running wrapper.
fn wrapper_dir() -> PathBuf {
    env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."))
}

/// An install's parts: `PREFIX/lib/lafuzz` beside `PREFIX/bin`.
fn installed_dir() -> PathBuf {
    wrapper_dir().join("../lib/lafuzz")
}
