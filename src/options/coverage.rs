//! `coverage -i DIR --html OUT | --text`: which lines and branches a corpus reaches (a
//! `libafl_cc --coverage` build only).

use std::path::PathBuf;

use clap::{ArgGroup, Args};

use super::minimize::RunLimits;

#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("report").required(true).multiple(true).args(["html", "text"])))]
pub struct CoverageOptions {
    /// A corpus directory (its files, recursively); repeat for more.
    #[arg(short = 'i', long = "input", value_name = "DIR", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write an HTML report (one page per source file, `OUT/index.html` first) into OUT.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    /// Print a table of line, branch, function and region coverage per source file.
    #[arg(long)]
    pub text: bool,
    #[command(flatten)]
    pub limits: RunLimits,
}
