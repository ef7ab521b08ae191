//! The campaign's buckets on disk, shared by every client of a campaign: a file per bucket
//! claimed by the first client to save an input in it, and one line per crash seen, by
//! bucket (appended whole, so clients writing at once never mix their lines).

use std::{
    collections::HashMap,
    fs::{self, OpenOptions},
    io::{self, Write as _},
    path::{Path, PathBuf},
};

/// `OUT/.triage/`: bookkeeping, hidden from tools that read the output directory.
pub fn dir(out: &Path) -> PathBuf {
    out.join(".triage")
}

fn hits_file(out: &Path) -> PathBuf {
    dir(out).join("hits")
}

/// True for the first caller of a campaign with this bucket: it saves an input for it.
pub fn claim(out: &Path, bucket: &str) -> io::Result<bool> {
    fs::create_dir_all(dir(out))?;
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir(out).join(format!("bucket-{bucket}")))
    {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Counts one more crash of this bucket.
pub fn record_hit(out: &Path, bucket: &str) -> io::Result<()> {
    fs::create_dir_all(dir(out))?;
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(hits_file(out))?;
    file.write_all(format!("{bucket}\n").as_bytes())
}

/// Crashes seen per bucket.
pub fn hits(out: &Path) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for line in fs::read_to_string(hits_file(out))
        .unwrap_or_default()
        .lines()
    {
        *counts.entry(line.to_string()).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_is_claimed_once_and_hits_are_counted() {
        let out = std::env::temp_dir().join(format!("lafuzz-buckets-{}", std::process::id()));
        let _ = fs::remove_dir_all(&out);
        assert!(claim(&out, "abc").unwrap());
        assert!(!claim(&out, "abc").unwrap());
        assert!(claim(&out, "def").unwrap());
        for bucket in ["abc", "abc", "def"] {
            record_hit(&out, bucket).unwrap();
        }
        let hits = hits(&out);
        assert_eq!((hits["abc"], hits["def"]), (2, 1));
        fs::remove_dir_all(&out).unwrap();
    }
}
