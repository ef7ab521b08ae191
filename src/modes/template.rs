//! `fork` mode's executor: a fork server inside the client. Once, after the harness is set up
//! and before the fuzzer's own state grows, the client forks a small template process; for
//! every input the template forks a child that runs it and reports how it ended. Forking the
//! client itself per input cost its whole page tables each time (and copy-on-write faults in
//! the client after each fork): most of fork mode's time.
//!
//! Protocol, on two pipes: the client writes the timeout and the input into shared memory and
//! one request byte (whether comparison logging is on); the template answers the child's pid,
//! then its wait status. Each child arms its own timer (its SIGALRM ends it: a timeout).
//! Coverage reaches the client through the shared counter pages (see `fork.rs`).

use std::{
    cell::Cell,
    io::{Error as IoError, Read, Write},
    os::fd::{FromRawFd, OwnedFd},
    rc::Rc,
    time::Duration,
};

use libafl::{
    executors::{Executor, ExitKind, HasObservers, SetTimeout},
    inputs::{BytesInput, HasTargetBytes},
    state::HasExecutions,
    Error,
};
use libafl_bolts::tuples::RefIndexable;

use crate::{
    platform::shmem::SharedPages,
    target::{
        comparison_hooks, harness,
        isolated::arm_timeout,
        leaks,
        stack::{self, sanitizer_report_underway, PRINT_TIME_LIMIT_S},
    },
};

/// The client's end of the template.
pub struct Template {
    requests: std::fs::File,
    answers: std::fs::File,
    /// The timeout in microseconds and the input's length, 8 bytes each, then the input.
    input: SharedPages,
    /// The longest input (`--max-len`).
    room: usize,
    /// The children's timeout (the tracer's and the fuzzing executor's: they share the
    /// template).
    timeout: Cell<Duration>,
}

/// Where the input starts in the shared pages.
const INPUT_AT: usize = 16;

fn pipe() -> Result<(std::fs::File, std::fs::File), Error> {
    let mut fds = [-1; 2];
    // SAFETY: pipe2(2) fills the two descriptors, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::os_error(
            IoError::last_os_error(),
            "cannot make a pipe",
        ));
    }
    // SAFETY: fresh descriptors owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((read.into(), write.into()))
}

impl Template {
    /// Forks the template. `before_each_child` runs in each child before its input (the
    /// memory watch).
    pub fn start(
        timeout: Duration,
        max_len: usize,
        before_each_child: fn(),
    ) -> Result<Rc<Self>, Error> {
        let input = SharedPages::new(INPUT_AT + max_len)
            .map_err(|e| Error::os_error(e, "cannot share the input with fork mode's children"))?;
        let (request_read, request_write) = pipe()?;
        let (answer_read, answer_write) = pipe()?;
        // SAFETY: fork(2) in the single-threaded client; the template only serves requests.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(Error::os_error(
                IoError::last_os_error(),
                "cannot fork the template",
            ));
        }
        if pid == 0 {
            drop((request_write, answer_read));
            serve(request_read, answer_write, &input, before_each_child);
        }
        Ok(Rc::new(Self {
            requests: request_write,
            answers: answer_read,
            input,
            room: max_len,
            timeout: Cell::new(timeout),
        }))
    }

    /// Runs `input` in a fresh child; its wait status.
    fn run(&self, input: &[u8]) -> Result<i32, Error> {
        let len = input.len().min(self.room);
        let base = self.input.as_ptr();
        let timeout = self.timeout.get();
        // SAFETY: the shared pages hold INPUT_AT + room bytes, page-aligned; no child runs
        // while we write.
        unsafe {
            base.cast::<u64>().write(timeout.as_micros() as u64);
            base.cast::<u64>().add(1).write(len as u64);
            std::ptr::copy_nonoverlapping(input.as_ptr(), base.add(INPUT_AT), len);
        }
        let tracing = u8::from(comparison_hooks::tracing());
        let lost = |e: IoError| Error::os_error(e, "fork mode's template process is gone");
        (&self.requests).write_all(&[tracing]).map_err(lost)?;
        let mut pid = [0u8; 4];
        (&self.answers).read_exact(&mut pid).map_err(lost)?;
        // The child times itself; this is the backstop should its timer not end it.
        let hung = !readable_within(&self.answers, timeout * 2 + Duration::from_secs(1));
        if hung {
            // SAFETY: the template's child, which it reaps and reports.
            unsafe { libc::kill(i32::from_le_bytes(pid), libc::SIGKILL) };
        }
        let mut status = [0u8; 4];
        (&self.answers).read_exact(&mut status).map_err(lost)?;
        // Killed for hanging: reported as its own timer would have ended it.
        Ok(if hung {
            libc::SIGALRM
        } else {
            i32::from_le_bytes(status)
        })
    }
}

fn readable_within(file: &std::fs::File, limit: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut poll = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: poll(2) on one live descriptor.
    unsafe { libc::poll(&mut poll, 1, ms) > 0 }
}

/// The template's loop: a child per request, until the client is gone.
fn serve(
    mut requests: std::fs::File,
    mut answers: std::fs::File,
    input: &SharedPages,
    before_each_child: fn(),
) -> ! {
    // SAFETY: process-control calls on ourselves: die with the client, and let children's
    // SIGALRM end them (the client may have had a handler for it) unless a sanitizer is
    // writing its report; the handler is async-signal-safe.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::signal(
            libc::SIGALRM,
            on_child_alarm as *const () as libc::sighandler_t,
        );
    }
    leave_the_fuzzers_heap_to_the_template();
    let mut request = [0u8; 1];
    while requests.read_exact(&mut request).is_ok() {
        // SAFETY: fork(2) in the single-threaded template.
        let child = unsafe { libc::fork() };
        if child == 0 {
            run_child(input, request[0], before_each_child);
        }
        let mut status = 0;
        // SAFETY: waits for our own child (a failed fork reports as a failed wait).
        if child < 0 || unsafe { libc::waitpid(child, &mut status, 0) } != child {
            break;
        }
        if answers.write_all(&child.to_le_bytes()).is_err()
            || answers.write_all(&status.to_le_bytes()).is_err()
        {
            break;
        }
        if libc::WIFSIGNALED(status) {
            // A child killed while its shared symbolizer answered leaves it out of step (after
            // the answer: the client goes on meanwhile).
            stack::resync_sanitizer_symbolizer();
        }
    }
    // SAFETY: leave without running the client's exit handlers.
    unsafe { libc::_exit(0) }
}

/// The fuzzer's own heap (the Rust allocator's arena: the client's corpus, state and maps,
/// megabytes) is of no use to a child, which runs only the harness (whose allocations go to
/// the C library's malloc) and code that allocates nothing; yet each fork copied its page
/// tables and each exit tore them down: most of fork mode's time on libpng. Marked
/// wipe-on-fork, children get it empty instead. The template keeps it, and everything a
/// child reads is on the stack, in statics or in shared memory.
fn leave_the_fuzzers_heap_to_the_template() {
    let probe = Box::new(0u64);
    let at = std::ptr::from_ref(&*probe) as usize;
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    // "start-end perms offset dev inode [path]": the anonymous private mapping holding `at`.
    let arena = maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (range, perms) = (fields.next()?, fields.next()?);
        let (start, end) = range.split_once('-')?;
        let (start, end) = (
            usize::from_str_radix(start, 16).ok()?,
            usize::from_str_radix(end, 16).ok()?,
        );
        let anonymous = fields.nth(3).is_none();
        (start <= at && at < end && perms == "rw-p" && anonymous).then_some((start, end))
    });
    if let Some((start, end)) = arena {
        // SAFETY: advice on a whole mapping of this process; it changes only what children
        // forked from now on see there (zeroes), and no child reads it (see above).
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                libc::MADV_WIPEONFORK,
            )
        };
    }
}

/// A child's timer: the end of the child, as SIGALRM's default action, unless a sanitizer is
/// writing its report (its symbolized stack can take longer than a short timeout: the input
/// is a crash on its way to abort) or LeakSanitizer is scanning: the time the stack printer
/// gives a report.
extern "C" fn on_child_alarm(_: libc::c_int) {
    // SAFETY: async-signal-safe calls: alarm(2), signal(2), raise(3).
    unsafe {
        if sanitizer_report_underway() || leaks::scan_underway() {
            libc::alarm(PRINT_TIME_LIMIT_S);
            return;
        }
        libc::signal(libc::SIGALRM, libc::SIG_DFL);
        libc::raise(libc::SIGALRM);
    }
}

fn run_child(input: &SharedPages, tracing: u8, before: fn()) -> ! {
    // SAFETY: the timeout, the input and its length (at most the room the client made) were
    // written before the request.
    let (timeout, bytes) = unsafe {
        let base = input.as_ptr();
        let timeout = Duration::from_micros(base.cast::<u64>().read());
        let len = base.cast::<u64>().add(1).read() as usize;
        (timeout, std::slice::from_raw_parts(base.add(INPUT_AT), len))
    };
    arm_timeout(timeout);
    comparison_hooks::set_tracing(tracing != 0);
    before();
    leaks::run_in_child(|| harness::run(bytes));
    // SAFETY: leave without running the client's exit handlers.
    unsafe { libc::_exit(0) }
}

/// An executor running each input in a child of the template, with its own `observers` (whose
/// maps must be shared memory).
pub struct FromTemplate<OT> {
    template: Rc<Template>,
    observers: OT,
}

impl<OT> FromTemplate<OT> {
    pub fn new(template: Rc<Template>, observers: OT) -> Self {
        Self {
            template,
            observers,
        }
    }
}

impl<EM, S, Z, OT> Executor<EM, BytesInput, S, Z> for FromTemplate<OT>
where
    S: HasExecutions,
{
    fn run_target(
        &mut self,
        _fuzzer: &mut Z,
        state: &mut S,
        _mgr: &mut EM,
        input: &BytesInput,
    ) -> Result<ExitKind, Error> {
        *state.executions_mut() += 1;
        let status = self.template.run(&input.target_bytes())?;
        Ok(if leaks::child_leaked(status) {
            // Filed as a leak (see `solutions::SolutionKind`).
            ExitKind::Crash
        } else if libc::WIFSIGNALED(status) {
            if libc::WTERMSIG(status) == libc::SIGALRM {
                ExitKind::Timeout
            } else {
                ExitKind::Crash
            }
        } else {
            ExitKind::Ok
        })
    }
}

impl<OT> SetTimeout for FromTemplate<OT> {
    fn set_timeout(&mut self, timeout: Duration) {
        self.template.timeout.set(timeout);
    }
}

impl<OT> HasObservers for FromTemplate<OT> {
    type Observers = OT;
    fn observers(&self) -> RefIndexable<&Self::Observers, Self::Observers> {
        RefIndexable::from(&self.observers)
    }
    fn observers_mut(&mut self) -> RefIndexable<&mut Self::Observers, Self::Observers> {
        RefIndexable::from(&mut self.observers)
    }
}
