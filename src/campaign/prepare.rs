//! Before anything forks: the mode's checks of its target, the dictionaries, the seeds and the
//! output directory. Every problem is one sentence, reported before a process starts.

use std::{
    fs,
    io::Read,
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    time::Duration,
};

use libafl::mutators::Tokens;

use crate::{
    config::FuzzConfig,
    engine::saved_state,
    modes::{self, ExecutionMode},
    options::FuzzOptions,
    platform::{
        errors::error_text,
        output::{self, collect_files},
    },
};

/// Checks a `fuzz` command, reads what the clients need, and creates the output directory.
pub fn prepare(mode: &dyn ExecutionMode, opts: FuzzOptions) -> Result<FuzzConfig, String> {
    opts.check()?;
    let output = opts.output_dir();
    let map_size = mode.check(&opts)?;
    let cmplog_target = modes::check_cmplog_target(mode, &opts)?;
    if let Some(remote) = opts.remote_broker {
        check_reachable(remote)?;
    }
    if let Some(port) = opts.broker_port {
        TcpListener::bind(("0.0.0.0", port))
            .map_err(|e| format!("bad --broker-port {port}: cannot listen there: {e}"))?;
    }
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
    let grimoire = !opts.only_ascii && are_text(&seeds);
    output::prepare(&output)?;
    saved_state::check(&output::client_queue_dirs(&output));
    // Resume: a previous campaign's queue is part of the corpus.
    collect_files(&output::queue_dir(&output), &mut seeds)
        .map_err(|e| format!("cannot read {}: {e}", output.display()))?;
    let seeds = seeds
        .into_iter()
        .map(|seed| truncated_if_too_long(seed, opts.max_len, &output))
        .collect::<Result<Vec<_>, _>>()?;
    if seeds.is_empty() && !opts.empty_corpus_ok {
        return Err(format!(
            "seed corpus is empty: no files in {}",
            opts.inputs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(FuzzConfig {
        opts,
        output,
        tokens,
        seeds,
        map_size,
        cmplog_target,
        grimoire,
    })
}

/// Whether the seeds are text, as LibAFL's text fuzzer decides it: more than 90% of the
/// non-empty ones are. A seed is text when at most a fifth of its bytes (of a long seed, its
/// first 64 KiB) lie outside UTF-8 text: invalid sequences and control characters other than
/// whitespace. Strict UTF-8 would turn Grimoire off on the second run over a corpus that the
/// first one grew (libFuzzer's corpus directories, ClusterFuzz's): havoc leaves stray bytes in
/// most of what it adds. Of sqlite's queue after 60 s, 17-22% of the entries were strictly
/// text and 97-98% were text by this rule; of the binary targets' queues, none.
fn are_text(seeds: &[PathBuf]) -> bool {
    const LOOKED_AT: u64 = 64 << 10;
    let is_text = |bytes: &[u8]| {
        let outside: usize = bytes
            .utf8_chunks()
            .map(|chunk| {
                let controls = chunk
                    .valid()
                    .chars()
                    .filter(|&c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c'))
                    .map(char::len_utf8)
                    .sum::<usize>();
                chunk.invalid().len() + controls
            })
            .sum();
        outside * 5 <= bytes.len()
    };
    let (mut text, mut non_empty) = (0, 0);
    for seed in seeds {
        let mut bytes = Vec::new();
        let read = fs::File::open(seed).and_then(|f| f.take(LOOKED_AT).read_to_end(&mut bytes));
        if read.is_ok() && bytes.is_empty() {
            continue;
        }
        non_empty += 1;
        if read.is_ok() && is_text(&bytes) {
            text += 1;
        }
        // Once a tenth of all the seeds are not text, the rest cannot change the answer: a
        // binary corpus is not read to its end before the campaign starts.
        if (non_empty - text) * 10 >= seeds.len() {
            return false;
        }
    }
    non_empty > 0 && text * 10 > non_empty * 9
}

/// A seed longer than any input the fuzzer makes is cut to that length, as libFuzzer's
/// `-max_len` does, with a warning; the copy lives in the output directory.
fn truncated_if_too_long(seed: PathBuf, max_len: usize, out: &Path) -> Result<PathBuf, String> {
    let len = fs::metadata(&seed).map(|m| m.len()).unwrap_or(0);
    if len <= max_len as u64 {
        return Ok(seed);
    }
    let cannot = |e: std::io::Error| format!("cannot truncate seed {}: {e}", seed.display());
    let mut bytes = fs::read(&seed).map_err(cannot)?;
    bytes.truncate(max_len);
    let dir = output::truncated_seeds_dir(out);
    fs::create_dir_all(&dir).map_err(cannot)?;
    let copy = dir.join(output::input_name(&bytes));
    output::write_atomic(&copy, &bytes).map_err(cannot)?;
    println!(
        "lafuzz: warning: seed {} is {len} bytes, longer than the longest input ({max_len}): \
         using its first {max_len} bytes",
        seed.display()
    );
    Ok(copy)
}

/// Checks something listens at `--remote-broker`, so a typo is an error now rather than a
/// campaign that silently fuzzes alone.
fn check_reachable(remote: SocketAddr) -> Result<(), String> {
    TcpStream::connect_timeout(&remote, Duration::from_secs(5))
        .map(drop)
        .map_err(|e| format!("bad --remote-broker '{remote}': cannot connect: {e}"))
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn seeds_are_text_when_more_than_nine_in_ten_are_mostly_utf8_text() {
        let dir = std::env::temp_dir().join(format!("lafuzz-text-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let seed = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            fs::write(&path, bytes).unwrap();
            path
        };
        let sql = seed("sql", b"SELECT 1;\r\n\tCREATE TABLE t(x);\n");
        let accented = seed("accented", "SELECT 'd\u{e9}j\u{e0}';".as_bytes());
        let empty = seed("empty", b"");
        let png = seed("png", b"\x89PNG\r\n\x1a\n");
        let nuls = seed("nuls", b"abc\0\0def");
        let stray = seed("stray", b"SELECT \xff\0 FROM t;");
        let mut cut = vec![b'a'; (64 << 10) - 1];
        cut.extend("\u{e9}".as_bytes());
        let cut = seed("cut", &cut);
        assert!(are_text(&[sql.clone(), accented, empty.clone(), cut]));
        assert!(
            !are_text(&[sql.clone(), png.clone()]),
            "one binary seed in two"
        );
        assert!(
            !are_text(&[sql.clone(), nuls]),
            "a quarter control characters"
        );
        assert!(are_text(&[sql.clone(), stray]), "two stray bytes in 17");
        let mut mostly_text = vec![sql.clone(); 10];
        mostly_text.push(png.clone());
        assert!(are_text(&mostly_text), "one binary seed in eleven");
        mostly_text.push(png);
        assert!(!are_text(&mostly_text), "two in twelve");
        assert!(!are_text(&[empty]), "nothing but empty seeds");
        assert!(!are_text(&[]));
        assert!(!are_text(&[sql, dir.join("missing")]), "an unreadable seed");
        fs::remove_dir_all(&dir).unwrap();
    }
}
