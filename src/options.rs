//! The command line: one options struct per subcommand, validated before anything starts.

use std::{
    fs,
    net::{SocketAddr, TcpStream, ToSocketAddrs},
    path::{Path, PathBuf},
    time::Duration,
};

use clap::{Args, Parser, Subcommand, ValueEnum};
use libafl::mutators::Tokens;
use libafl_bolts::core_affinity::{get_core_ids, Cores};

#[derive(Debug, Parser)]
#[command(
    name = "lafuzz",
    version,
    about = "Coverage-guided fuzzer built on LibAFL"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fuzz the target linked into this binary.
    Fuzz(FuzzOptions),
    /// Run each input once and report what happened (crash, timeout, ok).
    Replay(ReplayOptions),
}

/// How inputs are executed.
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
    /// In-process modes run many inputs in one process, so state can leak from one input to
    /// the next: their crashes are checked in a fresh process before being reported.
    pub fn shares_process_between_inputs(self) -> bool {
        matches!(self, Self::Direct | Self::Reset)
    }

    /// Modes that run a standalone target binary instead of the harness linked in here.
    pub fn runs_standalone_target(self) -> bool {
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
    /// Per-input timeout in milliseconds; slower inputs are saved as hangs.
    #[arg(
        short = 't',
        long = "timeout",
        value_name = "MS",
        default_value_t = 1000
    )]
    pub timeout_ms: u64,
    /// Cores to fuzz on: `0-7`, `0,2,4` or `all`; one client per core.
    #[arg(long, value_name = "LIST", default_value = "0")]
    pub cores: String,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub max_time: Option<u64>,
    /// Stop each client after this many executions.
    #[arg(long, value_name = "N")]
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
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "runs")]
    pub remote_broker: Option<String>,
    /// `reset` mode: restart the client from a clean process after this many inputs.
    #[arg(long, value_name = "N", default_value_t = 50_000)]
    pub restart_every: u64,
    /// Show the target's stdout/stderr (silenced by default).
    #[arg(long)]
    pub show_output: bool,
    /// `forkserver`/`persistent` mode: the standalone target and its arguments; `@@` stands
    /// for the input file (without it, the input is in shared memory or on stdin).
    #[arg(last = true, value_name = "TARGET")]
    pub target: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ReplayOptions {
    /// Inputs to run, each in a fresh process.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Run the files (or the files in each directory, by name) one after another in one
    /// process, as a flaky crash's sequence in `crashes-flaky/` was run.
    #[arg(long)]
    pub sequence: bool,
    /// Print nothing; only the exit status tells (used to triage crashes).
    #[arg(long, hide = true)]
    pub quiet: bool,
    /// Per-input timeout in milliseconds.
    #[arg(
        short = 't',
        long = "timeout",
        value_name = "MS",
        default_value_t = 1000
    )]
    pub timeout_ms: u64,
}

/// A validated `fuzz` command: everything the campaign needs, checked up front.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub opts: FuzzOptions,
    pub output: PathBuf,
    pub cores: Cores,
    pub tokens: Tokens,
    /// Every seed file found in the `-i` directories (and a previous run's queue).
    pub seeds: Vec<PathBuf>,
    /// Entries in the coverage map: the linked harness's counters, or what the standalone
    /// target reports.
    pub map_size: usize,
    /// The broker to link ours to (`--remote-broker`), resolved and reachable.
    pub remote_broker: Option<SocketAddr>,
}

/// Parses the command line, runs the subcommand and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Fuzz(opts) => validate(opts).and_then(|c| crate::campaign::run(&c)),
        Command::Replay(opts) => crate::replay::run(&opts),
    };
    result.unwrap_or_else(|msg| {
        eprintln!("lafuzz: error: {msg}");
        1
    })
}

/// Checks a `fuzz` command line; every problem is one clear sentence.
pub fn validate(opts: FuzzOptions) -> Result<Campaign, String> {
    if opts.inputs.is_empty() {
        return Err("no seed corpus given: pass -i DIR".into());
    }
    let output = opts
        .output
        .clone()
        .ok_or("no output directory given: pass -o DIR")?;
    if opts.timeout_ms == 0 {
        return Err("-t/--timeout must be at least 1 ms".into());
    }
    if opts.runs == Some(0) {
        return Err("--runs must be at least 1".into());
    }
    if opts.restart_every == 0 {
        return Err("--restart-every must be at least 1".into());
    }
    let map_size = if opts.mode.runs_standalone_target() {
        crate::modes::forkserver::probe_map_size(&opts.target)?
    } else {
        if !opts.target.is_empty() {
            return Err(format!(
                "a target after `--` needs --mode forkserver or persistent (not {:?})",
                opts.mode
            ));
        }
        crate::harness::coverage_counters()
            .map_err(|_| {
                "this binary has no instrumented harness linked: fuzz a standalone target with \
                 --mode forkserver -- ./target @@"
                    .to_string()
            })?
            .len()
    };
    let cores = parse_cores(&opts.cores)?;
    let remote_broker = opts
        .remote_broker
        .as_deref()
        .map(reachable_broker)
        .transpose()?;
    let mut tokens = Tokens::new();
    for dict in &opts.dicts {
        load_dict(&mut tokens, dict)?;
    }
    let mut seeds = Vec::new();
    for dir in &opts.inputs {
        if !dir.is_dir() {
            return Err(format!("seed corpus {} is not a directory", dir.display()));
        }
        collect_files(dir, &mut seeds)
            .map_err(|e| format!("cannot read seed corpus {}: {e}", dir.display()))?;
    }
    crate::output::prepare(&output)?;
    // Resume: a previous campaign's queue is part of the corpus.
    collect_files(&crate::output::queue_dir(&output), &mut seeds)
        .map_err(|e| format!("cannot read {}: {e}", output.display()))?;
    if seeds.is_empty() {
        return Err(format!(
            "seed corpus is empty: no files in {}",
            opts.inputs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Campaign {
        opts,
        output,
        cores,
        tokens,
        seeds,
        map_size,
        remote_broker,
    })
}

/// Resolves `--remote-broker` and checks something listens there, so a typo is an error now
/// rather than a campaign that silently fuzzes alone.
fn reachable_broker(addr: &str) -> Result<SocketAddr, String> {
    let bad = |why: String| format!("bad --remote-broker '{addr}': {why}");
    let resolved = addr
        .to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("no address".into()))?;
    TcpStream::connect_timeout(&resolved, Duration::from_secs(5))
        .map_err(|e| bad(format!("cannot connect: {e}")))?;
    Ok(resolved)
}

/// A LibAFL error as one line: its message without the backtrace LibAFL appends.
pub fn error_text(e: &libafl::Error) -> String {
    let text = e.to_string();
    text.split("\nBacktrace")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Parses `--cores` and checks every core exists on this machine.
pub fn parse_cores(list: &str) -> Result<Cores, String> {
    let bad = |why: String| format!("bad --cores '{list}': {why}");
    let cores = Cores::from_cmdline(list).map_err(|e| bad(error_text(&e)))?;
    let available = get_core_ids().map_err(|e| bad(error_text(&e)))?;
    if cores.ids.is_empty() {
        return Err(bad("no cores listed".into()));
    }
    if let Some(missing) = cores.ids.iter().find(|id| !available.contains(id)) {
        return Err(bad(format!(
            "core {} does not exist (this machine has {})",
            missing.0,
            available.len()
        )));
    }
    Ok(cores)
}

/// Adds the tokens of one AFL/libFuzzer dictionary file.
pub fn load_dict(tokens: &mut Tokens, path: &Path) -> Result<(), String> {
    let bad = |why: String| format!("bad dictionary {}: {why}", path.display());
    // Tokens::add_from_file panics on non-UTF-8 lines; check first.
    let text = fs::read(path).map_err(|e| bad(e.to_string()))?;
    std::str::from_utf8(&text).map_err(|_| bad("not a text file".into()))?;
    tokens
        .add_from_file(path)
        .map_err(|e| bad(error_text(&e)))?;
    Ok(())
}

/// Regular, non-hidden files under `dir`, recursively, in a stable order.
pub fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect_files(&path, out)?;
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_accept_ranges_and_all() {
        assert_eq!(parse_cores("0").unwrap().ids.len(), 1);
        assert!(!parse_cores("all").unwrap().ids.is_empty());
    }

    #[test]
    fn cores_reject_garbage_and_missing_cores() {
        assert!(parse_cores("abc")
            .unwrap_err()
            .starts_with("bad --cores 'abc'"));
        assert!(parse_cores("9999").unwrap_err().contains("does not exist"));
    }

    #[test]
    fn dict_parses_afl_format_and_rejects_garbage() {
        let dir = std::env::temp_dir().join(format!("lafuzz-dict-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.dict");
        fs::write(&good, "# comment\nihdr=\"IHDR\"\n\"\\x89PNG\"\n").unwrap();
        let mut tokens = Tokens::new();
        load_dict(&mut tokens, &good).unwrap();
        assert_eq!(tokens.len(), 2);
        assert!(tokens.tokens().contains(&b"\x89PNG".to_vec()));

        let bad = dir.join("bad.dict");
        fs::write(&bad, "not a token line\n").unwrap();
        assert!(load_dict(&mut Tokens::new(), &bad).is_err());
        let binary = dir.join("binary.dict");
        fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        assert!(load_dict(&mut Tokens::new(), &binary).is_err());
        assert!(load_dict(&mut Tokens::new(), &dir.join("missing")).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn collect_files_skips_hidden_and_recurses() {
        let dir = std::env::temp_dir().join(format!("lafuzz-files-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("a"), "x").unwrap();
        fs::write(dir.join(".a.lafl_lock"), "").unwrap();
        fs::write(dir.join("sub/b"), "y").unwrap();
        let mut files = Vec::new();
        collect_files(&dir, &mut files).unwrap();
        assert_eq!(files, vec![dir.join("a"), dir.join("sub/b")]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
