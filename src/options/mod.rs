//! The command line: one options struct per subcommand (`options/fuzz.rs`,
//! `options/replay.rs`, ...), values typed and checked by clap (`options/values.rs`). Nothing here
//! touches the disk or starts a process.

mod coverage;
mod fuzz;
mod minimize;
mod replay;
mod values;

use clap::{error::ErrorKind, Parser, Subcommand};

pub use coverage::CoverageOptions;
pub use fuzz::{FuzzOptions, Mode, HANG_TIMEOUT};
pub use minimize::{MinimizeCorpusOptions, MinimizeOptions, RunLimits};
pub use replay::{ReplayOptions, TriageOptions};
pub use values::DEFAULT_RSS_LIMIT_MB;

#[derive(Debug, Parser)]
#[command(
    name = "lafuzz",
    version,
    about = "Coverage-guided fuzzer built on LibAFL",
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fuzz the target linked into this binary.
    Fuzz(Box<FuzzOptions>),
    /// Run each input once and report what happened (crash, timeout, ok).
    Replay(ReplayOptions),
    /// Shrink a crashing input while it still crashes the same way (as afl-tmin).
    Minimize(MinimizeOptions),
    /// Keep the smallest inputs that together have all of a corpus's coverage (as afl-cmin).
    MinimizeCorpus(MinimizeCorpusOptions),
    /// Sort a campaign's crashes, hangs, out-of-memory inputs and leaks into bugs: one line
    /// per bucket (kind and top three frames), with the commands that reproduce and minimize.
    Triage(TriageOptions),
    /// Run a corpus through a `libafl_cc --coverage` build and report the lines and branches
    /// it reaches (HTML and/or a table), as `cargo fuzz coverage`.
    Coverage(CoverageOptions),
}

impl Cli {
    /// Parses the process's arguments. A bad command line is `Err(exit code)` after clap's
    /// help or version text, or after one line saying what is wrong (see [`one_line`]).
    pub fn from_args() -> Result<Self, i32> {
        Self::try_parse().map_err(|e| {
            let code = e.exit_code();
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
            } else {
                eprintln!("lafuzz: error: {}", one_line(&e));
            }
            code
        })
    }
}

/// AFL++'s options that a command line may start with out of habit (`afl-fuzz -i in -o out`).
const AFL_STYLE: &[&str] = &["-i", "-o", "-x", "-t", "-m", "-c", "-M", "-S", "-p", "-V"];

/// The AFL++-style option a command line without a subcommand starts with, if it does. Taken
/// as libFuzzer's, such a line fuzzes and writes new inputs into the directories it names, the
/// seed directory included.
pub fn afl_style_start(args: &[String]) -> Option<&str> {
    let first = args.first()?;
    (AFL_STYLE.contains(&first.as_str()) && args.len() > 1).then_some(first.as_str())
}

/// A clap error as one line, as every other error of ours: `bad --cores '0-x': why` for a
/// value clap's parsers refused, else the first line of clap's own text.
fn one_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    if let (ErrorKind::ValueValidation, Some(arg), Some(value)) = (
        e.kind(),
        context(ContextKind::InvalidArg),
        context(ContextKind::InvalidValue),
    ) {
        let flag = arg.split([' ', '=']).next().unwrap_or(&arg);
        let why = std::error::Error::source(e).map_or_else(String::new, |s| s.to_string());
        return format!("bad {flag} '{value}': {why}");
    }
    if let (ErrorKind::MissingRequiredArgument, Some(ContextValue::Strings(args))) =
        (e.kind(), e.get(ContextKind::InvalidArg))
    {
        return format!("missing {}", args.join(", "));
    }
    let text = e.render().to_string();
    text.lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_string()
}

/// `fuzz ARGS` parsed, for tests of what consumes the options.
#[cfg(test)]
pub fn fuzz_options(args: &[&str]) -> FuzzOptions {
    let argv = ["lafuzz", "fuzz"].iter().chain(args);
    match Cli::try_parse_from(argv)
        .expect("valid fuzz options")
        .command
    {
        Command::Fuzz(opts) => *opts,
        _ => unreachable!("parsed as fuzz"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::CommandFactory;

    use super::{fuzz::Timeout, *};

    #[test]
    fn the_timeout_is_chosen_from_the_seeds_unless_given() {
        let timeout = |args: &[&str]| fuzz_options(args).timeout;
        assert_eq!(timeout(&[]), Timeout::FromSeeds);
        assert_eq!(
            timeout(&["-t", "20"]),
            Timeout::Fixed(Duration::from_millis(20))
        );
        assert_eq!(timeout(&["-t", "auto"]), Timeout::FromSeeds);
        let auto = fuzz_options(&["-t", "auto"]);
        assert_eq!(
            (auto.fixed_timeout(), auto.hang_timeout()),
            (None, HANG_TIMEOUT)
        );
        let standalone = fuzz_options(&["-t", "auto", "--mode", "persistent"]);
        assert_eq!(standalone.fixed_timeout(), Some(HANG_TIMEOUT));
    }

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn value_errors_are_one_line_naming_the_flag() {
        let e =
            Cli::try_parse_from(["x", "fuzz", "-i", "a", "-o", "b", "--cores", "0-x"]).unwrap_err();
        let line = one_line(&e);
        assert!(line.starts_with("bad --cores '0-x': "), "{line}");
        assert!(!line.contains('\n'));
        let e = Cli::try_parse_from(["x", "fuzz", "-t", "0"]).unwrap_err();
        assert!(
            one_line(&e).starts_with("bad --timeout '0'"),
            "{}",
            one_line(&e)
        );
        let e = Cli::try_parse_from(["x", "coverage", "-i", "corpus"]).unwrap_err();
        assert_eq!(one_line(&e), "missing <--html <OUT>|--text>");
    }
}
