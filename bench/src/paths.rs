//! Where the bench finds the repository, our builds and its own builds.

use std::path::{Path, PathBuf};

pub struct Paths {
    pub root: PathBuf,
    pub fuzzers: PathBuf,
    pub release: PathBuf,
    /// The peers' builds: `target/bench-build`, or `target/bench-build-quick` for
    /// [`Paths::quick`] builds.
    pub build: PathBuf,
    /// The peers built unoptimized (`--quick-builds`): runs that check that everything builds
    /// and fuzzes, not what it measures, compile in a tenth of the time (sqlite: 17 s -> 1.3 s).
    pub quick: bool,
}

impl Paths {
    pub fn new(quick: bool) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let release = exe.parent().ok_or("no exe dir")?.to_path_buf();
        let target = release.parent().ok_or("no target dir")?.to_path_buf();
        Ok(Self {
            root: Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .ok_or("no repository root")?
                .to_path_buf(),
            fuzzers: target.join("fuzzers"),
            build: target.join(if quick {
                "bench-build-quick"
            } else {
                "bench-build"
            }),
            quick,
            release,
        })
    }
}
