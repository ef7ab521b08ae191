//! Running one fuzzer for a fixed time on one pinned core, in its own process group, and
//! reading back executions, CPU time and corpus.

use std::{
    fs,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

use crate::{builds::Paths, parse, report::Run};

/// How a fuzzer is started and where it leaves its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Ours: `BINARY fuzz --mode MODE ... [-- TARGET]`.
    Ours {
        mode: &'static str,
    },
    LibFuzzer,
    /// afl-fuzz; `file_arg`: the target takes `@@`.
    Afl {
        file_arg: bool,
    },
}

#[derive(Debug, Clone)]
pub struct Fuzzer {
    pub name: String,
    pub kind: Kind,
    /// The fuzzer binary (ours, libFuzzer) or the target (AFL++).
    pub binary: PathBuf,
    /// Ours out of process: the standalone target; AFL++: the CmpLog build.
    pub target: Option<PathBuf>,
    pub needs_afl: bool,
}

impl Fuzzer {
    fn ours(name: &str, mode: &'static str, binary: PathBuf, target: Option<PathBuf>) -> Self {
        Self {
            name: name.into(),
            kind: Kind::Ours { mode },
            binary,
            target,
            needs_afl: false,
        }
    }

    fn libfuzzer(binary: PathBuf) -> Self {
        Self {
            name: "libfuzzer".into(),
            kind: Kind::LibFuzzer,
            binary,
            target: None,
            needs_afl: false,
        }
    }

    /// afl-fuzz on `binary`; `cmplog`: its CmpLog build (`-c`).
    fn afl(name: &str, binary: PathBuf, file_arg: bool, cmplog: Option<PathBuf>) -> Self {
        Self {
            name: name.into(),
            kind: Kind::Afl { file_arg },
            binary,
            target: cmplog,
            needs_afl: true,
        }
    }

    pub fn libpng_fuzzers(p: &Paths) -> Vec<Fuzzer> {
        let png = p.fuzzers.join("libpng");
        let driver = p.release.join("fuzzer");
        let standalone = Some(p.fuzzers.join("libpng-standalone"));
        vec![
            Self::ours("ours-direct", "direct", png.clone(), None),
            Self::ours("ours-reset", "reset", png.clone(), None),
            Self::ours("ours-fork", "fork", png, None),
            Self::ours(
                "ours-forkserver",
                "forkserver",
                driver.clone(),
                standalone.clone(),
            ),
            Self::ours("ours-persistent", "persistent", driver, standalone),
            Fuzzer::libfuzzer(p.bin("libpng-libfuzzer")),
            Fuzzer::afl("aflpp-persistent", p.bin("libpng-afl"), false, None),
            Fuzzer::afl("aflpp-forkserver", p.bin("libpng-afl-onefile"), true, None),
        ]
    }
}

pub fn afl_available() -> bool {
    Command::new("afl-fuzz")
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// The core every fuzzer is pinned to: the last one (the first is busiest on a shared machine).
pub fn bench_core() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
}

fn children_cpu_secs() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}

/// A started fuzzer process group.
struct Started {
    child: std::process::Child,
    start: Instant,
    cpu_before: f64,
}

fn start(mut cmd: Command, log: &Path) -> Result<Started, String> {
    let file = fs::File::create(log).map_err(|e| e.to_string())?;
    let cpu_before = children_cpu_secs();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    Ok(Started {
        child,
        start: Instant::now(),
        cpu_before,
    })
}

impl Started {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }
    /// Waits until it exits or `until` holds or `limit` passes; then stops the group.
    /// Returns (wall seconds, CPU seconds of the whole group).
    fn finish(mut self, limit: Duration, until: impl Fn() -> bool) -> (f64, f64) {
        while self.start.elapsed() < limit && !until() {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            sleep(Duration::from_millis(100));
        }
        let wall = self.start.elapsed().as_secs_f64();
        // SAFETY: signalling the group we started.
        unsafe { libc::kill(-self.pid(), libc::SIGINT) };
        let grace = Instant::now();
        while grace.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; whatever is left of the group goes.
        unsafe { libc::kill(-self.pid(), libc::SIGKILL) };
        let _ = self.child.wait();
        // And what left the group (AFL++'s fork servers and their stopped children).
        lafuzz::supervisor::kill_remaining_descendants();
        (wall, children_cpu_secs() - self.cpu_before)
    }
}

fn count_files(dir: &Path) -> usize {
    fs::read_dir(dir).map_or(0, |rd| {
        rd.filter_map(Result::ok)
            .filter(|e| e.path().is_file() && !e.file_name().to_string_lossy().starts_with('.'))
            .filter(|e| e.file_name() != "README.txt")
            .count()
    })
}

/// Where a fuzzer keeps its corpus (for coverage) and its crashes.
pub fn corpus_dir(kind: Kind, work: &Path) -> PathBuf {
    match kind {
        Kind::Ours { .. } => work.join("out/queue"),
        Kind::LibFuzzer => work.join("corpus"),
        Kind::Afl { .. } => work.join("out/default/queue"),
    }
}

fn crashes_found(kind: Kind, work: &Path) -> bool {
    match kind {
        Kind::Ours { .. } => {
            count_files(&work.join("out/crashes")) + count_files(&work.join("out/crashes-flaky"))
                > 0
        }
        Kind::LibFuzzer => fs::read_dir(work).is_ok_and(|rd| {
            rd.filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().starts_with("crash-"))
        }),
        Kind::Afl { .. } => count_files(&work.join("out/default/crashes")) > 0,
    }
}

/// The command for `fuzzer` on `seeds` for `secs`, pinned to `core` (None: all cores).
fn command(
    p: &Paths,
    f: &Fuzzer,
    work: &Path,
    seeds: &Path,
    secs: u64,
    core: Option<usize>,
    dict: bool,
) -> Command {
    let dict_file = p.root.join("corpus/libpng/png.dict");
    let mut cmd = match core {
        Some(core) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(core.to_string()).arg(&f.binary);
            c
        }
        None => Command::new(&f.binary),
    };
    match f.kind {
        Kind::Ours { mode } => {
            let cores = core.map_or("all".to_string(), |c| c.to_string());
            cmd.args([
                "fuzz",
                "--mode",
                mode,
                "--cores",
                &cores,
                "--max-time",
                &secs.to_string(),
            ]);
            cmd.arg("-i").arg(seeds).arg("-o").arg(work.join("out"));
            if dict {
                cmd.arg("-x").arg(&dict_file);
            }
            if let Some(target) = &f.target {
                cmd.arg("--").arg(target);
                if mode == "forkserver" {
                    cmd.arg("@@");
                }
            }
        }
        Kind::LibFuzzer => {
            let corpus = work.join("corpus");
            let _ = fs::create_dir_all(&corpus);
            cmd.arg(format!("-max_total_time={secs}"))
                .arg("-print_final_stats=1");
            cmd.arg(format!("-artifact_prefix={}/", work.display()));
            if dict {
                cmd.arg(format!("-dict={}", dict_file.display()));
            }
            cmd.arg(&corpus).arg(seeds);
        }
        Kind::Afl { file_arg } => {
            cmd = match core {
                Some(core) => {
                    let mut c = Command::new("taskset");
                    c.arg("-c").arg(core.to_string()).arg("afl-fuzz");
                    c
                }
                None => Command::new("afl-fuzz"),
            };
            cmd.envs([
                ("AFL_NO_AFFINITY", "1"),
                ("AFL_SKIP_CPUFREQ", "1"),
                ("AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "1"),
                ("AFL_NO_UI", "1"),
                ("AFL_SKIP_CRASHES", "1"),
            ]);
            cmd.arg("-i")
                .arg(seeds)
                .arg("-o")
                .arg(work.join("out"))
                .arg("-V")
                .arg(secs.to_string());
            if dict {
                cmd.arg("-x").arg(&dict_file);
            }
            if let Some(cmplog) = &f.target {
                cmd.arg("-c").arg(cmplog);
            }
            cmd.arg("--").arg(&f.binary);
            if file_arg {
                cmd.arg("@@");
            }
        }
    }
    cmd
}

fn execs(kind: Kind, work: &Path, log: &Path) -> u64 {
    match kind {
        Kind::Ours { .. } => fs::read_to_string(work.join("out/fuzzer_stats"))
            .ok()
            .and_then(|t| parse::afl_execs(&t)),
        Kind::LibFuzzer => fs::read_to_string(log)
            .ok()
            .and_then(|t| parse::libfuzzer_execs(&t)),
        Kind::Afl { .. } => fs::read_to_string(work.join("out/default/fuzzer_stats"))
            .ok()
            .and_then(|t| parse::afl_execs(&t)),
    }
    .unwrap_or(0)
}

/// Runs `f` on libpng's seeds (or `workload`'s) for `secs`.
pub fn fuzz(
    p: &Paths,
    f: &Fuzzer,
    work: &Path,
    secs: u64,
    core: Option<usize>,
    workload: &str,
) -> Result<Run, String> {
    let _ = fs::remove_dir_all(work);
    fs::create_dir_all(work).map_err(|e| e.to_string())?;
    let log = work.join("log");
    let seeds = p.root.join("corpus/libpng");
    let started = start(command(p, f, work, &seeds, secs, core, true), &log)?;
    let limit = Duration::from_secs(secs + 60);
    let (wall, cpu) = started.finish(limit, || false);
    let execs = execs(f.kind, work, &log);
    if execs == 0 {
        let tail: String = fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .join(" | ");
        return Err(format!("{} ran no input; its log ends: {tail}", f.name));
    }
    Ok(Run {
        fuzzer: f.name.clone(),
        workload: workload.into(),
        ours: matches!(f.kind, Kind::Ours { .. }),
        wall_secs: wall.min(secs as f64).max(1.0),
        cpu_secs: cpu,
        execs,
        corpus: count_files(&corpus_dir(f.kind, work)),
        ..Run::default()
    })
}

/// Seconds until `f` saves its first crash on the magic harness (zero seed, no dictionary).
fn time_to_crash(p: &Paths, f: &Fuzzer, work: &Path, cap: u64, core: usize) -> Result<Run, String> {
    let _ = fs::remove_dir_all(work);
    let seeds = work.join("seeds");
    fs::create_dir_all(&seeds).map_err(|e| e.to_string())?;
    fs::copy(p.root.join("corpus/magic/zeros"), seeds.join("zeros")).map_err(|e| e.to_string())?;
    let started = start(
        command(p, f, work, &seeds, cap, Some(core), false),
        &work.join("log"),
    )?;
    let kind = f.kind;
    let (wall, cpu) = started.finish(Duration::from_secs(cap), || crashes_found(kind, work));
    let found = crashes_found(kind, work);
    Ok(Run {
        fuzzer: f.name.clone(),
        workload: "magic".into(),
        ours: matches!(kind, Kind::Ours { .. }),
        wall_secs: if found { wall } else { cap as f64 },
        cpu_secs: cpu,
        time_to_crash: found.then_some(wall),
        ..Run::default()
    })
}

/// Engine overhead, the bare loop, scaling and the magic harness.
pub fn extras(
    p: &Paths,
    work: &Path,
    secs: u64,
    core: usize,
    afl: bool,
    magic_trials: usize,
    magic_cap: u64,
) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    let short = secs.min(10);
    let mut empty = vec![
        Fuzzer::ours("ours-direct", "direct", p.bin("empty-lafuzz"), None),
        Fuzzer::libfuzzer(p.bin("empty-libfuzzer")),
    ];
    if afl {
        empty.push(Fuzzer::afl(
            "aflpp-persistent",
            p.bin("empty-afl"),
            false,
            None,
        ));
    }
    for f in &empty {
        println!("bench: {} on the empty harness ({short} s)", f.name);
        runs.push(fuzz(
            p,
            f,
            &work.join(format!("empty-{}", f.name)),
            short,
            Some(core),
            "empty",
        )?);
    }

    println!("bench: bare loop over the seeds ({short} s)");
    runs.push(bare_loop(p, work, short, core)?);

    println!("bench: ours-direct on all cores ({secs} s)");
    for (name, dir, pinned) in [
        ("ours-direct-all-cores", "scaling-all", None),
        ("ours-direct-1-core", "scaling-one", Some(core)),
    ] {
        let direct = Fuzzer::ours(name, "direct", p.fuzzers.join("libpng"), None);
        runs.push(fuzz(p, &direct, &work.join(dir), secs, pinned, "scaling")?);
    }

    let mut magic = vec![
        Fuzzer::ours("ours-direct", "direct", p.fuzzers.join("magic"), None),
        Fuzzer::libfuzzer(p.bin("magic-libfuzzer")),
    ];
    if afl {
        magic.push(Fuzzer::afl(
            "aflpp-cmplog",
            p.bin("magic-afl"),
            false,
            Some(p.bin("magic-afl-cmplog")),
        ));
    }
    for f in &magic {
        for trial in 0..magic_trials {
            println!(
                "bench: {} on the magic harness (trial {}/{magic_trials}, up to {magic_cap} s)",
                f.name,
                trial + 1
            );
            let mut run = time_to_crash(
                p,
                f,
                &work.join(format!("magic-{}-{trial}", f.name)),
                magic_cap,
                core,
            )?;
            run.trial = trial;
            runs.push(run);
        }
    }
    Ok(runs)
}

fn bare_loop(p: &Paths, work: &Path, secs: u64, core: usize) -> Result<Run, String> {
    let list = work.join("seeds.list");
    fs::create_dir_all(work).map_err(|e| e.to_string())?;
    let mut seeds: Vec<String> = fs::read_dir(p.root.join("corpus/libpng"))
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path().display().to_string())
        .collect();
    seeds.sort();
    fs::write(&list, seeds.join("\n")).map_err(|e| e.to_string())?;
    let cpu_before = children_cpu_secs();
    let out = Command::new("taskset")
        .arg("-c")
        .arg(core.to_string())
        .arg(p.bin("libpng-bare"))
        .arg(&list)
        .arg(secs.to_string())
        .output()
        .map_err(|e| e.to_string())?;
    let execs: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| "bare loop printed no count")?;
    Ok(Run {
        fuzzer: "bare-loop".into(),
        workload: "bare".into(),
        wall_secs: secs as f64,
        cpu_secs: children_cpu_secs() - cpu_before,
        execs,
        ..Run::default()
    })
}
