//! libFuzzer's command line: `-name=value` flags and positional paths, with libFuzzer 19's
//! defaults. Unknown flags get libFuzzer's warning; flags that only tune libFuzzer's own
//! internals are accepted and change nothing.

use std::{path::PathBuf, time::Duration};

/// A parsed libFuzzer command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Flags {
    /// Executions (fuzzing), or repetitions of each file (running files). `-runs=-1`: none.
    pub runs: Option<u64>,
    pub max_total_time: Option<Duration>,
    /// Per input; `-timeout=0`: none.
    pub timeout: Option<Duration>,
    pub rss_limit_mb: u64,
    pub malloc_limit_mb: Option<u64>,
    pub max_len: Option<u64>,
    pub dicts: Vec<PathBuf>,
    pub seed: Option<u64>,
    pub artifact_prefix: String,
    pub exact_artifact_path: Option<PathBuf>,
    pub jobs: u64,
    pub workers: u64,
    pub fork: u64,
    pub close_fd_mask: u64,
    pub print_final_stats: bool,
    pub only_ascii: bool,
    /// Look for leaks where LeakSanitizer is linked (libFuzzer's default).
    pub detect_leaks: bool,
    pub use_value_profile: bool,
    pub error_exitcode: i32,
    pub timeout_exitcode: i32,
    pub minimize_crash: bool,
    pub cleanse_crash: bool,
    pub merge: bool,
    pub merge_control_file: Option<PathBuf>,
    pub ignore_crashes: bool,
    pub ignore_timeouts: bool,
    pub ignore_ooms: bool,
    pub help: bool,
    /// Corpus directories or input files.
    pub paths: Vec<PathBuf>,
    /// Lines to print before starting (unknown flags, flags without effect here).
    pub notes: Vec<String>,
}

impl Default for Flags {
    fn default() -> Self {
        Self {
            runs: None,
            max_total_time: None,
            timeout: Some(Duration::from_secs(1200)),
            rss_limit_mb: crate::options::DEFAULT_RSS_LIMIT_MB,
            malloc_limit_mb: None,
            max_len: None,
            dicts: Vec::new(),
            seed: None,
            artifact_prefix: String::new(),
            exact_artifact_path: None,
            jobs: 0,
            workers: 0,
            fork: 0,
            close_fd_mask: 0,
            print_final_stats: false,
            only_ascii: false,
            detect_leaks: true,
            use_value_profile: false,
            error_exitcode: 77,
            timeout_exitcode: 70,
            minimize_crash: false,
            cleanse_crash: false,
            merge: false,
            merge_control_file: None,
            ignore_crashes: false,
            ignore_timeouts: true,
            ignore_ooms: true,
            help: false,
            paths: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// libFuzzer flags that tune only libFuzzer's own mutation and bookkeeping: accepted, no
/// effect (this engine has its own).
const NO_EFFECT: &[&str] = &[
    "len_control",
    "verbosity",
    "reload",
    "report_slow_units",
    "shrink",
    "reduce_inputs",
    "reduce_depth",
    "entropic",
    "entropic_feature_frequency_threshold",
    "entropic_number_of_rarest_features",
    "entropic_scale_per_exec_time",
    "mutate_depth",
    "keep_seed",
    "cross_over",
    "cross_over_uniform_dist",
    "prefer_small",
    "max_mutation_len",
    "use_counters",
    "use_memmem",
    "use_cmp",
    "purge_allocator",
    "print_pcs",
    "print_funcs",
    "print_coverage",
    "print_corpus_stats",
    "print_full_coverage",
    "dump_coverage",
    "handle_segv",
    "handle_bus",
    "handle_abrt",
    "handle_ill",
    "handle_fpe",
    "handle_int",
    "handle_term",
    "handle_xfsz",
    "handle_usr1",
    "handle_usr2",
    "handle_winexcept",
    "malloc_limit",
    "trace_malloc",
    "focus_function",
    "data_flow_trace",
    "collect_data_flow",
    "features_dir",
    "mutation_graph_file",
    "lazy_counters",
    "analyze_dict",
    "output_corpus_dir",
];

fn number<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("bad -{name}={value}: not a number"))
}

fn flag(name: &str, value: &str) -> Result<bool, String> {
    Ok(number::<i64>(name, value)? != 0)
}

/// Seconds; 0 (and negative) mean "none", as in libFuzzer.
fn seconds(name: &str, value: &str) -> Result<Option<Duration>, String> {
    let secs: i64 = number(name, value)?;
    Ok((secs > 0).then(|| Duration::from_secs(secs as u64)))
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Flags, String> {
    let mut flags = Flags::default();
    for arg in args {
        let Some(flag_text) = arg.strip_prefix('-') else {
            flags.paths.push(PathBuf::from(arg));
            continue;
        };
        let Some((name, value)) = flag_text.split_once('=') else {
            flags.notes.push(format!(
                "WARNING: unrecognized flag '{arg}'; use -help=1 to list all flags"
            ));
            continue;
        };
        match name {
            "ignore_remaining_args" if flag(name, value)? => break,
            "runs" => flags.runs = u64::try_from(number::<i64>(name, value)?).ok(),
            "max_total_time" => flags.max_total_time = seconds(name, value)?,
            "timeout" => flags.timeout = seconds(name, value)?,
            "rss_limit_mb" => flags.rss_limit_mb = number(name, value)?,
            "malloc_limit_mb" => {
                flags.malloc_limit_mb = Some(number(name, value)?).filter(|&mb| mb > 0)
            }
            "max_len" => flags.max_len = Some(number(name, value)?).filter(|&len| len > 0),
            "dict" => flags.dicts.push(PathBuf::from(value)),
            "seed" => flags.seed = Some(number(name, value)?).filter(|&seed| seed != 0),
            "artifact_prefix" => flags.artifact_prefix = value.to_string(),
            "exact_artifact_path" => flags.exact_artifact_path = Some(PathBuf::from(value)),
            "jobs" => flags.jobs = number(name, value)?,
            "workers" => flags.workers = number(name, value)?,
            "fork" => flags.fork = number(name, value)?,
            "close_fd_mask" => flags.close_fd_mask = number(name, value)?,
            "print_final_stats" => flags.print_final_stats = flag(name, value)?,
            "only_ascii" => flags.only_ascii = flag(name, value)?,
            "detect_leaks" => flags.detect_leaks = flag(name, value)?,
            "use_value_profile" => flags.use_value_profile = flag(name, value)?,
            "error_exitcode" => flags.error_exitcode = number(name, value)?,
            "timeout_exitcode" => flags.timeout_exitcode = number(name, value)?,
            "minimize_crash" => flags.minimize_crash = flag(name, value)?,
            "cleanse_crash" => flags.cleanse_crash = flag(name, value)?,
            "merge" => flags.merge = flag(name, value)?,
            "merge_control_file" => flags.merge_control_file = Some(PathBuf::from(value)),
            "ignore_crashes" => flags.ignore_crashes = flag(name, value)?,
            "ignore_timeouts" => flags.ignore_timeouts = flag(name, value)?,
            "ignore_ooms" => flags.ignore_ooms = flag(name, value)?,
            "help" => flags.help = flag(name, value)?,
            "ignore_remaining_args" => {}
            _ if NO_EFFECT.contains(&name) => {}
            _ => flags.notes.push(format!(
                "WARNING: unrecognized flag '{arg}'; use -help=1 to list all flags"
            )),
        }
    }
    Ok(flags)
}

/// `-help=1`.
pub const HELP: &str = "\
Usage:

To run fuzzing pass 0 or more directories.
PROGRAM [-flag1=val1 [-flag2=val2 ...] ] [dir1 [dir2 ...] ]

To run individual tests without fuzzing pass 1 or more files:
PROGRAM [-flag1=val1 [-flag2=val2 ...] ] file1 [file2 ...]

(This is lafuzz answering libFuzzer's command line; `PROGRAM fuzz --help` shows its own.)

Flags: (strictly in form -flag=value)
 runs                 -1    Number of individual test runs (-1 for infinite runs).
 max_total_time       0     If positive, the maximal total time in seconds to run the fuzzer.
 timeout              1200  Timeout in seconds (if positive) of one input.
 rss_limit_mb         2048  If non-zero, an input whose run goes over this RSS is out-of-memory.
 malloc_limit_mb      0     With a sanitizer allocator: one allocation over this is out-of-memory
                            (0: same as rss_limit_mb).
 max_len              0     Maximum length of the test input (0: the engine's default, 1 MiB).
 len_control          100   Accepted; the engine controls input lengths itself.
 dict                 0     Use the dictionary file.
 seed                 0     Random seed (0: from the clock).
 artifact_prefix      0     Write fuzzing artifacts (crash, timeout, oom, leak) as $(artifact_prefix)file.
 exact_artifact_path  0     Write the single artifact on failure as $(exact_artifact_path).
 jobs                 0     Fuzz with this many workers (one campaign, cores joined by LLMP).
 workers              0     Number of cores for -jobs (0: min(jobs, cores/2)).
 fork                 0     Fuzz on this many cores, restarting a client after each crash.
 ignore_crashes       0     With -fork: keep fuzzing after a crash.
 ignore_timeouts      1     With -fork: keep fuzzing after a timeout.
 ignore_ooms          1     With -fork: keep fuzzing after an out-of-memory input.
 close_fd_mask        0     If 1, silence the target's stdout; if 2, stderr; 3: both.
 print_final_stats    0     If 1, print statistics at exit.
 error_exitcode       77    Exit code for a crash.
 timeout_exitcode     70    Exit code for a timeout.
 minimize_crash       0     If 1, minimize the provided crash input (with -runs or
                            -max_total_time; result at -exact_artifact_path).
 cleanse_crash        0     If 1, replace the crash input's bytes that do not matter.
 merge                0     If 1, merge the 2nd, 3rd, ... corpora into the 1st, keeping only
                            inputs that add coverage.
 merge_control_file   0     Control file of the merge, to resume it when killed.
 use_value_profile    0     If 1, comparison operands' distance counts as coverage.
 detect_leaks         1     If 1, and LeakSanitizer is linked (ASan or LSan), report memory leaks.
 only_ascii           0     If 1, generate only ASCII (printable and whitespace) inputs.
 help                 0     Print this help.
";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn clusterfuzz_fuzz_command_line() {
        let flags = parse(&args(&[
            "-timeout=25",
            "-rss_limit_mb=2560",
            "-seed=1337",
            "-len_control=0",
            "-artifact_prefix=/r/",
            "-max_total_time=60",
            "-print_final_stats=1",
            "/c",
        ]))
        .unwrap();
        assert_eq!(flags.timeout, Some(Duration::from_secs(25)));
        assert_eq!(flags.rss_limit_mb, 2560);
        assert_eq!(flags.seed, Some(1337));
        assert_eq!(flags.artifact_prefix, "/r/");
        assert_eq!(flags.max_total_time, Some(Duration::from_secs(60)));
        assert!(flags.print_final_stats && flags.notes.is_empty());
        assert_eq!(flags.paths, vec![PathBuf::from("/c")]);
    }

    #[test]
    fn defaults_unknown_flags_and_bad_values() {
        let flags = parse(&args(&[
            "-runs=-1",
            "-timeout=0",
            "-foo=1",
            "-bar",
            "-use_value_profile=1",
            "-detect_leaks=0",
        ]))
        .unwrap();
        assert_eq!((flags.runs, flags.timeout), (None, None));
        assert_eq!(flags.error_exitcode, 77);
        assert!(flags.use_value_profile && !flags.detect_leaks);
        assert_eq!(flags.notes.len(), 2, "{:?}", flags.notes);
        assert!(flags.notes[0].contains("unrecognized flag '-foo=1'"));
        assert!(parse(&args(&["-runs=x"])).unwrap_err().contains("-runs=x"));
        let rest = parse(&args(&["-ignore_remaining_args=1", "-runs=x"])).unwrap();
        assert_eq!(rest.runs, None);
    }
}
