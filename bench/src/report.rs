//! One run's results, and `results.csv`.

use std::fmt::Write as _;

use crate::fuzzers;

/// One fuzzer's run on libpng (or on the empty harness, or the magic harness).
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub fuzzer: String,
    /// `libpng`, `empty`, `scaling` or `magic`.
    pub workload: String,
    pub ours: bool,
    pub trial: usize,
    pub wall_secs: f64,
    pub cpu_secs: f64,
    pub execs: u64,
    pub corpus: usize,
    pub branches: Option<u64>,
    pub lines: Option<u64>,
    /// (seconds since start, branches covered) for the coverage plot.
    pub over_time: Vec<(f64, u64)>,
    /// Magic harness: seconds to the first crash, if found.
    pub time_to_crash: Option<f64>,
}

impl Run {
    pub fn execs_per_sec(&self) -> f64 {
        if self.wall_secs > 0.0 {
            self.execs as f64 / self.wall_secs
        } else {
            0.0
        }
    }
    pub fn execs_per_cpu_sec(&self) -> f64 {
        if self.cpu_secs > 0.0 {
            self.execs as f64 / self.cpu_secs
        } else {
            0.0
        }
    }
}

pub const CSV_HEADER: &str = "workload,fuzzer,trial,wall_secs,cpu_secs,execs,execs_per_sec,execs_per_cpu_sec,corpus,branches,lines,time_to_crash";

pub fn csv(runs: &[Run]) -> String {
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let mut out = format!("{CSV_HEADER}\n");
    for r in runs {
        let _ = writeln!(
            out,
            "{},{},{},{:.1},{:.1},{},{:.0},{:.0},{},{},{},{}",
            r.workload,
            r.fuzzer,
            r.trial,
            r.wall_secs,
            r.cpu_secs,
            r.execs,
            r.execs_per_sec(),
            r.execs_per_cpu_sec(),
            r.corpus,
            opt(r.branches),
            opt(r.lines),
            r.time_to_crash.map_or(String::new(), |t| format!("{t:.1}")),
        );
    }
    out
}

/// The runs of a `results.csv` as [`csv`] wrote it (the coverage over time is not in it).
pub fn parse_csv(text: &str) -> Result<Vec<Run>, String> {
    let mut lines = text.lines();
    if lines.next() != Some(CSV_HEADER) {
        return Err("not a results.csv of this bench: its header differs".into());
    }
    lines
        .filter(|line| !line.is_empty())
        .map(|line| {
            let field: Vec<&str> = line.split(',').collect();
            if field.len() != CSV_HEADER.split(',').count() {
                return Err(format!("bad results.csv line: {line}"));
            }
            let bad = |i: usize| format!("bad {:?} in results.csv line: {line}", field[i]);
            let num = |i: usize| field[i].parse::<f64>().map_err(|_| bad(i));
            let int = |i: usize| field[i].parse::<u64>().map_err(|_| bad(i));
            let opt = |i: usize| (!field[i].is_empty()).then(|| int(i)).transpose();
            Ok(Run {
                workload: field[0].into(),
                fuzzer: field[1].into(),
                ours: fuzzers::is_ours(field[1]),
                trial: int(2)? as usize,
                wall_secs: num(3)?,
                cpu_secs: num(4)?,
                execs: int(5)?,
                corpus: int(8)? as usize,
                branches: opt(9)?,
                lines: opt(10)?,
                time_to_crash: (!field[11].is_empty()).then(|| num(11)).transpose()?,
                over_time: Vec::new(),
            })
        })
        .collect()
}

/// A run with the given figures, for the bench's own tests.
#[cfg(test)]
pub fn sample_run(fuzzer: &str, ours: bool, execs: u64, branches: u64) -> Run {
    Run {
        fuzzer: fuzzer.into(),
        workload: "libpng".into(),
        ours,
        wall_secs: 10.0,
        cpu_secs: 5.0,
        execs,
        corpus: 3,
        branches: Some(branches),
        lines: Some(branches * 2),
        ..Run::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reads_back_what_it_wrote() {
        let mut magic = sample_run("ours-direct", true, 9, 0);
        magic.branches = None;
        magic.lines = None;
        magic.time_to_crash = Some(1.5);
        magic.trial = 2;
        let runs = [sample_run("libfuzzer", false, 100, 7), magic];
        let back = parse_csv(&csv(&runs)).unwrap();
        assert_eq!(csv(&back), csv(&runs));
        assert!(!back[0].ours && back[1].ours);
        assert!(parse_csv("fuzzer,branches\nx,1\n").is_err());
        assert!(parse_csv(&format!("{CSV_HEADER}\nlibpng,x\n")).is_err());
    }

    #[test]
    fn csv_has_one_row_per_run_with_rates() {
        let text = csv(&[sample_run("a", true, 100, 7)]);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(CSV_HEADER));
        assert_eq!(lines.next(), Some("libpng,a,0,10.0,5.0,100,10,20,3,7,14,"));
    }
}
