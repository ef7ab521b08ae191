//! libFuzzer's run on files: each input file run in a fresh child, `-runs` times, stopping at
//! the first failure with libFuzzer's report and exit code.

use std::time::Instant;

use super::{report, watch, Flags};
use crate::target::{
    isolated::{self, Outcome},
    stack,
};

/// Files as arguments: run each (`-runs` times) in a fresh child; stop at the first failure.
pub(super) fn run(program: &str, flags: &Flags) -> Result<i32, String> {
    flags.set_up_harness();
    // The children print libFuzzer's first line and their stack when they crash or time out.
    stack::use_libfuzzer_words(flags.limits().timeout, false);
    stack::print_on_fatal_signals();
    let runs = flags.runs.unwrap_or(1).max(1) as usize;
    eprintln!(
        "{program}: Running {} inputs {runs} time(s) each.",
        flags.paths.len()
    );
    let start = Instant::now();
    for path in &flags.paths {
        eprintln!("Running: {}", path.display());
        let bytes = flags.read_input(path)?;
        let began = Instant::now();
        let (outcome, _) = isolated::run(&vec![bytes.as_slice(); runs], flags.limits(), false)?;
        if outcome != Outcome::Ok {
            let (_, code) = report(outcome, flags);
            return Ok(code);
        }
        eprintln!(
            "Executed {} in {} ms",
            path.display(),
            began.elapsed().as_millis()
        );
    }
    eprintln!(
        "***\n*** NOTE: fuzzing was not performed, you have only\n\
         ***       executed the target code on a fixed set of inputs.\n***"
    );
    if flags.print_final_stats {
        let secs = start.elapsed().as_secs_f64().max(0.001);
        let units = (flags.paths.len() * runs) as u64;
        watch::print_final_stats(units, (units as f64 / secs) as u64, 0, 0);
    }
    Ok(0)
}
