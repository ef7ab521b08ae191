//! Unsymbolized frames, `(MODULE+0xOFFSET)` (a standalone target's stack printer has only the
//! exported names, `compiler-wrapper/runtime/stack.c`; `replay` under a sanitizer is asked not to
//! symbolize, see `describer.rs`), get their functions and `file:line:col` from the
//! llvm-symbolizer the fuzzer was built with, inlined calls as frames of their own (as a
//! sanitizer prints them).
//!
//! The symbolizer is kept running: loading a binary's debug information is most of a
//! description's time (an ASan build of stb_image: 0.15 s of a 0.16 s `replay`, 0.01 s without
//! symbolizing), and a crash in `direct` mode ends its client, so one kept by the client would
//! load it again for each crash. The client's parent starts it ([`start_shared`]) before it
//! forks the clients, which inherit its pipes and so the debug information it loaded.

use std::{
    collections::BTreeMap,
    ffi::CStr,
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
};

use super::description::Frame;

extern "C" {
    fn lafuzz_symbolizer_path() -> *const libc::c_char;
}

fn symbolizer() -> Option<String> {
    // SAFETY: our C shim returns NULL or a pointer to a string literal.
    let path = unsafe { lafuzz_symbolizer_path() };
    // SAFETY: non-null: a NUL-terminated literal that lives as long as the program.
    (!path.is_null()).then(|| {
        unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned()
    })
}

/// Each answer starts with the address asked, then a function and its `file:line:col` per
/// inlined call, innermost first, then an empty line.
const ARGS: [&str; 3] = ["--inlines", "--relative-address", "--print-address"];

/// The running symbolizer's pipes, shared by this process and the clients it forks.
struct Pipes {
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

static SHARED: Mutex<Option<Pipes>> = Mutex::new(None);

/// Starts the symbolizer this process and its future children ask (nothing without one), and
/// the sanitizer's own for their reports (see `target/stack.rs`). They end when the last of
/// them has ended.
pub fn start_shared() {
    crate::target::stack::share_sanitizer_symbolizer();
    // Not waited for: it ends after this process, which its pipes outlive in the clients.
    if let Some((_child, pipes)) = Pipes::spawn() {
        *SHARED.lock().unwrap_or_else(|e| e.into_inner()) = Some(pipes);
    }
}

/// Whether a running symbolizer can symbolize what a sanitizer would (see [`start_shared`]).
pub fn shared_running() -> bool {
    SHARED.lock().map(|s| s.is_some()).unwrap_or(false)
}

/// `(MODULE+0xOFFSET)` as (module, offset).
fn module_offset(location: &str) -> Option<(&str, &str)> {
    let inner = location.strip_prefix('(')?.strip_suffix(')')?;
    let (module, offset) = inner.rsplit_once('+')?;
    offset.starts_with("0x").then_some((module, offset))
}

/// One answer: (function, location) per inlined call, innermost first.
type Answer = Vec<(String, String)>;

/// Replaces each frame given by module and offset with what the symbolizer knows of it (a frame
/// per inlined call); the others, and all of them without a symbolizer, stay as they are.
pub fn symbolize(frames: &mut Vec<Frame>) {
    let queries: Vec<(usize, &str, &str)> = frames
        .iter()
        .enumerate()
        .filter_map(|(i, f)| module_offset(&f.location).map(|(m, o)| (i, m, o)))
        .collect();
    if queries.is_empty() {
        return;
    }
    let asked: Vec<(&str, &str)> = queries.iter().map(|&(_, m, o)| (m, o)).collect();
    let answers = ask_shared(&asked).or_else(|| ask_once(&asked));
    let Some(answers) = answers else {
        return;
    };
    let mut answered: BTreeMap<usize, Answer> = queries.iter().map(|q| q.0).zip(answers).collect();
    let symbolized = std::mem::take(frames)
        .into_iter()
        .enumerate()
        .flat_map(|(i, frame)| {
            let calls = answered.remove(&i).unwrap_or_default();
            let known = calls.iter().any(|(function, _)| function != "??");
            let inlined = calls.into_iter().map(|(function, location)| Frame {
                function,
                location: match location.starts_with("??") {
                    true => frame.location.clone(),
                    false => location,
                },
            });
            match known {
                true => inlined.collect::<Vec<_>>(),
                false => vec![frame],
            }
        });
    *frames = symbolized.collect();
}

/// Asks the running symbolizer, if there is one; `None` when it cannot answer (it is then
/// forgotten).
fn ask_shared(asked: &[(&str, &str)]) -> Option<Vec<Answer>> {
    let mut shared = SHARED.lock().ok()?;
    let answers = shared.as_mut().and_then(|pipes| pipes.ask(asked));
    if answers.is_none() {
        *shared = None;
    }
    answers
}

/// Starts a symbolizer for these frames alone.
fn ask_once(asked: &[(&str, &str)]) -> Option<Vec<Answer>> {
    let (mut child, mut pipes) = Pipes::spawn()?;
    let answers = pipes.ask(asked);
    drop(pipes);
    let _ = child.wait();
    answers
}

/// Distinguishes each question's marker from those of questions asked before it.
static ASKED: AtomicU64 = AtomicU64::new(0);

impl Pipes {
    /// Starts a symbolizer (none without one), and its pipes.
    fn spawn() -> Option<(Child, Self)> {
        let mut child = Command::new(symbolizer()?)
            .args(ARGS)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let pipes = Pipes {
            input: child.stdin.take()?,
            output: BufReader::new(child.stdout.take()?),
        };
        Some((child, pipes))
    }

    /// Asks `asked`, after a marker (an address in no module) whose answer says where this
    /// question's answers start: a client that died while asking left its answers unread.
    fn ask(&mut self, asked: &[(&str, &str)]) -> Option<Vec<Answer>> {
        let marker = format!(
            "0x{:x}",
            (u64::from(std::process::id()) << 32) | ASKED.fetch_add(1, Ordering::Relaxed)
        );
        let mut question = format!("\"/nonexistent/lafuzz-marker\" {marker}\n");
        for (module, offset) in asked {
            question.push_str(&format!("\"{module}\" {offset}\n"));
        }
        self.input.write_all(question.as_bytes()).ok()?;
        self.input.flush().ok()?;
        while self.read_answer()?.0 != marker {}
        asked.iter().map(|_| Some(self.read_answer()?.1)).collect()
    }

    /// One answer: the address it is for, and what is known of it.
    fn read_answer(&mut self) -> Option<(String, Answer)> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            lines.push(line.to_string());
        }
        let mut lines = lines.into_iter();
        let address = lines.next()?;
        let mut calls = Vec::new();
        while let (Some(function), Some(location)) = (lines.next(), lines.next()) {
            calls.push((function, location));
        }
        Some((address, calls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_and_offset_are_read_from_the_location() {
        assert_eq!(module_offset("(/a/b.so+0x1f)"), Some(("/a/b.so", "0x1f")));
        assert_eq!(module_offset("/src/x.c:3:4"), None);
        assert_eq!(module_offset("(??)"), None);
    }

    #[inline(never)]
    fn lafuzz_symbolize_test_function() -> u64 {
        std::hint::black_box(7)
    }

    /// This test binary's frame of the function above, as an unsymbolized stack gives it.
    fn unsymbolized_frame() -> Frame {
        let function = lafuzz_symbolize_test_function as fn() -> u64 as *const libc::c_void;
        // SAFETY: dladdr(3) on an address in this binary; `info` is written before it is read.
        let base = unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            assert_ne!(libc::dladdr(function, &mut info), 0);
            info.dli_fbase as usize
        };
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        Frame {
            function: "??".into(),
            location: format!("({}+0x{:x})", exe.display(), function as usize - base),
        }
    }

    #[test]
    fn the_running_symbolizer_names_frames_after_a_client_left_its_answers_unread() {
        if symbolizer().is_none() {
            return;
        }
        start_shared();
        assert!(shared_running());
        let frame = unsymbolized_frame();
        let (module, offset) = module_offset(&frame.location).unwrap();
        // A client that died after asking: its answers wait in the pipe.
        let unread = format!("\"{module}\" {offset}\n\"{module}\" 0x1\n");
        let mut shared = SHARED.lock().unwrap();
        shared
            .as_mut()
            .unwrap()
            .input
            .write_all(unread.as_bytes())
            .unwrap();
        drop(shared);
        let untouched = Frame {
            function: "main".into(),
            location: "/src/main.c:3:1".into(),
        };
        let mut frames = vec![frame.clone(), untouched.clone(), frame];
        symbolize(&mut frames);
        assert_eq!(frames.len(), 3, "{frames:?}");
        let named = |f: &Frame| f.function.contains("lafuzz_symbolize_test_function");
        assert!(named(&frames[0]) && named(&frames[2]), "{frames:?}");
        assert_eq!(frames[1], untouched);
        assert!(shared_running());
    }
}
