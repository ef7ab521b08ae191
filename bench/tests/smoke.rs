//! The bench end to end, short: two fuzzers for 5 s each, CSV, summary and plot produced.

use std::{fs, path::PathBuf, process::Command};

#[test]
fn bench_runs_two_fuzzers_and_writes_csv_summary_and_png() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("lafuzz-bench-smoke-{}", std::process::id()));
    let _ = fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_lafuzz-bench"))
        .args([
            "--time",
            "5",
            "--fuzzers",
            "ours-direct,libfuzzer",
            "--no-extras",
            "--out",
        ])
        .arg(&out)
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(status.success());
    let csv = fs::read_to_string(out.join("results.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for row in &rows {
        let cols: Vec<&str> = row.split(',').collect();
        assert!(cols[5].parse::<u64>().unwrap() > 0, "no executions: {row}");
        assert!(cols[9].parse::<u64>().unwrap() > 0, "no branches: {row}");
    }
    let summary = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| ours-direct |") && summary.contains("| libfuzzer |"));
    let png = fs::read(out.join("coverage.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "coverage.png is not a PNG");
    fs::remove_dir_all(&out).unwrap();
}
