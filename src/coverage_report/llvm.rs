//! LLVM's coverage tools: `llvm-profdata` merges the raw profile, `llvm-cov` reports. They must
//! read the profile format of the clang that built the target (LLVM 19, as the wrapper's).

use std::{
    env,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// The LLVM major version whose tools are looked for first by their suffixed names.
const LLVM_MAJOR: &str = "19";

/// `llvm-profdata` and `llvm-cov`.
pub struct Tools {
    profdata: PathBuf,
    cov: PathBuf,
}

impl Tools {
    /// Both tools, from `$LLVM_CONFIG --bindir`, `llvm-config-19 --bindir`, or PATH (`NAME-19`,
    /// then `NAME`), as the build finds `llvm-symbolizer`.
    pub fn find() -> Result<Self, String> {
        Ok(Self {
            profdata: find_tool("llvm-profdata")?,
            cov: find_tool("llvm-cov")?,
        })
    }

    /// `llvm-profdata merge -sparse RAW... -o OUT`.
    pub fn merge(&self, raw: &[PathBuf], out: &Path) -> Result<(), String> {
        let output = Command::new(&self.profdata)
            .args(["merge", "-sparse"])
            .args(raw)
            .arg("-o")
            .arg(out)
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.profdata.display()))?;
        checked(&self.profdata, &output)
    }

    /// `llvm-cov show -format=html`: one page per source file, with branch counts, in `dir`.
    pub fn html(&self, binary: &Path, profile: &Path, dir: &Path) -> Result<(), String> {
        let output = self
            .cov(
                ["show", "-format=html", "-show-branches=count"],
                binary,
                profile,
            )
            .arg("-output-dir")
            .arg(dir)
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.cov.display()))?;
        checked(&self.cov, &output)
    }

    /// `llvm-cov report`'s table, on our stdout.
    pub fn text(&self, binary: &Path, profile: &Path) -> Result<(), String> {
        let output = self
            .cov(["report"], binary, profile)
            .stdout(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.cov.display()))?;
        checked(&self.cov, &output)
    }

    fn cov<const N: usize>(&self, args: [&str; N], binary: &Path, profile: &Path) -> Command {
        let mut command = Command::new(&self.cov);
        command
            .args(args)
            .arg(format!("-instr-profile={}", profile.display()))
            .arg(binary);
        command
    }
}

/// A tool's failure as one line: its name and the first line it wrote to stderr.
fn checked(tool: &Path, output: &std::process::Output) -> Result<(), String> {
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    Err(format!(
        "{} failed ({}): {first}",
        tool.display(),
        output.status
    ))
}

fn find_tool(name: &str) -> Result<PathBuf, String> {
    let configs = env::var("LLVM_CONFIG")
        .ok()
        .into_iter()
        .chain([format!("llvm-config-{LLVM_MAJOR}")]);
    for config in configs {
        let Ok(out) = Command::new(&config).arg("--bindir").output() else {
            continue;
        };
        let bindir = String::from_utf8_lossy(&out.stdout);
        let tool = Path::new(bindir.trim()).join(name);
        if out.status.success() && tool.is_file() {
            return Ok(tool);
        }
    }
    let path = env::var_os("PATH").unwrap_or_default();
    for file in [format!("{name}-{LLVM_MAJOR}"), name.to_string()] {
        if let Some(tool) = env::split_paths(&path)
            .map(|dir| dir.join(&file))
            .find(|t| t.is_file())
        {
            return Ok(tool);
        }
    }
    Err(format!(
        "{name} not found: install LLVM {LLVM_MAJOR}'s tools (e.g. the llvm-{LLVM_MAJOR} \
         package), or set LLVM_CONFIG to its llvm-config"
    ))
}
