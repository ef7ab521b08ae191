//! Reading what each tool leaves behind: AFL-style `fuzzer_stats`, libFuzzer's final stats,
//! and `llvm-cov export -summary-only` JSON.

use lafuzz::platform::output::parse_fuzzer_stats;

/// `execs_done` of a `fuzzer_stats` file (AFL++'s and ours).
pub fn afl_execs(text: &str) -> Option<u64> {
    parse_fuzzer_stats(text).get("execs_done")?.parse().ok()
}

/// libFuzzer's `-print_final_stats=1` line `stat::number_of_executed_units: N`.
pub fn libfuzzer_execs(log: &str) -> Option<u64> {
    log.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .find_map(|v| v.trim().parse().ok())
}

/// Covered and total (branches, lines) over the source files whose path contains `filter`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub branches: u64,
    pub branches_total: u64,
    pub lines: u64,
    pub lines_total: u64,
}

pub fn llvm_cov_summary(json: &str, filter: &str) -> Result<Coverage, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let files = v["data"][0]["files"]
        .as_array()
        .ok_or("llvm-cov export: no data[0].files")?;
    let mut cov = Coverage::default();
    for file in files {
        let name = file["filename"].as_str().unwrap_or_default();
        if !name.contains(filter) {
            continue;
        }
        let s = &file["summary"];
        let get = |kind: &str, field: &str| s[kind][field].as_u64().unwrap_or(0);
        cov.branches += get("branches", "covered");
        cov.branches_total += get("branches", "count");
        cov.lines += get("lines", "covered");
        cov.lines_total += get("lines", "count");
    }
    Ok(cov)
}

/// The median of some values (the mean of the middle two for an even count).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_afl_stats() {
        let text = "start_time        : 1\nexecs_done        : 12345\nexecs_per_sec     : 9.5\n";
        assert_eq!(afl_execs(text), Some(12345));
        assert_eq!(afl_execs("nothing"), None);
    }

    #[test]
    fn reads_libfuzzer_final_stats() {
        let log = "#2 INITED\nDone 100 runs\nstat::number_of_executed_units: 4567\nstat::average_exec_per_sec:     456\n";
        assert_eq!(libfuzzer_execs(log), Some(4567));
        assert_eq!(libfuzzer_execs("crash"), None);
    }

    #[test]
    fn sums_llvm_cov_over_matching_files() {
        let json = r#"{"data":[{"files":[
            {"filename":"/x/libpng/png.c","summary":{"branches":{"count":10,"covered":4},"lines":{"count":100,"covered":50}}},
            {"filename":"/x/libpng/pngread.c","summary":{"branches":{"count":6,"covered":1},"lines":{"count":20,"covered":2}}},
            {"filename":"/x/harness.cc","summary":{"branches":{"count":99,"covered":99},"lines":{"count":9,"covered":9}}}
        ]}]}"#;
        let cov = llvm_cov_summary(json, "/libpng/").unwrap();
        assert_eq!(
            cov,
            Coverage {
                branches: 5,
                branches_total: 16,
                lines: 52,
                lines_total: 120
            }
        );
        assert!(llvm_cov_summary("{}", "x").is_err());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
