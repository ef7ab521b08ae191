//! `fuzz`: the campaign's options, typed.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{Args, ValueEnum};
use libafl_bolts::core_affinity::Cores;

use super::values::{
    parse_broker_address, parse_cores, parse_millis, parse_seconds, DEFAULT_RSS_LIMIT_MB,
};

/// How inputs are executed. What each mode does lives in `modes/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// In-process: fastest; a crash or hang restarts the client.
    Direct,
    /// A fresh forked child per input: full isolation, coverage shared with the parent.
    Fork,
    /// In-process, calling the harness's `LLVMFuzzerReset` after every input and restarting
    /// the client every `--restart-every` inputs.
    Reset,
    /// A standalone target after `--`, one fork of its fork server per input.
    Forkserver,
    /// A standalone target after `--`, many inputs per child (shared-memory testcases).
    Persistent,
}

impl Mode {
    /// The value of `--mode` that names this mode.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|value| value.get_name().to_string())
            .unwrap_or_default()
    }

    /// Out of process: the mode fuzzes a standalone target given after `--` instead of the
    /// harness linked into this binary.
    pub const fn runs_standalone_target(self) -> bool {
        matches!(self, Self::Forkserver | Self::Persistent)
    }
}

#[derive(Debug, Clone, Args)]
pub struct FuzzOptions {
    /// Execution mode.
    #[arg(long, value_enum, default_value_t = Mode::Direct)]
    pub mode: Mode,
    /// Seed corpus directory (repeatable).
    #[arg(short = 'i', long = "input", value_name = "DIR")]
    pub inputs: Vec<PathBuf>,
    /// Output directory (queue/, crashes/, hangs/, fuzzer_stats, plot_data).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Dictionary in AFL/libFuzzer format (repeatable).
    #[arg(short = 'x', long = "dict", value_name = "FILE")]
    pub dicts: Vec<PathBuf>,
    /// Per-input timeout in milliseconds; slower inputs are saved as hangs. `auto` (the
    /// default): chosen from the seeds' run times as AFL++ does (5x their average or the
    /// slowest, rounded up to 20 ms, at most 1000), an input past it then saved as a hang only
    /// when it also runs past 1000 ms alone (linked modes; 1000 in the standalone ones).
    #[arg(short = 't', long = "timeout", value_name = "MS|auto", default_value = "auto", value_parser = parse_timeout)]
    pub timeout: Timeout,
    /// Cores to fuzz on: `0-7`, `0,2,4` or `all`; one client per core, pinned to it (default:
    /// one client, on no fixed core).
    #[arg(long, value_name = "LIST", value_parser = parse_cores)]
    pub cores: Option<Cores>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub max_time: Option<Duration>,
    /// Stop after this many executions in all (each client runs its share).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: Option<u64>,
    /// Random seed (default: from the clock).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Port of the LLMP broker (default: a free port). Other machines join with
    /// `--remote-broker THIS_HOST:PORT`.
    #[arg(long, value_name = "PORT")]
    pub broker_port: Option<u16>,
    /// Join the campaign whose broker listens at HOST:PORT (another machine, usually): the
    /// two brokers exchange new corpus entries over LLMP's broker-to-broker TCP link. Runs
    /// until --max-time or Ctrl-C.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "runs", value_parser = parse_broker_address)]
    pub remote_broker: Option<SocketAddr>,
    /// `reset` mode: restart the client from a clean process after this many inputs.
    #[arg(long, value_name = "N", default_value_t = 50_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub restart_every: u64,
    /// Memory limit in MiB: an in-process client whose resident memory exceeds it is stopped,
    /// its input saved to `ooms/`, and a fresh client started (0: no limit).
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_RSS_LIMIT_MB)]
    pub rss_limit_mb: u64,
    /// With a sanitizer allocator (ASan), in-process modes: any single allocation larger than
    /// this many MiB is out-of-memory (default: --rss-limit-mb; 0: no limit).
    #[arg(long, value_name = "MB")]
    pub malloc_limit_mb: Option<u64>,
    /// Comparison tracing out of process, as AFL++'s `-c`: a standalone build of the same
    /// target with comparison logging (`libafl_cc --standalone`). The fuzzed build can then
    /// be compiled without it (`LAFUZZ_NO_CMPLOG=1`) and run at full speed; only the tracing
    /// runs pay for logging. Standalone modes pass it the target's arguments.
    #[arg(short = 'c', long = "cmplog", value_name = "BINARY")]
    pub cmplog: Option<PathBuf>,
    /// Show the target's stdout/stderr (silenced by default).
    #[arg(long)]
    pub show_output: bool,
    /// With `--show-output`: the target's stdout and stderr silenced one by one (libFuzzer's
    /// `-close_fd_mask`); sanitizer reports still reach the terminal.
    #[arg(skip)]
    pub silence: (bool, bool),
    /// Do not look for memory leaks. With LeakSanitizer linked (`-fsanitize=address` or
    /// `leak`), an input that allocates more than it frees is checked, and leaks go to `leaks/`.
    #[arg(long)]
    pub no_detect_leaks: bool,
    /// Value profile, as libFuzzer's `-use_value_profile=1` (`direct` and `reset` modes): how
    /// many bits of each comparison's operands are equal counts as coverage, so inputs that
    /// come closer to a compared-against value are kept. Costs speed.
    #[arg(long)]
    pub value_profile: bool,
    /// The longest input the mutators make, in bytes; longer seeds are cut to it.
    #[arg(long, value_name = "BYTES", default_value_t = libafl::state::DEFAULT_MAX_SIZE, value_parser = clap::value_parser!(usize))]
    pub max_len: usize,
    /// Make every mutated input printable ASCII or whitespace (as libFuzzer's -only_ascii=1).
    #[arg(long)]
    pub only_ascii: bool,
    /// No status lines and no finding notices, only errors (for callers that report
    /// themselves).
    #[arg(long)]
    pub quiet: bool,
    /// Status lines instead of the status screen, which is drawn when stdout is a terminal.
    #[arg(long)]
    pub no_tui: bool,
    /// An empty seed corpus starts from the empty input instead of being an error (the
    /// libFuzzer front end, as libFuzzer).
    #[arg(skip)]
    pub empty_corpus_ok: bool,
    /// `forkserver`/`persistent` mode: the standalone target and its arguments; `@@` stands
    /// for the input file (without it, the input is in shared memory or on stdin).
    #[arg(last = true, value_name = "TARGET")]
    pub target: Vec<String>,
}

/// `-t`: a number of milliseconds, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    Fixed(Duration),
    /// Chosen from the seeds' run times (see `engine/exec_timeout.rs`).
    FromSeeds,
}

/// `-t MS` or `-t auto`.
fn parse_timeout(text: &str) -> Result<Timeout, String> {
    match text {
        "auto" => Ok(Timeout::FromSeeds),
        ms => parse_millis(ms).map(Timeout::Fixed),
    }
}

/// How long an input runs before it is a hang with `-t auto` (AFL++'s `hang_tmout`): the
/// timeout that confirms one, and that of the runs before the timeout is chosen.
pub const HANG_TIMEOUT: Duration = Duration::from_secs(1);

impl FuzzOptions {
    /// How long an input may run before it is a hang: `-t`'s, or [`HANG_TIMEOUT`]. With
    /// `-t auto` the fuzzing runs are timed shorter (see `engine/exec_timeout.rs`).
    pub fn hang_timeout(&self) -> Duration {
        match self.timeout {
            Timeout::Fixed(timeout) => timeout,
            Timeout::FromSeeds => HANG_TIMEOUT,
        }
    }

    /// The timeout every input gets, when it is not chosen from the seeds: `-t`'s, or with
    /// `-t auto` in the standalone modes the hang timeout (their findings are run again by the
    /// target itself, which then watches no memory limit: a memory hog stopped early would not
    /// show as one).
    pub fn fixed_timeout(&self) -> Option<Duration> {
        match self.timeout {
            Timeout::Fixed(timeout) => Some(timeout),
            Timeout::FromSeeds => self.mode.runs_standalone_target().then_some(HANG_TIMEOUT),
        }
    }

    /// What clap cannot check alone (kept out of clap's `required` so each problem is one
    /// sentence, as every other error): the seed corpus and the output directory are given.
    pub fn check(&self) -> Result<(), String> {
        if self.inputs.is_empty() {
            return Err("no seed corpus given: pass -i DIR".into());
        }
        if self.output.is_none() {
            return Err("no output directory given: pass -o DIR".into());
        }
        if self.value_profile && !matches!(self.mode, Mode::Direct | Mode::Reset) {
            return Err(format!(
                "--value-profile needs --mode direct or reset (not {})",
                self.mode.name()
            ));
        }
        Ok(())
    }

    /// The output directory ([`Self::check`] makes sure there is one).
    pub fn output_dir(&self) -> PathBuf {
        self.output.clone().unwrap_or_default()
    }

    /// Whether the campaign is shown on the status screen: stdout is a terminal, and neither
    /// status lines (`--no-tui`, `--quiet`) nor the target's own output (`--show-output`,
    /// which would write over the screen) are asked for.
    pub fn shows_screen(&self) -> bool {
        use std::io::IsTerminal as _;
        !(self.quiet || self.no_tui || self.show_output) && std::io::stdout().is_terminal()
    }

    /// One client per core.
    pub fn clients(&self) -> usize {
        self.cores.as_ref().map_or(1, |cores| cores.ids.len())
    }
}
