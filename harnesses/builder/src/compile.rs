//! Compile commands run in parallel, each only when its output is older than its inputs.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    sync::atomic::{AtomicUsize, Ordering},
    thread,
    time::SystemTime,
};

/// One command that writes `output` from `inputs`.
pub struct Job {
    pub command: Command,
    pub output: PathBuf,
    pub inputs: Vec<PathBuf>,
}

impl Job {
    /// `compiler FLAGS PREPROCESSOR -c SOURCE -o OBJECT`.
    pub fn compile(
        compiler: &Path,
        flags: &[String],
        preprocessor: &[String],
        source: &Path,
        object: &Path,
    ) -> Self {
        let mut command = Command::new(compiler);
        command
            .args(flags)
            .args(preprocessor)
            .arg("-c")
            .arg(source)
            .arg("-o")
            .arg(object);
        let mut inputs = vec![source.to_path_buf()];
        // A compiler of ours (a path, not a name looked up in PATH) is an input too.
        if compiler.components().count() > 1 {
            inputs.push(compiler.to_path_buf());
        }
        Self {
            command,
            output: object.to_path_buf(),
            inputs,
        }
    }

    fn is_stale(&self) -> bool {
        let Some(out) = modified(&self.output) else {
            return true;
        };
        self.inputs
            .iter()
            .any(|i| modified(i).is_none_or(|t| t > out))
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Job {
    /// A one-file harness through our wrapper (`BIN/libafl_cc FLAGS SOURCE -o OUT`), which
    /// compiles and links with our runtime in one go: rebuilt when the wrapper or the runtime
    /// in `bin` is newer too.
    pub fn ours_one_file(bin: &Path, flags: &[&str], source: &Path, out: &Path) -> Self {
        let cc = bin.join("libafl_cc");
        let mut command = Command::new(&cc);
        command.args(flags).arg(source).arg("-o").arg(out);
        Self {
            command,
            output: out.to_path_buf(),
            inputs: vec![source.to_path_buf(), cc, bin.join("liblafuzz.a")],
        }
    }

    /// `ar rcs ARCHIVE OBJECTS`.
    pub fn archive(archive: &Path, objects: &[PathBuf]) -> Self {
        let mut command = Command::new("ar");
        command.arg("rcs").arg(archive).args(objects);
        Self {
            command,
            output: archive.to_path_buf(),
            inputs: objects.to_vec(),
        }
    }
}

/// Runs `cmd`; an error names it.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("command failed ({status}): {cmd:?}"))
    }
}

/// Runs the stale jobs on every core; the first failure is returned after all have stopped.
pub fn run_all(jobs: Vec<Job>) -> Result<(), String> {
    let mut jobs: Vec<Job> = jobs.into_iter().filter(Job::is_stale).collect();
    if jobs.is_empty() {
        return Ok(());
    }
    println!("compiling {} file(s)", jobs.len());
    // Largest first (a one-file library takes longest), so the others fill in around it.
    jobs.sort_by_key(|j| {
        std::cmp::Reverse(
            j.inputs
                .first()
                .and_then(|s| fs::metadata(s).ok())
                .map_or(0, |m| m.len()),
        )
    });
    let next = AtomicUsize::new(0);
    let threads = thread::available_parallelism().map_or(2, |n| n.get());
    let jobs: Vec<std::sync::Mutex<Job>> = jobs.into_iter().map(std::sync::Mutex::new).collect();
    thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<(), String> {
                    let mut first_error = Ok(());
                    while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let mut job = job.lock().unwrap();
                        let result = run(&mut job.command);
                        if result.is_err() {
                            let _ = fs::remove_file(&job.output);
                        }
                        first_error = first_error.and(result);
                    }
                    first_error
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .map_err(|_| "compile thread panicked".to_string())?
        })
    })
}
