//! The `fuzz` command: one broker and one client per core, through LibAFL's `Launcher` and
//! LLMP, inside a supervised process group.

use std::{net::TcpListener, time::Duration};

use libafl::{
    events::{EventConfig, Launcher},
    Error,
};
use libafl_bolts::shmem::ShMemProvider;

use crate::{
    client, harness,
    monitor::CampaignMonitor,
    options::{Campaign, Mode},
    shmem::SelfCleaningShMemProvider,
    supervisor,
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
    supervisor::run(max_time, || launch(c))
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
        let monitor = CampaignMonitor::new(&c.output, c.cores.ids.len());
        let mut run_client = |state, mgr, client| client::run(state, mgr, client, c);
        let silence = (!c.opts.show_output).then_some("/dev/null");
        let launched = Launcher::builder()
            .shmem_provider(shmem)
            .configuration(EventConfig::from_name("lafuzz"))
            .monitor(monitor)
            .run_client(&mut run_client)
            .cores(&c.cores)
            .broker_port(port)
            .stdout_file(silence)
            .build()
            .launch();
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
