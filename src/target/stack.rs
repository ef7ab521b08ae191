//! `replay`'s children, and those of the libFuzzer front end's runs on files, print their
//! stack when a fatal signal ends them, as libFuzzer does (`ERROR: libFuzzer: deadly signal`
//! and the stack): a crash without a sanitizer then says where it happened, a hang where it
//! was when its time ran out, and the triage of findings (`triage/`) and ClusterFuzz's crash
//! state read the same words a user does. With a sanitizer linked, its own symbolizer prints
//! the frames; without one, the `backtrace` crate's.

use std::{
    ffi::c_void,
    io::Write as _,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
    time::Duration,
};

use super::first_report;

extern "C" {
    fn lafuzz_sanitizer_symbolize(
        pc: *mut c_void,
        out: *mut libc::c_char,
        size: usize,
    ) -> libc::c_int;
    fn lafuzz_sanitizer_reported() -> libc::c_int;
    fn lafuzz_sanitizer_symbolizer_in_step() -> libc::c_int;
}

/// This process shares the sanitizer's symbolizer its parent started (see
/// [`share_sanitizer_symbolizer`]).
static SANITIZER_SYMBOLIZER_SHARED: AtomicBool = AtomicBool::new(false);

/// In the clients' parent, before it forks them: starts the sanitizer's symbolizer, which each
/// client inherits with the debug information it loaded. A crash in `direct` mode ends its
/// client, and a client with a symbolizer of its own loaded it for each report: on an ASan build
/// of stb_image 0.15 s of each crash, a fifth of a campaign's time.
pub fn share_sanitizer_symbolizer() {
    // SAFETY: a plain call into our C shim (sanitizers.c), which checks its weak symbols.
    let answers = unsafe { lafuzz_sanitizer_symbolizer_in_step() != 0 };
    SANITIZER_SYMBOLIZER_SHARED.store(answers, Ordering::Relaxed);
}

/// After a process that shared the symbolizer was killed, perhaps while it asked (a report
/// asks frame by frame): reads the answer it left unread, so that the next report is not given
/// it for its own first frame.
pub fn resync_sanitizer_symbolizer() {
    if SANITIZER_SYMBOLIZER_SHARED.load(Ordering::Relaxed) {
        // An unread answer, whole or the rest of one, then ours.
        // SAFETY: as in `share_sanitizer_symbolizer`.
        let _ = (0..3).any(|_| unsafe { lafuzz_sanitizer_symbolizer_in_step() != 0 });
    }
}

/// Whether a sanitizer report is being written (ASan's, which ends in an abort): its
/// symbolized stack can take longer than a short timeout, and the input is a crash, not a hang.
pub fn sanitizer_report_underway() -> bool {
    // SAFETY: a plain call into our C shim (sanitizers.c), which checks its weak symbols.
    unsafe { lafuzz_sanitizer_reported() != 0 }
}

/// Signals that end a run: crashes, and the timer of a timed-out one (`isolated.rs`).
pub const FATAL: [libc::c_int; 7] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
    libc::SIGTRAP,
    libc::SIGALRM,
];
/// Frames printed at most.
const MAX_FRAMES: usize = 64;
/// Room for the printer on a stack of its own: a stack overflow leaves none on the thread's.
const ALT_STACK_SIZE: usize = 1 << 20;
/// Symbolizing allocates: should the crash have left the allocator's lock held, the timer
/// ends the wait (reported as a timeout, after the first line said which signal it was).
pub const PRINT_TIME_LIMIT_S: libc::c_uint = 5;

static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The signals the printer handles, one bit each.
static HANDLED: AtomicU64 = AtomicU64::new(0);
/// The first line in libFuzzer's words (the front end's), with this timeout in seconds; else
/// in ours, which name the signal.
static LIBFUZZER_WORDS: AtomicBool = AtomicBool::new(false);
static LIBFUZZER_TIMEOUT_S: AtomicU64 = AtomicU64::new(0);

/// Installs the printer for this process and the children it forks (which inherit it).
pub fn print_on_fatal_signals() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let stack = Box::leak(vec![0u8; ALT_STACK_SIZE].into_boxed_slice());
    let alt = libc::stack_t {
        ss_sp: stack.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: ALT_STACK_SIZE,
    };
    // SAFETY: the alternate stack is leaked, so it lives as long as the process; the handler
    // is an `extern "C" fn(c_int, *mut siginfo_t, *mut c_void)` as SA_SIGINFO expects, set
    // for signals that end the run and have no handler yet (a sanitizer's stays: its report
    // says more); `before` is live.
    unsafe {
        libc::sigaltstack(&alt, std::ptr::null_mut());
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_fatal_signal as *const () as usize;
        action.sa_flags = libc::SA_ONSTACK | libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        for sig in FATAL {
            let mut before: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut before);
            if before.sa_sigaction == libc::SIG_DFL
                && libc::sigaction(sig, &action, std::ptr::null_mut()) == 0
            {
                HANDLED.fetch_or(1 << sig, Ordering::SeqCst);
            }
        }
    }
}

/// Reports from now on (this process's and its children's) open with libFuzzer's first line
/// (`==PID== ERROR: libFuzzer: deadly signal`, or `timeout after N seconds` for inputs timed
/// out at `timeout`), which ClusterFuzz must see before the frames to take its crash state
/// from them; with `first_only`, only the first crash is reported (`first_report.rs`).
pub fn use_libfuzzer_words(timeout: Duration, first_only: bool) {
    LIBFUZZER_TIMEOUT_S.store(timeout.as_secs().max(1), Ordering::SeqCst);
    LIBFUZZER_WORDS.store(true, Ordering::SeqCst);
    if first_only {
        first_report::enable();
    }
}

/// The report of a fuzzing client's input that crashed with `sig` (its first line and stack
/// from the interrupted frame of `context`, the signal's), unless a sanitizer reported it (or
/// only the first is printed and one was).
pub fn report_crash(sig: libc::c_int, context: Option<&libc::ucontext_t>) {
    if !first_report::taken_before() && !sanitizer_report_underway() {
        report(sig, context.and_then(interrupted_pc));
    }
}

extern "C" fn on_fatal_signal(sig: libc::c_int, _: *mut libc::siginfo_t, context: *mut c_void) {
    if sig == libc::SIGALRM && sanitizer_report_underway() {
        // The input crashed and ASan is still writing (symbolizing) its report, which ends in
        // an abort: a crash, not a timeout. The report gets the printer's time limit.
        // SAFETY: alarm(2) is async-signal-safe; this handler stays in place for SIGALRM.
        unsafe { libc::alarm(PRINT_TIME_LIMIT_S) };
        return;
    }
    // SAFETY: back to the default actions first, so a fault while printing (or the time
    // limit's alarm) ends the process as the signal itself would.
    unsafe {
        for s in FATAL {
            libc::signal(s, libc::SIG_DFL);
        }
        libc::alarm(PRINT_TIME_LIMIT_S);
    }
    if !sanitizer_report_underway() {
        // SAFETY: the kernel passes a SA_SIGINFO handler the interrupted context (or null).
        let context = unsafe { context.cast::<libc::ucontext_t>().as_ref() };
        report(sig, context.and_then(interrupted_pc));
    }
    // SAFETY: the default action is back: the process ends by `sig`, as it would have.
    unsafe {
        libc::alarm(0);
        libc::raise(sig);
    }
}

/// The first line(s), then the stack from the frame at `pc` (the interrupted one).
fn report(sig: libc::c_int, pc: Option<usize>) {
    let header = header(sig);
    // SAFETY: write(2) of a live buffer to stderr.
    unsafe { libc::write(2, header.as_ptr().cast(), header.len()) };
    // A fault stops at the faulting instruction; a signal sent (an abort, the timer) arrives
    // after an instruction, as a call returns.
    let at_fault = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL].contains(&sig);
    print_stack(pc, at_fault);
}

/// The instruction a signal interrupted, from its context.
fn interrupted_pc(context: &libc::ucontext_t) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    return Some(context.uc_mcontext.gregs[libc::REG_RIP as usize] as usize);
    #[cfg(target_arch = "aarch64")]
    return Some(context.uc_mcontext.pc as usize);
    #[allow(unreachable_code)]
    None
}

/// The report's first line(s), naming the process as sanitizers do.
fn header(sig: libc::c_int) -> String {
    let pid = std::process::id();
    let timeout_s = LIBFUZZER_TIMEOUT_S.load(Ordering::SeqCst);
    match (LIBFUZZER_WORDS.load(Ordering::SeqCst), sig) {
        (true, libc::SIGALRM) => format!(
            "ALARM: working on the last Unit for {timeout_s} seconds\n\
             =={pid}== ERROR: libFuzzer: timeout after {timeout_s} seconds\n"
        ),
        (true, _) => format!("=={pid}== ERROR: libFuzzer: deadly signal\n"),
        (false, libc::SIGALRM) => format!("=={pid}== ERROR: lafuzz: timeout\n"),
        (false, _) => format!(
            "=={pid}== ERROR: lafuzz: deadly signal {}\n",
            signal_name(sig)
        ),
    }
}

/// Whether the printer reported a child that `sig` ended (its first line and stack).
pub fn handles(sig: libc::c_int) -> bool {
    (0..64).contains(&sig) && HANDLED.load(Ordering::SeqCst) & (1 << sig) != 0
}

/// The stack as sanitizers print theirs (`#N 0xADDR in FUNCTION FILE:LINE:COL`), from the frame
/// the signal interrupted, at `pc` (the handlers' frames would be taken for the crash's top
/// frames; all frames when it is not found), to the fuzz target's entry; `at_fault`: `pc` is a
/// faulting instruction's.
fn print_stack(pc: Option<usize>, at_fault: bool) {
    let mut ips = [std::ptr::null_mut::<c_void>(); MAX_FRAMES];
    let mut count = 0;
    // SAFETY: the process is about to end; nothing else runs in it meanwhile.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            ips[count] = frame.ip();
            count += 1;
            count < MAX_FRAMES
        });
    }
    let first = ips[..count]
        .iter()
        .position(|&ip| Some(ip as usize) == pc)
        .unwrap_or(0);
    let mut text = String::new();
    let mut number = 0;
    'frames: for (at, &ip) in ips[first..count].iter().enumerate() {
        if ip.is_null() {
            break;
        }
        // Symbolizers look return addresses up one byte back; a faulting instruction is found
        // at its own address.
        let lookup = if at == 0 && at_fault {
            ip.wrapping_add(1)
        } else {
            ip
        };
        for place in symbolized(lookup) {
            text.push_str(&format!("    #{number} {ip:p} in {place}\n"));
            number += 1;
            // Below the fuzz target's entry lie only our engine's frames.
            if place.starts_with("LLVMFuzzerTestOneInput ") {
                break 'frames;
            }
        }
    }
    text.push('\n');
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// `FUNCTION FILE:LINE:COL` for the return address `ip`, one per inlined frame: by the linked
/// sanitizer's symbolizer, as its own reports name frames, else by the `backtrace` crate.
fn symbolized(ip: *mut c_void) -> Vec<String> {
    let mut buffer = [0u8; 4096];
    // SAFETY: a plain call into our C shim with a live buffer and its length.
    if unsafe { lafuzz_sanitizer_symbolize(ip, buffer.as_mut_ptr().cast(), buffer.len()) } != 0 {
        // One NUL-terminated "in FUNCTION LOCATION" per frame, then an empty one.
        return buffer
            .split(|&b| b == 0)
            .take_while(|frame| !frame.is_empty())
            .map(|frame| {
                let frame = String::from_utf8_lossy(frame);
                frame.strip_prefix("in ").unwrap_or(&frame).to_string()
            })
            .collect();
    }
    let mut places = Vec::new();
    // SAFETY: as in `print_stack`.
    unsafe {
        backtrace::resolve_unsynchronized(ip, |symbol| {
            let name = symbol
                .name()
                .map_or_else(|| "??".to_string(), |n| format!("{n:#}"));
            let location = match (symbol.filename(), symbol.lineno()) {
                (Some(file), Some(line)) => match symbol.colno() {
                    Some(col) => format!("{}:{line}:{col}", file.display()),
                    None => format!("{}:{line}", file.display()),
                },
                _ => format!("({ip:p})"),
            };
            places.push(format!("{name} {location}"));
        });
    }
    if places.is_empty() {
        places.push(format!("?? ({ip:p})"));
    }
    places
}

/// A signal's name, for reports.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTRAP => "SIGTRAP",
        _ => "signal",
    }
}
