//! What a finding is, in words: the kind of failure (sanitizer report or signal), its stack,
//! and its crash state (the top three frames of the target's own code, as ClusterFuzz
//! computes it), whose hash is the finding's bucket: one bug, one bucket.

use std::fmt::Write as _;

/// One frame of a stack, as a sanitizer or our stack printer (`stack.rs`) writes it:
/// `#N 0xADDR in FUNCTION FILE:LINE:COL`, or `(MODULE+0xOFFSET)` in place of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub function: String,
    pub location: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// `heap-buffer-overflow READ 4`, `SIGSEGV`, `timeout`, `memory leak`, ...
    pub kind: String,
    /// Every frame of the report's first stack, top first.
    pub frames: Vec<Frame>,
}

/// How many of the target's frames make its crash state.
const STATE_FRAMES: usize = 3;
/// Frames shown in a description file.
const SHOWN_FRAMES: usize = 8;

impl Description {
    /// Reads a run's output (sanitizer reports, our stack printer's, `replay`'s verdict).
    pub fn parse(output: &str) -> Self {
        let lines: Vec<&str> = output.lines().collect();
        let report = lines.iter().position(|l| report_kind(l).is_some());
        let kind = match report {
            Some(at) => {
                let mut kind = report_kind(lines[at]).unwrap_or_default();
                // ASan says what the access was on the next lines: `READ of size 4 at ...`.
                let access = lines[at..].iter().take(4).find_map(|l| access(l));
                if let Some(access) = access {
                    kind = format!("{kind} {access}");
                }
                kind
            }
            None => verdict_kind(&lines).unwrap_or_else(|| "unknown".into()),
        };
        let frames = lines[report.unwrap_or(0)..]
            .iter()
            .map(|l| l.trim_start())
            .skip_while(|l| parse_frame(l).is_none())
            .map_while(parse_frame)
            .collect();
        Self { kind, frames }
    }

    /// The target's own frames, top first: sanitizer runtime, C library, allocator and
    /// engine frames are not the bug's.
    pub fn target_frames(&self) -> impl Iterator<Item = &Frame> {
        self.frames.iter().filter(|f| !is_plumbing(f))
    }

    /// The crash state: the top three of the target's frames' functions.
    pub fn state(&self) -> Vec<&str> {
        self.target_frames()
            .take(STATE_FRAMES)
            .map(|f| f.function.as_str())
            .collect()
    }

    /// The bucket: a hash of the kind and the crash state.
    pub fn bucket(&self) -> String {
        let key = format!("{}\n{}", self.kind, self.state().join("\n"));
        let digest = sha1_smol::Sha1::from(key).digest().to_string();
        digest[..12].to_string()
    }

    /// The `NAME.txt` written beside a saved input.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "kind: {}\nbucket: {}\nstate: {}\n",
            self.kind,
            self.bucket(),
            self.state().join(" / ")
        );
        text.push_str("stack:\n");
        for (i, f) in self.target_frames().take(SHOWN_FRAMES).enumerate() {
            let _ = writeln!(text, "  #{i} {} {}", f.function, f.location);
        }
        text
    }

    /// A `NAME.txt` read back: kind, bucket, state and top frame, as written.
    pub fn read_text(text: &str) -> Option<Written> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
                .map(str::to_string)
        };
        let top_frame = text
            .lines()
            .find_map(|l| l.trim_start().strip_prefix("#0 "))
            .unwrap_or("(no stack)")
            .to_string();
        Some(Written {
            kind: field("kind")?,
            bucket: field("bucket")?,
            state: field("state").unwrap_or_default(),
            top_frame,
            reproduce: field("reproduce"),
            minimize: field("minimize"),
        })
    }
}

/// A description as read from a `NAME.txt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub kind: String,
    pub bucket: String,
    pub state: String,
    pub top_frame: String,
    /// The commands written with it (see `solutions/corpus.rs`).
    pub reproduce: Option<String>,
    pub minimize: Option<String>,
}

/// The kind a report's first line names: a sanitizer's `ERROR: AddressSanitizer: KIND ...`,
/// UBSan's `runtime error: KIND...`, libFuzzer's or ours `ERROR: libFuzzer: deadly signal`.
fn report_kind(line: &str) -> Option<String> {
    if let Some(rest) = line.split("runtime error: ").nth(1) {
        let what = rest.split([':', ',']).next().unwrap_or(rest);
        return Some(format!("undefined behaviour: {}", what.trim()));
    }
    let rest = line.split("ERROR: ").nth(1)?;
    let (who, what) = rest.split_once(": ")?;
    if who == "LeakSanitizer" {
        return Some("memory leak".into());
    }
    if who == "lafuzz" {
        // Our stack printer: `deadly signal SIGSEGV`.
        return Some(what.trim_start_matches("deadly signal ").trim().to_string());
    }
    if !who.ends_with("Sanitizer") && who != "libFuzzer" {
        return None;
    }
    let first = what.split_whitespace().next()?;
    Some(match first {
        "requested" | "allocation-size-too-big" | "out-of-memory" => "out-of-memory".into(),
        _ => first.trim_end_matches(':').to_string(),
    })
}

/// ASan's access line: `READ of size 4 at 0x...` is `READ 4`.
fn access(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let op = words.next()?;
    if !matches!(op, "READ" | "WRITE") || words.next()? != "of" || words.next()? != "size" {
        return None;
    }
    Some(format!("{op} {}", words.next()?))
}

/// Without a report: `replay`'s verdict (`CRASH (signal 11, SIGSEGV)`, `TIMEOUT`, ...).
fn verdict_kind(lines: &[&str]) -> Option<String> {
    lines.iter().find_map(|l| {
        let verdict = l.rsplit(": ").next()?;
        let word = verdict.split_whitespace().next()?;
        Some(match word {
            "CRASH" => verdict
                .rsplit(", ")
                .next()?
                .trim_end_matches(')')
                .to_string(),
            "TIMEOUT" => "timeout".into(),
            "OUT-OF-MEMORY" => "out-of-memory".into(),
            "LEAK" => "memory leak".into(),
            "EXIT" => "exit".into(),
            _ => return None,
        })
    })
}

/// `#3 0x55d4c3 in func file.c:20:5` or `#3 0x55d4c3 (module+0x1234)`.
fn parse_frame(line: &str) -> Option<Frame> {
    let rest = line.strip_prefix('#')?;
    let (number, rest) = rest.split_once(' ')?;
    number.parse::<u32>().ok()?;
    let rest = rest.trim_start();
    let (_address, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let mut rest = rest.trim();
    // Sanitizers end an unsymbolized frame with its module's build id.
    if let Some(at) = rest.find(" (BuildId: ") {
        rest = rest[..at].trim_end();
    }
    let Some(rest) = rest.strip_prefix("in ") else {
        return Some(Frame {
            function: "??".into(),
            location: rest.to_string(),
        });
    };
    // Demangled C++ names hold spaces; the location is the last word.
    let (function, location) = match rest.rsplit_once(' ') {
        Some((f, l)) if looks_like_location(l) => (f.trim(), l),
        _ => (rest, ""),
    };
    Some(Frame {
        function: function.to_string(),
        location: location.to_string(),
    })
}

fn looks_like_location(word: &str) -> bool {
    (word.starts_with('(') && word.ends_with(')')) || word.contains(':') || word.contains('/')
}

/// Frames that are never the bug's: the sanitizers' runtime and interceptors, the C
/// library's abort path and allocator, the engine and the Rust runtime below the harness,
/// our stack printer.
fn is_plumbing(frame: &Frame) -> bool {
    const PREFIXES: &[&str] = &[
        "__asan",
        "__lsan",
        "__ubsan",
        "__msan",
        "__sanitizer",
        "__interceptor_",
        "___interceptor_",
        "__interception",
        "lafuzz_",
        "__GI_",
        "__libc_",
        "__pthread_kill",
        "_start",
        "lafuzz::",
        "libafl",
        "std::",
        "core::",
        "backtrace::",
        "<",
        "__rust",
        "__restore_rt",
        "operator new",
        "operator delete",
        "__cxa_",
        "__gnu_cxx::__verbose_terminate",
        "std::__terminate",
    ];
    const NAMES: &[&str] = &[
        "??",
        "abort",
        "raise",
        "gsignal",
        "pthread_kill",
        "malloc",
        "calloc",
        "realloc",
        "free",
        "posix_memalign",
        "aligned_alloc",
        "memalign",
        "valloc",
        "strdup",
        "main",
        "__assert_fail",
        "__assert_fail_base",
        "libafl_main",
        "run_command_line",
    ];
    let f = frame.function.as_str();
    let name = f.split('(').next().unwrap_or(f).trim();
    NAMES.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || frame.location.contains("compiler-rt/")
        || frame.location.contains("/libc.so")
        || frame.location.contains("/libstdc++")
}

#[cfg(test)]
mod tests;
