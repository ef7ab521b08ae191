//! The command line that starts each kind of fuzzer.

use std::{fs, path::Path, process::Command};

use lafuzz::Mode;

use crate::{
    fuzzers::{Fuzzer, Kind},
    paths::Paths,
};

/// `program`, pinned to `core` with taskset (None: not pinned).
fn pinned(program: &Path, core: Option<usize>) -> Command {
    match core {
        Some(core) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(core.to_string()).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// The command for `f` on `seeds` for `secs`, pinned to `core` (None: all cores). No
/// dictionary: what each fuzzer learns by itself is part of what is measured.
pub fn command(
    p: &Paths,
    f: &Fuzzer,
    work: &Path,
    seeds: &Path,
    secs: u64,
    core: Option<usize>,
) -> Command {
    let binary = f.binary.path(p);
    match f.kind {
        Kind::Ours(mode) => {
            let mut cmd = pinned(&binary, core);
            let cores = core.map_or("all".to_string(), |c| c.to_string());
            cmd.args([
                "fuzz",
                "--mode",
                &mode.name(),
                "--cores",
                &cores,
                "--max-time",
                &secs.to_string(),
            ]);
            cmd.arg("-i").arg(seeds).arg("-o").arg(work.join("out"));
            if let Some(cmplog) = f.cmplog {
                cmd.arg("--cmplog").arg(cmplog.path(p));
            }
            if let Some(target) = f.target {
                cmd.arg("--").arg(target.path(p));
                if target_reads_file(mode) {
                    cmd.arg("@@");
                }
            }
            cmd
        }
        Kind::LibFuzzer => {
            let mut cmd = pinned(&binary, core);
            let corpus = work.join("corpus");
            let _ = fs::create_dir_all(&corpus);
            cmd.arg(format!("-max_total_time={secs}"))
                .arg("-print_final_stats=1");
            cmd.arg(format!("-artifact_prefix={}/", work.display()));
            cmd.arg(&corpus).arg(seeds);
            cmd
        }
        Kind::Afl { file_arg, cmplog } => {
            let mut cmd = pinned(Path::new("afl-fuzz"), core);
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
            // AFL++ 4.04c (Debian 12's) starts its CmpLog fork server on the main target's
            // path whatever `-c` names (perf and /proc/PID/exe showed the plain build logging
            // nothing): the CmpLog build is given as both, as `-c 0` does; it logs only in the
            // CmpLog fork server, whose environment says so.
            let binary = match cmplog {
                Some(cmplog) => {
                    cmd.arg("-c").arg(cmplog.path(p));
                    cmplog.path(p)
                }
                None => binary,
            };
            cmd.arg("--").arg(&binary);
            if file_arg {
                cmd.arg("@@");
            }
            cmd
        }
    }
}

/// Our standalone target reads its input from a file named on its command line (`@@`) in
/// forkserver mode; in persistent mode it gets the input through shared memory.
fn target_reads_file(mode: Mode) -> bool {
    mode == Mode::Forkserver
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::fuzzers::suite;

    /// The command line of the fuzzer `name` in `table`, unpinned.
    fn argv(table: &[Fuzzer], name: &str) -> Vec<String> {
        let r = PathBuf::from("/r");
        let p = Paths {
            root: r.clone(),
            fuzzers: r.join("fuzzers"),
            release: r.join("release"),
            build: r.join("build"),
            quick: false,
        };
        let f = table.iter().find(|f| f.name == name).unwrap();
        let cmd = command(&p, f, Path::new("/w"), Path::new("/s"), 7, None);
        std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn out_of_process_modes_run_the_standalone_target_with_our_driver() {
        let direct = argv(&suite("libpng"), "ours-direct");
        assert_eq!(direct[0], "/r/fuzzers/libpng");
        assert!(direct.windows(2).any(|w| w == ["--mode", "direct"]));
        assert!(!direct.contains(&"--".to_string()));
        let forkserver = argv(&suite("libpng"), "ours-forkserver");
        assert_eq!(forkserver[0], "/r/release/fuzzer");
        assert!(forkserver.ends_with(&[
            "--".into(),
            "/r/fuzzers/libpng-standalone".into(),
            "@@".into()
        ]));
        let persistent = argv(&suite("libpng"), "ours-persistent");
        assert!(persistent.ends_with(&["--".into(), "/r/fuzzers/libpng-standalone".into()]));
    }

    #[test]
    fn the_split_setup_fuzzes_the_plain_build_and_traces_with_the_standalone_one() {
        let split = argv(&suite("lcms"), "ours-direct-split");
        assert_eq!(split[0], "/r/fuzzers/lcms-nocmplog");
        assert!(split
            .windows(2)
            .any(|w| w == ["--cmplog", "/r/fuzzers/lcms-standalone"]));
        assert!(!argv(&suite("lcms"), "ours-direct").contains(&"--cmplog".to_string()));
    }

    #[test]
    fn afl_gets_its_cmplog_build_and_file_argument() {
        let cmplog = argv(&suite("zlib"), "aflpp-cmplog");
        assert_eq!(cmplog[0], "afl-fuzz");
        assert!(cmplog.ends_with(&[
            "-c".into(),
            "/r/build/zlib-afl-cmplog".into(),
            "--".into(),
            "/r/build/zlib-afl-cmplog".into()
        ]));
        assert_eq!(
            argv(&suite("libpng"), "aflpp-forkserver").last().unwrap(),
            "@@"
        );
    }
}
