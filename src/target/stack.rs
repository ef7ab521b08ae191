//! `replay`'s children print their stack when a fatal signal ends them, as libFuzzer does
//! (`ERROR: libFuzzer: deadly signal` and the stack): a crash without a sanitizer then says
//! where it happened, a hang where it was when its time ran out, and the triage of findings
//! (`triage/`) reads the same words a user does. With a sanitizer linked, its own symbolizer
//! prints the stack; without one, the `backtrace` crate's.

use std::{
    ffi::c_void,
    io::Write as _,
    sync::atomic::{AtomicBool, Ordering},
};

extern "C" {
    fn lafuzz_print_sanitizer_stack() -> libc::c_int;
    fn lafuzz_sanitizer_reported() -> libc::c_int;
}

/// Whether a sanitizer report is being written (ASan's, which ends in an abort): its
/// symbolized stack can take longer than a short timeout, and the input is a crash, not a hang.
pub fn sanitizer_report_underway() -> bool {
    // SAFETY: a plain call into our C shim (sanitizers.c), which checks its weak symbols.
    unsafe { lafuzz_sanitizer_reported() != 0 }
}

/// Signals that end a run: crashes, and the timer of a timed-out one (`isolated.rs`).
const FATAL: [libc::c_int; 7] = [
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
    // is an `extern "C" fn(c_int)` as `sa_handler` expects, set for signals that end the run.
    unsafe {
        libc::sigaltstack(&alt, std::ptr::null_mut());
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_fatal_signal as *const () as usize;
        action.sa_flags = libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        for sig in FATAL {
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_fatal_signal(sig: libc::c_int) {
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
    let what = if sig == libc::SIGALRM {
        "timeout".to_string()
    } else {
        format!("deadly signal {}", signal_name(sig))
    };
    if !sanitizer_report_underway() {
        let header = format!("=={}== ERROR: lafuzz: {what}\n", std::process::id());
        // SAFETY: write(2) of a live buffer to stderr.
        unsafe { libc::write(2, header.as_ptr().cast(), header.len()) };
        // SAFETY: a plain call into our C shim, which checks its weak symbols.
        if unsafe { lafuzz_print_sanitizer_stack() } == 0 {
            print_stack();
        }
    }
    // SAFETY: the default action is back: the process ends by `sig`, as it would have.
    unsafe {
        libc::alarm(0);
        libc::raise(sig);
    }
}

/// The stack as sanitizers print theirs: `#N 0xADDR in FUNCTION FILE:LINE:COL`.
fn print_stack() {
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
    let mut text = String::new();
    let mut number = 0;
    for &ip in &ips[..count] {
        let mut any = false;
        // SAFETY: as above.
        unsafe {
            backtrace::resolve_unsynchronized(ip, |symbol| {
                any = true;
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
                text.push_str(&format!("    #{number} {ip:p} in {name} {location}\n"));
                number += 1;
            });
        }
        if !any {
            text.push_str(&format!("    #{number} {ip:p} (??)\n"));
            number += 1;
        }
    }
    text.push('\n');
    let _ = std::io::stderr().write_all(text.as_bytes());
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
