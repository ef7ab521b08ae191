//! Which bug a crash is: the sanitizer report of the judge build (a libFuzzer binary with
//! AddressSanitizer, whatever fuzzer found the input) read for its kind and its first frame in
//! the library's own code, and compared with each bug's oracle.

use std::{
    path::Path,
    process::{Command, Stdio},
};

use harness_builder::bugs::{Bug, Oracle, LEAK};

/// What a sanitizer report says: its kind and its first stack's functions, top first.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub kind: String,
    pub frames: Vec<String>,
}

/// Frames of the sanitizer's runtime, of ours's signal handler, and of the C library's
/// allocation and memory functions (the interceptors): the library's own code is below them.
fn is_runtime(function: &str) -> bool {
    const RUNTIME: &[&str] = &[
        "__asan",
        "__interceptor",
        "__sanitizer",
        "__lsan",
        "___interceptor",
        // Ours's fatal-signal handler, which prints the stack.
        "lafuzz",
    ];
    const LIBC: &[&str] = &[
        "malloc", "calloc", "realloc", "free", "memcpy", "memmove", "memset", "memcmp", "strlen",
        "strcmp", "strncmp", "strcpy",
    ];
    RUNTIME.iter().any(|p| function.starts_with(p)) || LIBC.contains(&function)
}

impl Report {
    /// Reads the first report in a sanitizer's output; None when there is none.
    pub fn parse(output: &str) -> Option<Self> {
        let mut lines = output.lines();
        let kind = lines.by_ref().find_map(|l| {
            if l.contains("ERROR: LeakSanitizer: detected memory leaks") {
                return Some(LEAK.to_string());
            }
            // Ours handles fatal signals itself, with a sanitizer's stack after this line:
            // its SIGSEGV is ASan's SEGV.
            if let Some(at) = l.find("ERROR: lafuzz: deadly signal SIG") {
                return Some(l[at + 32..].trim().to_string());
            }
            let rest = &l[l.find("ERROR: AddressSanitizer: ")? + 25..];
            Some(
                rest.split_whitespace()
                    .next()?
                    .trim_end_matches(':')
                    .to_string(),
            )
        })?;
        let frames = lines
            .skip_while(|l| !l.trim_start().starts_with("#0 "))
            .take_while(|l| l.trim_start().starts_with('#'))
            .filter_map(|l| {
                let after = &l[l.find(" in ")? + 4..];
                // A C++ function's name may hold spaces; its location follows after " /".
                let name = after.split(" /").next()?.split(" (").next()?;
                Some(name.trim().to_string())
            })
            .filter(|f| !is_runtime(f))
            .collect();
        Some(Self { kind, frames })
    }

    /// The report is of `oracle`'s bug: its kind (or, for `buffer-overflow`, any buffer's),
    /// and the oracle's frames on top of the library's own.
    pub fn is(&self, oracle: &Oracle) -> bool {
        // AFL++'s libFuzzer driver keeps inputs in one buffer whose tail it poisons: a read
        // past the input is a use-after-poison there.
        let overflow = oracle.kind == "buffer-overflow" && self.kind == "use-after-poison";
        let kind = self.kind == oracle.kind
            || self.kind.ends_with(&format!("-{}", oracle.kind))
            || overflow;
        kind && self.frames.len() >= oracle.frames.len()
            && self.frames.iter().zip(oracle.frames).all(|(f, o)| f == o)
    }
}

/// Runs `input` once through the `judge` build (killed after 20 s) and reads its report
/// (None: it did not crash, or could not run).
pub fn judge(judge: &Path, input: &Path) -> Option<Report> {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "20"])
        .arg(judge)
        .arg(input)
        .env("ASAN_OPTIONS", "detect_leaks=1:symbolize=1")
        .env(
            "ASAN_SYMBOLIZER_PATH",
            "/usr/lib/llvm-19/bin/llvm-symbolizer",
        )
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Report::parse(&String::from_utf8_lossy(&out.stderr))
}

/// The bugs among `bugs` that `report` is.
pub fn which<'a>(report: &Report, bugs: &[&'a Bug]) -> Vec<&'a Bug> {
    bugs.iter()
        .copied()
        .filter(|b| b.oracles.iter().any(|o| report.is(o)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASAN: &str = "INFO: Running with entropic power schedule (0xFF, 100).
=================================================================
==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x5020 at pc 0x55 bp 0x7f sp 0x7f
READ of size 4 at 0x502000000030 thread T0
    #0 0x55d2 in next_state_val /src/regparse.c:4021:13
    #1 0x55d3 in parse_char_class /src/regparse.c:4300:9
    #2 0x55d4 in parse_exp /src/regparse.c:5000:1

0x502000000030 is located 0 bytes after 16-byte region
allocated by thread T0 here:
    #0 0x55d9 in malloc (/b+0x1234)
    #1 0x55da in onig_new /src/regcomp.c:1:1
";

    const LEAK: &str = "==9==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 24 byte(s) in 1 object(s) allocated from:
    #0 0x55 in malloc (/b+0x1)
    #1 0x56 in addBinding /src/xmlparse.c:3132:20
    #2 0x57 in storeAtts /src/xmlparse.c:2900:5
";

    #[test]
    fn reads_kind_and_the_first_stack_below_the_runtime() {
        let r = Report::parse(ASAN).unwrap();
        assert_eq!(r.kind, "heap-buffer-overflow");
        assert_eq!(
            r.frames,
            ["next_state_val", "parse_char_class", "parse_exp"]
        );
        let leak = Report::parse(LEAK).unwrap();
        assert_eq!(leak.kind, "memory leak");
        assert_eq!(leak.frames[0], "addBinding");
        assert_eq!(Report::parse("INFO: Done 100 runs in 0 second(s)"), None);
        let ours = "==1== ERROR: lafuzz: deadly signal SIGSEGV
    #0 0x1 in __sanitizer_print_stack_trace (/b+0x1)
    #1 0x2 in lafuzz_print_sanitizer_stack (/b+0x2)
    #2 0x3 in lafuzz::target::stack::on_fatal_signal::h5 (.llvm.39) (/b+0x3)
    #3 0x7f  (/lib/x86_64-linux-gnu/libc.so.6+0x3c04f)
    #4 0x5 in stbi__hdr_to_ldr /src/stb_image.c:1395:32
";
        let r = Report::parse(ours).unwrap();
        assert_eq!(
            (r.kind.as_str(), r.frames[0].as_str()),
            ("SEGV", "stbi__hdr_to_ldr")
        );
    }

    #[test]
    fn a_report_is_the_bug_of_its_kind_and_top_function_only() {
        let r = Report::parse(ASAN).unwrap();
        let oracle = |kind, frames| Oracle { kind, frames };
        assert!(r.is(&oracle("heap-buffer-overflow", &["next_state_val"])));
        assert!(r.is(&oracle(
            "buffer-overflow",
            &["next_state_val", "parse_char_class"]
        )));
        assert!(!r.is(&oracle("flow", &["next_state_val"])));
        assert!(!r.is(&oracle("heap-buffer-overflow", &["parse_char_class"])));
        assert!(!r.is(&oracle(
            "heap-buffer-overflow",
            &["next_state_val", "parse_exp"]
        )));
        assert!(!r.is(&oracle("SEGV", &["next_state_val"])));
    }
}
