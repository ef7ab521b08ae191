//! `fork`: every input runs in a fresh child, so a crash, hang or leaked state never reaches
//! the next input. Setup (`LLVMFuzzerInitialize`) runs once in the client; the children are
//! forked from a small template process the client forks once after it (`template.rs`).
//!
//! The 8-bit counters live in the target's memory, which a child does not share with its
//! parent. `libafl_cc` links the counters into whole pages of their own; here those pages are
//! remapped as shared memory before forking, so the parent sees every counter a child hits,
//! crashing and hanging children included, and no other global is shared.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

use libafl::Error;

use super::{
    in_process::{counters_observer, linked_harness_map_size},
    oom::OomAware,
    template::{FromTemplate, Template},
    tracer::Tracer,
    Coverage, ExecutionMode,
};
use crate::{
    cmplog,
    config::FuzzConfig,
    engine::{self, Client},
    options::FuzzOptions,
    platform::shmem::SharedPages,
    target::{
        harness::{self, CounterRegion},
        leaks, memory, runtime_abi,
    },
    types::Observers,
};

pub struct Fork;

impl ExecutionMode for Fork {
    fn check(&self, opts: &FuzzOptions) -> Result<usize, String> {
        linked_harness_map_size(opts)
    }
    fn binds_symbols_at_load(&self) -> bool {
        true
    }
    fn coverage(&self, _config: &FuzzConfig) -> Result<Coverage, Error> {
        let counters = harness::take_coverage_counters()?;
        share_with_children(counters)?;
        Ok((counters_observer(counters), None))
    }
    fn fuzz(&self, client: Client<'_>, observers: Observers) -> Result<(), Error> {
        harness::initialize();
        let config = client.config;
        // Each child checks its own input (see `template.rs`); the hooks are installed here,
        // before the template is forked.
        leaks::enable(!config.opts.no_detect_leaks);
        let oom = OomFlag::new(config.opts.rss_limit_mb)?;
        // The children's comparison log, mapped before the template is forked for them to
        // write into (32 MiB, left unmapped when a `--cmplog` build traces).
        let children_log = Tracer::target_traces_itself(config)
            .then(cmplog::shared_observer)
            .transpose()?;
        let template = Template::start(
            config.opts.hang_timeout(),
            config.opts.max_len,
            OomFlag::watch_this_child,
        )?;
        let mut executor =
            OomAware::new(FromTemplate::new(template.clone(), observers), oom.raised());
        let tracer = Tracer::choose(config, Some(oom.raised()), || {
            Ok(children_log.map(|log| Tracer::template(template, log, oom.raised())))
        })?;
        engine::fuzz(client, &mut executor, tracer, None)
    }
}

/// The memory limit of fork mode's children: each child arms a CPU-time timer (one syscall;
/// a watchdog thread per child cost a quarter of fork mode's speed); its signal handler looks
/// at the child's resident memory every 10 ms of CPU and, over `--rss-limit-mb`, raises a flag
/// in memory shared with the client and kills the child, which the client then reports as
/// out-of-memory. An input that does not run does not grow.
struct OomFlag {
    pages: SharedPages,
}

/// The flag and the limit in pages, for the children (set once, before the first fork).
static FLAG: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());
static LIMIT_PAGES: AtomicU64 = AtomicU64::new(0);
const WATCH_EVERY_US: libc::suseconds_t = 10_000;

impl OomFlag {
    fn new(rss_limit_mb: u64) -> Result<Self, Error> {
        let flag = Self {
            pages: SharedPages::new(size_of::<AtomicBool>())
                .map_err(|e| Error::os_error(e, "cannot share the out-of-memory flag"))?,
        };
        FLAG.store(flag.pages.as_ptr().cast(), Ordering::SeqCst);
        let page = runtime_abi::page_size() as u64;
        LIMIT_PAGES.store((rss_limit_mb << 20) / page, Ordering::SeqCst);
        if rss_limit_mb > 0 {
            // SAFETY: installs an async-signal-safe handler (open/read/close/kill and atomics)
            // for SIGPROF, which only the children's timers raise; `action` outlives the call.
            let failed = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_cpu_tick as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(libc::SIGPROF, &action, std::ptr::null_mut()) != 0
            };
            if failed {
                return Err(Error::os_error(
                    std::io::Error::last_os_error(),
                    "cannot watch the children's memory",
                ));
            }
        }
        Ok(flag)
    }

    fn raised(&self) -> &AtomicBool {
        // SAFETY: zero-initialized shared pages, as long as `self`, hold the flag; an
        // AtomicBool is valid for a zero byte and only ever set to 0 or 1.
        unsafe { &*self.pages.as_ptr().cast::<AtomicBool>() }
    }

    /// In a child: arms its memory watch (when there is a limit). Timers are not inherited
    /// across fork, so each child arms its own.
    fn watch_this_child() {
        if LIMIT_PAGES.load(Ordering::Relaxed) == 0 {
            return;
        }
        let tick = libc::timeval {
            tv_sec: 0,
            tv_usec: WATCH_EVERY_US,
        };
        let timer = libc::itimerval {
            it_interval: tick,
            it_value: tick,
        };
        // SAFETY: setitimer(2) with a valid value; the old value is not wanted.
        unsafe { libc::setitimer(libc::ITIMER_PROF, &timer, std::ptr::null_mut()) };
    }
}

/// SIGPROF in a child: over the limit, raise the flag and die.
extern "C" fn on_cpu_tick(_signal: libc::c_int) {
    let limit = LIMIT_PAGES.load(Ordering::Relaxed);
    if memory::own_resident_pages().is_some_and(|pages| pages > limit) {
        let flag = FLAG.load(Ordering::Relaxed);
        if !flag.is_null() {
            // SAFETY: the flag lives in the client's shared pages, mapped in this child too
            // for as long as it runs.
            unsafe { &*flag }.store(true, Ordering::SeqCst);
        }
        // SAFETY: kill(2) and getpid(2) on this very process; both async-signal-safe.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// Remaps the pages holding the target's counters as shared anonymous memory, keeping their
/// contents. Once per client process, before the first fork.
fn share_with_children(counters: CounterRegion) -> Result<(), Error> {
    let page = runtime_abi::page_size();
    let start = counters.as_mut_ptr();
    if !(start as usize).is_multiple_of(page) {
        return Err(Error::illegal_state(
            "fork mode needs the coverage counters on pages of their own: \
             rebuild the target with this version of libafl_cc/libafl_cxx",
        ));
    }
    let len = counters.len().next_multiple_of(page);
    let saved = counters.to_vec();
    // SAFETY: the range is the counters' own pages (page-aligned start, padded end, see the
    // wrapper's linker script), so no other data is replaced; MAP_FIXED maps over them in
    // place, so the counters keep their addresses (now shared).
    let mapped = unsafe {
        libc::mmap(
            start.cast(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if mapped == libc::MAP_FAILED {
        return Err(Error::illegal_state(format!(
            "cannot share the coverage counters: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: the new mapping is writable and covers the counters' bytes, which `saved` does
    // not overlap.
    unsafe { std::ptr::copy_nonoverlapping(saved.as_ptr(), start, saved.len()) };
    Ok(())
}
