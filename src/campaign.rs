//! The `fuzz` command: one broker and one client per core, through LibAFL's `Launcher` and
//! LLMP, inside a supervised process group.

use std::{fs, net::TcpListener, time::Duration};

use libafl::{
    events::{ClientDescription, Launcher},
    Error,
};
use libafl_bolts::shmem::ShMemProvider;

use crate::{
    broker, client, harness,
    monitor::{CampaignMonitor, Reproduce},
    options::error_text,
    options::{Campaign, Mode},
    output,
    shmem::SelfCleaningShMemProvider,
    supervisor::{self, Ending},
};

pub fn run(c: &Campaign) -> Result<i32, String> {
    println!(
        "lafuzz: {:?} mode, {} core(s), {} seed file(s), {} dictionary token(s), output {}",
        c.opts.mode,
        c.cores.ids.len(),
        c.seeds.len(),
        c.tokens.len(),
        c.output.display()
    );
    if c.opts.mode == Mode::Reset && !harness::has_reset_hook() {
        println!(
            "lafuzz: warning: the harness has no LLVMFuzzerReset; reset mode only restarts \
             the client every {} inputs",
            c.opts.restart_every
        );
    }
    let max_time = c.opts.max_time.map(Duration::from_secs);
    let error_file = output::client_error_file(&c.output);
    let _ = fs::remove_file(&error_file);
    let ending = supervisor::run(max_time, || launch(c))?;
    // A client that failed stops the campaign and leaves its error; clients that fail while
    // being stopped are not news.
    let client_error = fs::read_to_string(&error_file).ok();
    let _ = fs::remove_file(&error_file);
    match (ending, client_error) {
        (Ending::Stopped, _) => Ok(0),
        (Ending::Exited(_), Some(error)) => Err(error),
        (Ending::Exited(code), None) => Ok(code),
    }
}

/// Runs one client; a client that fails (its target does not start, say) stops the whole
/// campaign, and its error is what the command reports.
fn run_client(
    state: Option<client::State>,
    mgr: client::Mgr,
    desc: ClientDescription,
    c: &Campaign,
) -> Result<(), Error> {
    stop_campaign_on_error(client::run(state, mgr, desc, c), c)
}

/// A client or broker that fails leaves its error for the command to report and stops the
/// campaign; failing while being stopped is not news.
fn stop_campaign_on_error<T>(result: Result<T, Error>, c: &Campaign) -> Result<T, Error> {
    if let Err(e) = &result {
        if !matches!(e, Error::ShuttingDown) {
            let _ = fs::write(output::client_error_file(&c.output), error_text(e));
            // SAFETY: signals this campaign's own process group (see supervisor.rs).
            unsafe {
                libc::kill(0, libc::SIGTERM);
            }
        }
    }
    result
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
fn launch(c: &Campaign) -> i32 {
    let result = (|| -> Result<(), String> {
        let port = match c.opts.broker_port {
            Some(port) => port,
            None => free_port()?,
        };
        let shmem = SelfCleaningShMemProvider::new().map_err(|e| {
            format!(
                "cannot set up shared memory: {}",
                crate::options::error_text(&e)
            )
        })?;
        let reproduce = if c.opts.mode.runs_standalone_target() {
            Reproduce::Target {
                command: c.opts.target.clone(),
            }
        } else {
            Reproduce::for_this_binary()
        };
        let monitor = CampaignMonitor::new(&c.output, c.cores.ids.len(), reproduce);
        let mut run_client = |state, mgr, desc| run_client(state, mgr, desc, c);
        let silence = (!c.opts.show_output).then_some("/dev/null");
        let clients = c.cores.ids.len();
        // Clients and broker as LibAFL's Launcher sets them up, but our broker, which can
        // link to a remote one (the Launcher of LibAFL 0.16.1 drops `remote_broker_addr`).
        let spawn_mgr = |_: &Launcher<'_, _, _, _>, desc, monitor: Option<CampaignMonitor>| match (
            desc, monitor,
        ) {
            (Some(desc), _) => broker::client_manager(shmem.clone(), port, desc),
            (None, Some(monitor)) => stop_campaign_on_error(
                broker::run(shmem.clone(), monitor, port, clients, c.remote_broker),
                c,
            )
            .map(|()| unreachable!("the broker returns only when it stops")),
            (None, None) => Err(Error::illegal_state("broker started without a monitor")),
        };
        let launched = Launcher::builder()
            .shmem_provider(shmem.clone())
            .configuration(broker::configuration())
            .monitor(monitor)
            .run_client(&mut run_client)
            .cores(&c.cores)
            .broker_port(port)
            .stdout_file(silence)
            .build()
            .launch_with_manager(spawn_mgr);
        match launched {
            Ok(()) | Err(Error::ShuttingDown) => Ok(()),
            Err(e) => Err(format!(
                "campaign failed: {}",
                crate::options::error_text(&e)
            )),
        }
    })();
    match result {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("lafuzz: error: {msg}");
            1
        }
    }
}
