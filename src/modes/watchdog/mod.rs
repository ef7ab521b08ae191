//! The in-process modes' executor: LibAFL's in-process crash and timeout handlers around the
//! harness, with the timeout kept by a watchdog thread, as libFuzzer keeps it, instead of
//! LibAFL's timer. LibAFL arms and disarms a POSIX timer around every input (two syscalls) or,
//! in its batch mode, reads the clock twice per input: 12% of the engine's time on an empty
//! harness. Here an input costs two stores to an atomic; the watchdog (`thread.rs`) signals the
//! fuzzing thread (LibAFL's timeout handler saves the input) when one input has run too long.

mod thread;

use std::{
    ffi::c_void,
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering::Relaxed},
    time::Duration,
};

use libafl::{
    executors::{
        hooks::{
            inprocess::{InProcessExecutorHandlerData, InProcessHooks},
            ExecutorHook,
        },
        inprocess::{inner::GenericInProcessExecutorInner, HasInProcessHooks},
        Executor, ExitKind, HasObservers, SetTimeout,
    },
    inputs::BytesInput,
    observers::ObserversTuple,
    state::HasExecutions,
    Error,
};
use libafl_bolts::{
    os::unix_signals::{ucontext_t, Signal},
    tuples::RefIndexable,
};

use crate::{
    coverage::path_frequencies,
    target::{first_report, harness, stack},
    types::{ClientFuzzer, Mgr, State},
};

/// How an in-process executor runs one input.
pub type HarnessFn = fn(&BytesInput) -> ExitKind;

/// LibAFL's handlers for the watched executor; `on_timeout` and `on_crash` call them.
static LIBAFL_TIMEOUT_HANDLER: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
static LIBAFL_CRASH_HANDLER: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
/// The watched executor's handlers are LibAFL's global handlers (see `run_target`).
static HANDLERS_IN_PLACE: AtomicBool = AtomicBool::new(false);

/// How LibAFL calls the handlers in its global state.
type SignalHandlerFn = unsafe fn(
    Signal,
    &mut libc::siginfo_t,
    Option<&mut ucontext_t>,
    *mut InProcessExecutorHandlerData,
);

/// Runs the harness in this process, watched by the watchdog. One per process: the handlers and
/// the watchdog are process-wide.
pub struct WatchedExecutor<OT> {
    inner: GenericInProcessExecutorInner<Mgr, (), BytesInput, OT, State, ClientFuzzer>,
    harness: HarnessFn,
}

impl<OT: ObserversTuple<BytesInput, State>> WatchedExecutor<OT> {
    pub fn new(
        harness: HarnessFn,
        observers: OT,
        fuzzer: &mut ClientFuzzer,
        state: &mut State,
        mgr: &mut Mgr,
        timeout: Duration,
    ) -> Result<Self, Error> {
        // LibAFL's own timer, armed with zero, stays off; so does its crash dump (registers,
        // the memory map: 40 KiB a crash), `on_crash` prints the stack instead.
        let mut inner = GenericInProcessExecutorInner::with_timeout_generic::<Self, _>(
            (),
            observers,
            fuzzer,
            state,
            mgr,
            Duration::ZERO,
            false,
        )?;
        let hooks = &mut inner.hooks_mut().0;
        LIBAFL_TIMEOUT_HANDLER.store(hooks.timeout_handler.cast_mut(), Relaxed);
        LIBAFL_CRASH_HANDLER.store(hooks.crash_handler.cast_mut(), Relaxed);
        let (timeout_handler, crash_handler): (SignalHandlerFn, SignalHandlerFn) =
            (on_timeout, on_crash);
        hooks.timeout_handler = timeout_handler as *const c_void;
        hooks.crash_handler = crash_handler as *const c_void;
        thread::set_limits(timeout, timeout);
        thread::start()?;
        harness::end_inputs_over_malloc_limit(end_input_over_malloc_limit);
        Ok(Self { inner, harness })
    }
}

impl<OT: ObserversTuple<BytesInput, State>> Executor<Mgr, BytesInput, State, ClientFuzzer>
    for WatchedExecutor<OT>
{
    fn run_target(
        &mut self,
        fuzzer: &mut ClientFuzzer,
        state: &mut State,
        mgr: &mut Mgr,
        input: &BytesInput,
    ) -> Result<ExitKind, Error> {
        *state.executions_mut() += 1;
        if !HANDLERS_IN_PLACE.swap(true, Relaxed) {
            // Puts our handlers in LibAFL's global state (and arms its timer with zero, a
            // syscall): they stay there across inputs, until another in-process executor
            // runs (`HandlersReleased`).
            self.inner.hooks_mut().0.pre_exec(state, input);
        }
        let executor: *const c_void = ptr::from_ref(self).cast();
        // SAFETY: the handlers read these pointers only while this input runs, and they
        // point at what lives until `leave_target`.
        unsafe { self.inner.enter_target(fuzzer, state, mgr, input, executor) };
        // The state's execution count, just raised, names this input (never 0).
        thread::input_started(*state.executions());
        let exit = (self.harness)(input);
        thread::input_ended();
        self.inner.leave_target(fuzzer, state, mgr, input);
        Ok(exit)
    }
}

/// The timeout chosen from the seeds' run times (see `engine/exec_timeout.rs`) counts the
/// input's CPU time; the one the executor was made with stays its limit in wall time.
impl<OT> SetTimeout for WatchedExecutor<OT> {
    fn set_timeout(&mut self, timeout: Duration) {
        thread::set_cpu_limit(timeout);
    }
}

impl<OT> HasObservers for WatchedExecutor<OT> {
    type Observers = OT;
    fn observers(&self) -> RefIndexable<&OT, OT> {
        self.inner.observers()
    }
    fn observers_mut(&mut self) -> RefIndexable<&mut OT, OT> {
        self.inner.observers_mut()
    }
}

impl<OT> HasInProcessHooks<BytesInput, State> for WatchedExecutor<OT> {
    fn inprocess_hooks(&self) -> &InProcessHooks<BytesInput, State> {
        self.inner.inprocess_hooks()
    }
    fn inprocess_hooks_mut(&mut self) -> &mut InProcessHooks<BytesInput, State> {
        self.inner.inprocess_hooks_mut()
    }
}

/// The watched executor's timeout handler: LibAFL's, if the input the watchdog timed out is
/// still running (a signal that crossed the input's end is dropped, not blamed on the next).
///
/// # Safety
/// Called by LibAFL's signal handling as it calls its own handlers: in the fuzzing thread, with
/// `data` LibAFL's global handler data.
unsafe fn on_timeout(
    signal: Signal,
    info: &mut libc::siginfo_t,
    context: Option<&mut ucontext_t>,
    data: *mut InProcessExecutorHandlerData,
) {
    if !thread::running_input_timed_out() {
        return;
    }
    // SAFETY: LibAFL's handler, called as LibAFL calls it.
    unsafe { saving_compactly(&LIBAFL_TIMEOUT_HANDLER, signal, info, context, data) }
}

/// The LibAFL handler kept in `slot`.
fn libafl(slot: &AtomicPtr<c_void>) -> SignalHandlerFn {
    // SAFETY: set in `WatchedExecutor::new`, before any input runs, from LibAFL's handler of
    // this signature.
    unsafe { std::mem::transmute::<*mut c_void, SignalHandlerFn>(slot.load(Relaxed)) }
}

/// An allocation over the malloc limit while an input runs (the sanitizer allocator's hook):
/// ends the input as a crash, which the solutions file as out-of-memory, and the client hands
/// its state on as after any crash. The hook used to end the process, and the fresh client
/// ran the whole corpus again first: on stb_image a second for each such input, two fifths of the
/// campaign's time. Returns when no input runs (the hook then ends the process).
extern "C" fn end_input_over_malloc_limit() {
    if thread::input_running() {
        harness::mark_over_malloc_limit();
        // SAFETY: raises a crash signal in this thread: `on_crash` saves the state and exits.
        unsafe { libc::raise(libc::SIGABRT) };
    }
}

/// The watched executor's crash handler: LibAFL's (save the input, exit) while an input runs.
/// Our handlers stay in place between inputs, where LibAFL's would take a fault of the fuzzer
/// itself (an allocation failure's abort) for a bug to wait on, reading "QUIT" from stdin:
/// there the signal kills the process, as it would without handlers, and the client restarts.
///
/// # Safety
/// As [`on_timeout`].
unsafe fn on_crash(
    signal: Signal,
    info: &mut libc::siginfo_t,
    context: Option<&mut ucontext_t>,
    data: *mut InProcessExecutorHandlerData,
) {
    if !thread::input_running() {
        // SAFETY: async-signal-safe calls; the signal, blocked while this handler runs, is
        // delivered with the default action when it returns (a fault, re-executed, raises
        // it again).
        unsafe {
            libc::signal(signal as libc::c_int, libc::SIG_DFL);
            libc::raise(signal as libc::c_int);
        }
        return;
    }
    // What libFuzzer prints (its first line, the stack), where LibAFL's crash dump would print
    // the handlers' frames and the memory map (`crashdump` is off). Not for an allocation over
    // the limit, whose line the hook printed: it only counts as the run's first report.
    if harness::ran_over_malloc_limit() {
        let _ = first_report::taken_before();
    } else {
        stack::report_crash(signal as libc::c_int, context.as_deref());
    }
    // SAFETY: LibAFL's handler, called as LibAFL calls it.
    unsafe { saving_compactly(&LIBAFL_CRASH_HANDLER, signal, info, context, data) }
}

/// Calls the LibAFL handler in `slot`, which saves the state and exits, with the power
/// schedule's metadata compacted for the save (see `coverage/path_frequencies.rs`); back in
/// full if the handler returns instead.
///
/// # Safety
/// As [`on_timeout`]: `data` is LibAFL's global handler data, its state pointer null or the
/// fuzzing thread's [`State`], which nothing else uses while the handler runs.
unsafe fn saving_compactly(
    slot: &AtomicPtr<c_void>,
    signal: Signal,
    info: &mut libc::siginfo_t,
    context: Option<&mut ucontext_t>,
    data: *mut InProcessExecutorHandlerData,
) {
    // SAFETY: see the function's contract; each borrow ends before the next is made.
    let state = || unsafe {
        data.as_ref()
            .and_then(|d| d.state_ptr.cast::<State>().as_mut())
    };
    if let Some(state) = state() {
        path_frequencies::compact(state);
    }
    // SAFETY: LibAFL's handler, called as LibAFL calls it.
    unsafe { libafl(slot)(signal, info, context, data) };
    if let Some(state) = state() {
        path_frequencies::expand(state);
    }
}

/// Another in-process executor (the in-process comparison tracer, with its own exact timer)
/// that may run between the watched executor's inputs: LibAFL's executors expect the global
/// handlers unset when they start, so the watched executor's are taken out first.
pub struct HandlersReleased<E> {
    inner: E,
    unset: InProcessHooks<BytesInput, State>,
}

impl<E> HandlersReleased<E> {
    pub fn new(inner: E) -> Self {
        Self {
            inner,
            unset: InProcessHooks::nop(),
        }
    }
}

impl<E: Executor<Mgr, BytesInput, State, ClientFuzzer>>
    Executor<Mgr, BytesInput, State, ClientFuzzer> for HandlersReleased<E>
{
    fn run_target(
        &mut self,
        fuzzer: &mut ClientFuzzer,
        state: &mut State,
        mgr: &mut Mgr,
        input: &BytesInput,
    ) -> Result<ExitKind, Error> {
        if HANDLERS_IN_PLACE.swap(false, Relaxed) {
            // Unsets the global handlers (and disarms the no-op hooks' own timer).
            self.unset.post_exec(state, input);
        }
        self.inner.run_target(fuzzer, state, mgr, input)
    }
}

impl<E: HasObservers> HasObservers for HandlersReleased<E> {
    type Observers = E::Observers;
    fn observers(&self) -> RefIndexable<&Self::Observers, Self::Observers> {
        self.inner.observers()
    }
    fn observers_mut(&mut self) -> RefIndexable<&mut Self::Observers, Self::Observers> {
        self.inner.observers_mut()
    }
}
