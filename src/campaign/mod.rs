//! The `fuzz` command: one broker and one client per core, through LibAFL's `Launcher` and
//! LLMP, inside a supervised process group.
//!
//! The folder is the campaign around the clients: the checks before anything starts
//! (`prepare.rs`), the broker (`broker.rs`), the parent that restarts a dead client
//! (`restarter.rs`), and the wiring of one client (`client.rs`), which hands it to its mode.
//! Uses every layer below it: `modes/`, `engine/`, `monitor/` and down.

mod broker;
mod client;
mod prepare;
mod restarter;

use std::{fs, net::TcpListener};

use libafl::{
    events::{ClientDescription, Launcher},
    Error,
};
use libafl_bolts::shmem::ShMemProvider;

use prepare::prepare;
use restarter::ClientLimits;

use crate::{
    config::FuzzConfig,
    modes::{self, ExecutionMode},
    monitor::{terminal, CampaignMonitor, Console},
    options::FuzzOptions,
    platform::{
        affinity::CpuSet,
        errors::{error_text, FirstError},
        output,
        shmem::SelfCleaningShMemProvider,
        supervisor::{self, Ending},
    },
    types::{Mgr, State},
};

/// Runs a campaign to its end; returns the exit code.
pub fn run(opts: FuzzOptions) -> Result<i32, String> {
    run_watched(opts, || false)
}

/// [`run`], stopping the campaign early when `stop_now` (called about every 50 ms in the
/// supervising process) says so; that ending is not an error.
pub fn run_watched(opts: FuzzOptions, stop_now: impl FnMut() -> bool) -> Result<i32, String> {
    let mode = modes::of(opts.mode);
    if mode.binds_symbols_at_load() {
        modes::bind_symbols_at_load();
    }
    let config = prepare(mode, opts)?;
    let opts = &config.opts;
    if !opts.quiet {
        println!(
            "lafuzz: {:?} mode, {} core(s), {} seed file(s){}, {} dictionary token(s), output {}",
            opts.mode,
            opts.clients(),
            config.seeds.len(),
            if config.grimoire {
                " of text (Grimoire on)"
            } else {
                ""
            },
            config.tokens.len(),
            config.output.display()
        );
    }
    if let Some(warning) = mode.warning(opts) {
        println!("lafuzz: warning: {warning}");
    }
    let _ = fs::remove_file(output::client_restarts_file(&config.output));
    let first_error = FirstError::new()
        .map_err(|e| format!("cannot set up the campaign's error channel: {e}"))?;
    // The broker leaves the status screen when it ends; this process does it when the
    // broker was killed first (it learns that through memory shared with the broker).
    terminal::share_shown_flag();
    let ending = supervisor::run(
        opts.max_time,
        || launch(mode, &config, &first_error),
        stop_now,
    );
    terminal::restore_if_still_shown();
    let ending = ending?;
    // A process that failed stopped the campaign and left its error; processes that fail
    // while being stopped are not news.
    match (ending, first_error.take()) {
        (Ending::Stopped, _) => Ok(0),
        (Ending::Exited(_), Some(error)) => Err(error),
        (Ending::Exited(0), None) => Ok(0),
        (Ending::Exited(code), None) if code > 128 => Err(format!(
            "the campaign's broker was killed by signal {}",
            code - 128
        )),
        (Ending::Exited(code), None) => Ok(code),
    }
}

/// A client or broker that fails leaves its error for the command to report and stops the
/// campaign; failing while being stopped is not news.
fn stop_campaign_on_error<T>(
    result: Result<T, Error>,
    first_error: &FirstError,
) -> Result<T, Error> {
    if let Err(e) = &result {
        if !matches!(e, Error::ShuttingDown) {
            first_error.record(&error_text(e));
            // SAFETY: kill(2) on our own process group (0), which the supervisor made this
            // campaign's alone (see supervisor.rs); no memory is involved.
            unsafe {
                libc::kill(0, libc::SIGTERM);
            }
        }
    }
    result
}

/// How the campaign is shown: the status screen, status lines, or nothing (`--quiet`).
fn console(mode: &dyn ExecutionMode, config: &FuzzConfig) -> Console {
    let opts = &config.opts;
    if opts.quiet {
        return Console::Quiet;
    }
    if !opts.shows_screen() {
        return Console::Lines;
    }
    let comparisons = match (&config.cmplog_target, mode.solves_comparisons(config)) {
        (Some(_), _) => "on (--cmplog build)",
        (None, true) => "on",
        (None, false) => "off",
    };
    let label = format!(
        "mode: {}, comparisons: {comparisons}, cores: {}",
        opts.mode.name(),
        opts.clients()
    );
    Console::Screen { label }
}

/// A free local port for this campaign's broker, so two campaigns on one machine never join
/// each other by accident.
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port for the broker: {e}"))
}

/// Runs the broker in this process and forks the clients; returns the exit code.
fn launch(mode: &dyn ExecutionMode, config: &FuzzConfig, first_error: &FirstError) -> i32 {
    match launch_clients_and_broker(mode, config, first_error) {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("lafuzz: error: {msg}");
            1
        }
    }
}

fn launch_clients_and_broker(
    mode: &dyn ExecutionMode,
    config: &FuzzConfig,
    first_error: &FirstError,
) -> Result<(), String> {
    let opts = &config.opts;
    let port = match opts.broker_port {
        Some(port) => port,
        None => free_port()?,
    };
    let shmem = SelfCleaningShMemProvider::new()
        .map_err(|e| format!("cannot set up shared memory: {}", error_text(&e)))?;
    let monitor = CampaignMonitor::new(
        &config.output,
        opts.clients(),
        mode.reproduce(opts),
        opts.fixed_timeout().is_some(),
        console(mode, config),
    );
    // A client that fails (its target does not start, say) stops the whole campaign, and its
    // error is what the command reports.
    let mut run_client = |state: Option<State>, mgr: Mgr, desc: ClientDescription| {
        stop_campaign_on_error(client::run(mode, state, mgr, desc, config), first_error)
    };
    let clients = opts.clients();
    // Without --cores, one client that the launcher pins to a core this process may use and
    // its restarter lets go again (see platform/affinity.rs).
    let (cores, unpinned) = match &opts.cores {
        Some(cores) => (cores.clone(), None),
        None => {
            let allowed =
                CpuSet::current().map_err(|e| format!("cannot read this process's CPUs: {e}"))?;
            let first = allowed
                .first_as_cores()
                .ok_or("this process may run on no CPU")?;
            (first, Some(allowed))
        }
    };
    let limits = ClientLimits {
        output: config.output.clone(),
        rss_limit_mb: (opts.rss_limit_mb > 0).then_some(opts.rss_limit_mb),
        unpinned,
    };
    // Clients and broker as LibAFL's Launcher sets them up, but our broker, which can link to
    // a remote one (the Launcher of LibAFL 0.16.1 drops `remote_broker_addr`).
    let spawn_mgr =
        |_: &Launcher<'_, _, _, _>, desc, monitor: Option<CampaignMonitor>| match (desc, monitor) {
            (Some(desc), _) => stop_campaign_on_error(
                restarter::client_manager(shmem.clone(), port, &desc, &limits),
                first_error,
            ),
            (None, Some(monitor)) => {
                let ended = broker::run(shmem.clone(), monitor, port, clients, opts.remote_broker);
                stop_campaign_on_error(ended, first_error).map(|never| match never {})
            }
            (None, None) => Err(Error::illegal_state("broker started without a monitor")),
        };
    let launched = Launcher::builder()
        .shmem_provider(shmem.clone())
        .configuration(broker::configuration())
        .monitor(monitor)
        .run_client(&mut run_client)
        .cores(&cores)
        .broker_port(port)
        .stdout_file((!opts.show_output).then_some("/dev/null"))
        .build()
        .launch_with_manager(spawn_mgr);
    match launched {
        Ok(()) | Err(Error::ShuttingDown) => Ok(()),
        Err(e) => Err(format!("campaign failed: {}", error_text(&e))),
    }
}
