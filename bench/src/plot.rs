//! `coverage-TARGET.png`: branches over time of every run on a target, drawn by gnuplot.

use std::{fmt::Write as _, fs, path::Path, process::Command};

use crate::report::Run;

/// Draws branches over time for every run on `target` (first trials) with gnuplot.
pub fn plot(runs: &[Run], target: &str, dir: &Path) -> Result<(), String> {
    let mut script = format!(
        "set terminal pngcairo size 1000,600\nset output 'coverage-{target}.png'\nset title '{target}: branches covered over time'\nset xlabel 'seconds'\nset ylabel 'branches'\nset key left top\nplot "
    );
    let mut first = true;
    for r in runs
        .iter()
        .filter(|r| r.workload == target && r.trial == 0 && !r.over_time.is_empty())
    {
        let data = format!("cov-{target}-{}.dat", r.fuzzer);
        let mut text = String::new();
        for (t, b) in &r.over_time {
            let _ = writeln!(text, "{t:.1} {b}");
        }
        fs::write(dir.join(&data), text).map_err(|e| e.to_string())?;
        if !first {
            script.push_str(", ");
        }
        first = false;
        let _ = write!(
            script,
            "'{data}' using 1:2 with linespoints title '{}'",
            r.fuzzer
        );
    }
    if first {
        return Err("no coverage data to plot".into());
    }
    script.push('\n');
    let gp = format!("coverage-{target}.gp");
    fs::write(dir.join(&gp), script).map_err(|e| e.to_string())?;
    let status = Command::new("gnuplot")
        .arg(&gp)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot run gnuplot (apt-get install gnuplot-nox): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("gnuplot failed: {status}"))
    }
}
