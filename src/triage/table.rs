//! `triage OUT`: the campaign's findings by bucket, one line each, with the commands that
//! reproduce and minimize the bucket's first input.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use super::{buckets, description::Written, Describer, Description};
use crate::{
    options::TriageOptions,
    platform::output,
    target::{
        harness,
        reproduce::{self, Reproduce},
    },
};

/// One bucket's line.
struct Bucket {
    /// The description of its first input.
    written: Written,
    first: PathBuf,
    inputs: usize,
    first_seen: SystemTime,
}

pub fn run(opts: &TriageOptions) -> Result<i32, String> {
    let out = &opts.output;
    if !output::stats_file(out).exists() && !output::crashes_dir(out).is_dir() {
        return Err(format!(
            "{} is not a campaign's output directory (no fuzzer_stats, no crashes/)",
            out.display()
        ));
    }
    let describer = describer_for_missing(opts);
    let mut table: BTreeMap<(String, String), Bucket> = BTreeMap::new();
    let dirs = [
        output::crashes_dir(out),
        output::hangs_dir(out),
        output::ooms_dir(out),
        output::leaks_dir(out),
    ];
    for input in dirs.iter().flat_map(|d| output::visible_entries(d)) {
        let Some(written) = description_of(&input, describer.as_ref()) else {
            continue;
        };
        let first_seen = modified(&input);
        let key = (written.kind.clone(), written.bucket.clone());
        let bucket = table.entry(key).or_insert_with(|| Bucket {
            written: written.clone(),
            first: input.clone(),
            inputs: 0,
            first_seen,
        });
        if first_seen < bucket.first_seen {
            (bucket.written, bucket.first, bucket.first_seen) = (written, input, first_seen);
        }
        bucket.inputs += 1;
    }
    print_table(out, table.into_values().collect());
    Ok(0)
}

/// Inputs saved without a description (by an older version, or from a killed client) are
/// described now when this binary links the harness that ran them.
fn describer_for_missing(opts: &TriageOptions) -> Option<Describer> {
    harness::coverage_counter_count()?;
    let memory_args = reproduce::replay_memory_args(opts.rss_limit_mb, None);
    let how = Reproduce::for_this_binary(memory_args);
    Some(Describer::new(how, opts.timeout))
}

fn description_of(input: &Path, describer: Option<&Describer>) -> Option<Written> {
    let file = output::description_file(input);
    if let Some(written) = fs::read_to_string(&file)
        .ok()
        .and_then(|t| Description::read_text(&t))
    {
        return Some(written);
    }
    let describer = describer?;
    let rerun = describer.run(input);
    let minimizable = !matches!(rerun.description.kind.as_str(), "timeout" | "memory leak");
    let reproduce = describer.reproduce().described(input, minimizable);
    let text = rerun.description.to_text() + &reproduce;
    let _ = output::write_atomic(&file, text.as_bytes());
    Description::read_text(&text)
}

fn modified(file: &Path) -> SystemTime {
    fs::metadata(file)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn print_table(out: &Path, mut buckets: Vec<Bucket>) {
    if buckets.is_empty() {
        println!("no findings in {}", out.display());
        return;
    }
    let hits = buckets::hits(out);
    buckets.sort_by_key(|b| b.first_seen);
    let start = campaign_start(out).unwrap_or(buckets[0].first_seen);
    println!(
        "{:<12}  {:<34}  {:>7}  {:>6}  {:>10}  top frame",
        "bucket", "kind", "crashes", "inputs", "first seen"
    );
    for b in &buckets {
        let seen = hits.get(&b.written.bucket).copied().unwrap_or(0);
        let after = b.first_seen.duration_since(start).unwrap_or_default();
        println!(
            "{:<12}  {:<34}  {:>7}  {:>6}  {:>10}  {}",
            b.written.bucket,
            b.written.kind,
            seen.max(b.inputs),
            b.inputs,
            format!("+{}", short(after)),
            b.written.top_frame
        );
        if let Some(command) = &b.written.reproduce {
            println!("    reproduce: {command}");
        }
        if let Some(command) = &b.written.minimize {
            println!("    minimize:  {command}");
        }
        println!("    input:     {}", b.first.display());
    }
    println!(
        "{} bucket(s); first seen: after the campaign's start; crashes: every crash it ran, by bucket",
        buckets.len()
    );
}

/// `start_time` of the campaign's `fuzzer_stats`.
fn campaign_start(out: &Path) -> Option<SystemTime> {
    let text = fs::read_to_string(output::stats_file(out)).ok()?;
    let secs: u64 = output::parse_fuzzer_stats(&text)
        .get("start_time")?
        .parse()
        .ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s / 60) % 60),
    }
}
