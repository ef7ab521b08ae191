//! A real library we fuzz and benchmark (the suite's in `suite.rs`, the bug benchmark's in
//! `bugs.rs`). Every one's sources come from a crates.io crate that bundles them (an optional
//! dependency of this crate, never compiled: Cargo.lock pins its version and `cargo fetch`
//! unpacks it); the harness is ours, in `harnesses/NAME/`, the seeds in `corpus/NAME/`.

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

use crate::compile::Job;

pub struct Library {
    /// The target's name: `target/fuzzers/NAME`, `corpus/NAME/`.
    pub name: &'static str,
    /// The crate that bundles the sources, and their folder inside it.
    pub krate: &'static str,
    /// The folder, relative to the repository root, whose `Cargo.lock` pins the crate's
    /// version: "" for the suite's (the workspace's), `bench/bugs` for the bug benchmark's.
    pub lock: &'static str,
    pub dir: &'static str,
    /// The library's sources, relative to `dir`.
    pub sources: &'static [&'static str],
    /// Include folders relative to `dir`; the build folder (config headers) comes first.
    pub includes: &'static [&'static str],
    /// Preprocessor flags, for the library and the harness.
    pub defines: &'static [&'static str],
    /// A configuration header copied from `dir` into the build folder (from, to).
    pub config: Option<(&'static str, &'static str)>,
    /// The harness, relative to the repository root.
    pub harness: &'static str,
    /// System libraries the link needs.
    pub libs: &'static [&'static str],
}

impl Library {
    /// The library's source folder (`dir` in the unpacked crate).
    pub fn source_dir(&self, root: &Path) -> Result<PathBuf, String> {
        Ok(crate_source(&root.join(self.lock), self.krate)?.join(self.dir))
    }

    /// The seed corpus, `corpus/NAME`.
    pub fn seeds(&self, root: &Path) -> PathBuf {
        root.join("corpus").join(self.name)
    }

    /// `-I`/`-D` flags for compiling in `build` (which holds the copied config header); the
    /// harness's folder comes next, for a configuration header kept beside the harness.
    fn preprocessor_flags(&self, root: &Path, src: &Path, build: &Path) -> Vec<String> {
        let harness_dir = root.join(self.harness);
        let harness_dir = harness_dir.parent().unwrap_or(root);
        let mut flags = vec![
            format!("-I{}", build.display()),
            format!("-I{}", harness_dir.display()),
        ];
        flags.extend(
            self.includes
                .iter()
                .map(|i| format!("-I{}", src.join(i).display())),
        );
        flags.extend(self.defines.iter().map(|d| d.to_string()));
        flags
    }

    /// Compile jobs for the library into `build` (`cc`/`cxx` by source language, `flags`
    /// first), and the objects in link order. Copies the config header.
    pub fn library_jobs(
        &self,
        root: &Path,
        (cc, cxx): (&Path, &Path),
        flags: &[String],
        build: &Path,
    ) -> Result<(Vec<Job>, Vec<PathBuf>), String> {
        let src = self.source_dir(root)?;
        fs::create_dir_all(build).map_err(|e| format!("cannot create {}: {e}", build.display()))?;
        if let Some((from, to)) = self.config {
            fs::copy(src.join(from), build.join(to))
                .map_err(|e| format!("cannot copy {from}: {e}"))?;
        }
        let pre = self.preprocessor_flags(root, &src, build);
        let mut jobs = Vec::new();
        let mut objects = Vec::new();
        for file in self.sources {
            let obj = build.join(format!("{}.o", file.replace('/', "_")));
            jobs.push(Job::compile(
                compiler_for(file, cc, cxx),
                flags,
                &pre,
                &src.join(file),
                &obj,
            ));
            objects.push(obj);
        }
        Ok((jobs, objects))
    }

    /// The compile job for the harness as `obj` (its headers from the library's `build`).
    pub fn harness_job(
        &self,
        root: &Path,
        (cc, cxx): (&Path, &Path),
        flags: &[String],
        build: &Path,
        obj: &Path,
    ) -> Result<Job, String> {
        let src = self.source_dir(root)?;
        let pre = self.preprocessor_flags(root, &src, build);
        Ok(Job::compile(
            compiler_for(self.harness, cc, cxx),
            flags,
            &pre,
            &root.join(self.harness),
            obj,
        ))
    }
}

fn compiler_for<'a>(file: &str, cc: &'a Path, cxx: &'a Path) -> &'a Path {
    if file.ends_with(".c") {
        cc
    } else {
        cxx
    }
}

/// The version of `krate` that `root/Cargo.lock` pins.
fn locked_version(root: &Path, krate: &str) -> Result<String, String> {
    let lock = fs::read_to_string(root.join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let entry = format!("name = \"{krate}\"\nversion = \"");
    let start = lock
        .find(&entry)
        .ok_or_else(|| format!("{krate} is not in Cargo.lock"))?
        + entry.len();
    let len = lock[start..].find('"').ok_or("bad Cargo.lock")?;
    Ok(lock[start..start + len].to_string())
}

/// Where cargo unpacked `krate` (the version `root/Cargo.lock` pins); fetched first if it is
/// not there yet.
pub fn crate_source(root: &Path, krate: &str) -> Result<PathBuf, String> {
    let folder = format!("{krate}-{}", locked_version(root, krate)?);
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let find = || -> Option<PathBuf> {
        fs::read_dir(home.join("registry/src"))
            .ok()?
            .filter_map(Result::ok)
            .map(|registry| registry.path().join(&folder))
            .find(|dir| dir.join("Cargo.toml").exists())
    };
    if let Some(dir) = find() {
        return Ok(dir);
    }
    // Optional dependencies that no build enables are unpacked by `cargo fetch` only.
    let status = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["fetch", "--locked"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo fetch: {e}"))?;
    if !status.success() {
        return Err(format!("cargo fetch failed ({status})"));
    }
    find().ok_or_else(|| format!("{folder} not found under {}", home.display()))
}
