//! The parent of a client process (LibAFL's restarting manager, made our own): it forks the
//! client and, whenever it dies, forks the next.
//!
//! A client that saved its state before dying (an in-process crash or hang, `reset` mode's
//! planned restarts) resumes from it. One killed from outside (`kill -9`, the kernel's OOM
//! killer, our `--rss-limit-mb`) saved nothing: LibAFL's own restarter gives up on it, leaving
//! the campaign silently idle. Here the input it was running is saved (`ooms/` when it died for
//! memory, else `crashes/`), and the next client starts afresh from the seeds and this client's
//! queue. A client that keeps dying right after it starts stops the campaign with an error.

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use libafl::{
    events::{
        ClientDescription, HasEventManagerId, LlmpEventManagerBuilder, RestartingEventManager,
        ShouldSaveState, EVENTMGR_SIGHANDLER_STATE,
    },
    Error,
};
use libafl_bolts::{
    llmp::LlmpClientDescription,
    os::{unix_signals::setup_signal_handler, CTRL_C_EXIT, SIGNAL_RECURSION_EXIT},
    shmem::ShMemProvider,
    staterestore::StateRestorer,
    ClientId,
};

use crate::{
    campaign::broker,
    platform::{affinity::CpuSet, output, shmem::SelfCleaningShMemProvider},
    solutions,
    target::{first_report, harness, inflight::InFlight, memory},
    triage,
    types::{Mgr, SharedMemory, State},
};

/// Room for a client's serialized state (as LibAFL's restarter).
const STATE_SIZE: usize = 256 << 20;
/// A client that dies this soon after it started did not get to fuzz.
const STARTUP: Duration = Duration::from_secs(5);
/// This many such deaths in a row stop the campaign.
const MAX_STARTUP_DEATHS: u32 = 3;
const RSS_CHECK_EVERY: Duration = Duration::from_millis(100);

/// What a client's parent needs to know.
#[derive(Debug, Clone)]
pub struct ClientLimits {
    pub output: PathBuf,
    /// Kill and restart a client whose resident memory exceeds this many MiB.
    pub rss_limit_mb: Option<u64>,
    /// The CPUs the client may run on when the user named no core; else it stays on its core.
    pub unpinned: Option<CpuSet>,
}

/// Becomes the parent of client `desc`; returns, in each client process, its saved state and
/// its event manager. The parent returns only to stop the campaign: `ShuttingDown` when its
/// clients are done, another error when they cannot run.
pub fn client_manager(
    mut shmem: SelfCleaningShMemProvider,
    port: u16,
    desc: &ClientDescription,
    limits: &ClientLimits,
) -> Result<(Option<State>, Mgr), Error> {
    // This process is the launcher's child: it and so its clients end with the launcher,
    // which ends with the fuzzer's own process, even one killed with SIGKILL (else the
    // restarter starts clients forever). In an orderly stop the launcher waits for it.
    die_with_parent()?;
    // Pinned here (or let go, see platform/affinity.rs), so every client started below runs
    // where this process does.
    match &limits.unpinned {
        Some(allowed) => allowed.apply()?,
        None => {
            let _ = desc.core_id().set_affinity();
        }
    }
    // Its clients describe their findings with it: it outlives each of them.
    triage::symbolize::start_shared();
    let staterestorer = StateRestorer::new(shmem.new_shmem(STATE_SIZE)?);
    let in_flight = InFlight::new()?;
    block_sigchld(true)?;
    let mut startup_deaths = 0;
    loop {
        let started = Instant::now();
        let oom_kills_before = memory::kernel_oom_kills();
        shmem.pre_fork()?;
        // SAFETY: fork(2) from the single-threaded restarter; the child continues below.
        match unsafe { libafl_bolts::os::fork() }? {
            libafl_bolts::os::ForkResult::Child => {
                shmem.post_fork(true)?;
                die_with_parent()?;
                block_sigchld(false)?;
                break;
            }
            libafl_bolts::os::ForkResult::Parent(child) => {
                shmem.post_fork(false)?;
                let end = watch(child.pid, limits.rss_limit_mb);
                if end.status == CTRL_C_EXIT || staterestorer.wants_to_exit() {
                    return Err(Error::shutting_down());
                }
                if end.status == SIGNAL_RECURSION_EXIT {
                    return Err(Error::illegal_state(
                        "a client crashed inside its crash handler",
                    ));
                }
                if staterestorer.has_content() {
                    // It saved its state (and its crash, if any): the next one resumes, unless
                    // that crash ends the run.
                    in_flight.take();
                    first_report::hold_client();
                    continue;
                }
                let (at_startup, how) =
                    after_death(desc, limits, &in_flight, &end, started, oom_kills_before);
                // Dying right away again and again, with nothing new to show for it, is a
                // client that cannot run: stop rather than restart forever.
                startup_deaths = if at_startup { startup_deaths + 1 } else { 0 };
                if startup_deaths >= MAX_STARTUP_DEATHS {
                    return Err(Error::illegal_state(format!(
                        "client {} died {startup_deaths} times in a row right after starting \
                         (last: {how})",
                        desc.id(),
                    )));
                }
            }
        }
    }
    become_client(shmem, port, staterestorer, in_flight)
}

/// After client `desc` died without saving its state: saves the input it was running (as
/// out-of-memory when it died for memory) and logs the restart. Returns whether it died right
/// after starting with nothing new saved, and how it ended.
fn after_death(
    desc: &ClientDescription,
    limits: &ClientLimits,
    in_flight: &InFlight,
    end: &ClientEnd,
    started: Instant,
    oom_kills_before: u64,
) -> (bool, String) {
    let oom = end.rss_mb.is_some()
        || end.status == harness::malloc_limit_exit()
        || memory::kernel_oom_kills() > oom_kills_before;
    let saved = in_flight
        .take()
        .map(|input| solutions::save_killed_clients_input(&limits.output, oom, &input));
    let line = format!(
        "client {} {}{}; restarting it",
        desc.id(),
        end.describe(limits.rss_limit_mb, oom),
        match &saved {
            Some(Ok((path, _))) => format!(", running {}", path.display()),
            Some(Err(e)) => format!(" (its input could not be saved: {e})"),
            None => String::new(),
        },
    );
    if let Err(e) = output::log_client_restart(&limits.output, &line) {
        log::error!("cannot log a client restart: {e}");
    }
    let progress = matches!(saved, Some(Ok((_, true))));
    (
        started.elapsed() < STARTUP && !progress,
        end.describe(limits.rss_limit_mb, oom),
    )
}

/// The client process: records its inputs in flight, handles stop signals, and joins the
/// broker, resuming the state its predecessor saved, if any.
fn become_client(
    shmem: SelfCleaningShMemProvider,
    port: u16,
    mut staterestorer: StateRestorer<SharedMemory, SelfCleaningShMemProvider>,
    in_flight: InFlight,
) -> Result<(Option<State>, Mgr), Error> {
    // SAFETY: installs LibAFL's handler for SIGINT/SIGTERM/SIGQUIT (it exits with
    // CTRL_C_EXIT, which tells us the client was stopped on purpose); the handler data is a
    // static that lives as long as the process.
    if let Err(e) = unsafe { setup_signal_handler(&raw mut EVENTMGR_SIGHANDLER_STATE) } {
        log::warn!("cannot handle stop signals in the client: {e}");
    }
    let builder = LlmpEventManagerBuilder::new().save_state(ShouldSaveState::OnRestart);
    let (state, mgr) = match staterestorer.restore::<(Option<State>, LlmpClientDescription)>()? {
        None => {
            let mgr = builder.build_on_port(shmem, port, broker::configuration())?;
            // A predecessor killed from outside never told the broker it left.
            broker::forget_client(port, in_flight.client());
            (None, mgr)
        }
        Some((state, llmp)) => (
            state,
            builder.build_existing_client_from_description(
                shmem,
                &llmp,
                broker::configuration(),
            )?,
        ),
    };
    in_flight.set_client(ClientId(mgr.mgr_id().0 as u32));
    // The slot must outlive every input: it is unmapped when the process ends.
    in_flight.install();
    std::mem::forget(in_flight);
    staterestorer.reset();
    Ok((state, RestartingEventManager::new(mgr, staterestorer)))
}

/// Asks the kernel to kill this process when its parent dies.
fn die_with_parent() -> Result<(), Error> {
    // SAFETY: prctl(2) setting a flag on this process; no memory is passed.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(Error::os_error(
            std::io::Error::last_os_error(),
            "cannot tie a client to its parent",
        ));
    }
    Ok(())
}

/// How a client ended.
struct ClientEnd {
    /// LibAFL's encoding: the exit code, or 128 + the signal.
    status: i32,
    /// Set when we killed it for going over the RSS limit: what it used.
    rss_mb: Option<u64>,
}

impl ClientEnd {
    fn describe(&self, limit: Option<u64>, oom: bool) -> String {
        match (self.rss_mb, limit) {
            (Some(used), Some(limit)) => {
                format!("ran out of memory ({used} MiB resident, over --rss-limit-mb {limit})")
            }
            _ if self.status == harness::malloc_limit_exit() => {
                "ran out of memory (an allocation over --malloc-limit-mb)".into()
            }
            _ if oom => "was killed by the kernel for lack of memory".into(),
            _ if self.status > 128 => format!("was killed by signal {}", self.status - 128),
            _ => format!(
                "exited with status {} without saving its state",
                self.status
            ),
        }
    }
}

/// Waits for the client to end, killing it if it goes over the RSS limit.
///
/// It sleeps until SIGCHLD (blocked in this process, see [`sigchld_set`]) or until the next
/// memory check is due: no polling on the client's core while the client fuzzes.
fn watch(pid: libc::pid_t, rss_limit_mb: Option<u64>) -> ClientEnd {
    let mut over = None;
    let sigchld = sigchld_set();
    let wait_for = libc::timespec {
        tv_sec: 0,
        tv_nsec: RSS_CHECK_EVERY.as_nanos() as libc::c_long,
    };
    loop {
        let mut status = 0;
        // SAFETY: non-blocking wait for our own child; `status` outlives the call.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid || done < 0 {
            let code = if done < 0 {
                0
            } else if libc::WIFSIGNALED(status) {
                match libc::WTERMSIG(status) {
                    libc::SIGINT | libc::SIGTERM => CTRL_C_EXIT,
                    sig => 128 + sig,
                }
            } else {
                libc::WEXITSTATUS(status)
            };
            return ClientEnd {
                status: code,
                rss_mb: over,
            };
        }
        if let Some(limit) = rss_limit_mb.filter(|_| over.is_none()) {
            if let Some(rss) = memory::resident_mb(pid).filter(|&rss| rss > limit) {
                over = Some(rss);
                // SAFETY: kill(2) on our own child, which has not been reaped yet.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
        // SAFETY: waits for a signal of a valid set, with a valid timeout; the signal's info
        // is not wanted. A timeout or an interruption just means: look again.
        unsafe {
            libc::sigtimedwait(&sigchld, std::ptr::null_mut(), &wait_for);
        }
    }
}

/// The set holding SIGCHLD alone.
fn sigchld_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset fill a zeroed set that outlives the calls.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        set
    }
}

/// Blocks SIGCHLD in the restarter (so `watch` can wait for it), or unblocks it in a client.
fn block_sigchld(block: bool) -> Result<(), Error> {
    let set = sigchld_set();
    let how = if block {
        libc::SIG_BLOCK
    } else {
        libc::SIG_UNBLOCK
    };
    // SAFETY: changes this thread's signal mask with a valid set; the old mask is not wanted.
    if unsafe { libc::pthread_sigmask(how, &set, std::ptr::null_mut()) } != 0 {
        return Err(Error::illegal_state("cannot change the SIGCHLD mask"));
    }
    Ok(())
}
