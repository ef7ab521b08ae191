//! The campaign's LLMP broker: LibAFL's own event handling (statistics to our monitor, new
//! testcases forwarded to every client), optionally linked to another machine's broker over
//! LLMP's broker-to-broker TCP link (`--remote-broker`).

use std::{
    convert::Infallible,
    net::{Ipv4Addr, SocketAddr, TcpStream},
    num::NonZeroUsize,
    time::Duration,
};

use libafl::{
    events::{EventConfig, StdLlmpEventHook},
    inputs::BytesInput,
    monitors::Monitor,
    Error,
};
use libafl_bolts::{
    llmp::{
        recv_tcp_msg, send_tcp_msg, Broker, Flags, LlmpBroker, LlmpBrokerInner, LlmpHook,
        LlmpMsgHookResult, Tag, TcpRequest, LLMP_FLAG_FROM_B2B,
    },
    tuples::tuple_list,
    ClientId,
};

use crate::platform::shmem::SelfCleaningShMemProvider;

/// Every client and broker of a campaign (and of linked campaigns) share this configuration:
/// they run the same target, so a testcase from one means the same to all.
pub fn configuration() -> EventConfig {
    EventConfig::from_name("lafuzz")
}

/// How often the broker redraws the monitor when no message arrives.
const HEARTBEAT: Duration = Duration::from_secs(30);

/// Runs the broker until the campaign's `clients` have all exited (or forever, when linked to
/// a remote broker: that link counts as a client that never leaves). It only returns an
/// error: `ShuttingDown` when the clients are done.
pub fn run<MT: Monitor>(
    shmem: SelfCleaningShMemProvider,
    monitor: MT,
    port: u16,
    clients: usize,
    remote: Option<SocketAddr>,
) -> Result<Infallible, Error> {
    quiet_handshake_panics();
    let hooks = tuple_list!(LocalStatsOnly(StdLlmpEventHook::<BytesInput, MT>::new(
        monitor
    )?));
    let mut broker = LlmpBroker::new(shmem, hooks)?;
    if let Some(remote) = remote {
        // Before our listener starts: LLMP 0.16.1 gives a link made later the id its listener
        // gives the first local client, and that client then drops what the link brings as
        // its own messages.
        broker.inner_mut().connect_b2b(remote)?;
        println!("lafuzz: linked to the broker at {remote}");
    }
    broker.inner_mut().launch_tcp_listener_on(port)?;
    if let Some(clients) = NonZeroUsize::new(clients) {
        broker.set_exit_after(clients);
    }
    broker.loop_with_timeouts(HEARTBEAT, Some(Duration::from_millis(5)));
    Err(Error::shutting_down())
}

/// Tells the broker on `port` that client `gone` left: a client killed from outside (`kill -9`,
/// the kernel's OOM killer, our `--rss-limit-mb`) never said so, and the broker, which ends when
/// no client is left, would wait for it forever (`--runs` never ended after such a restart).
/// Called by its successor once that one has joined, so the campaign never looks empty.
pub fn forget_client(port: u16, gone: Option<ClientId>) {
    let Some(client_id) = gone else { return };
    let told = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
        .map_err(Error::from)
        .and_then(|mut stream| {
            // The broker greets every connection before it reads the request.
            recv_tcp_msg(&mut stream)?;
            send_tcp_msg(&mut stream, &TcpRequest::ClientQuit { client_id })
        });
    if let Err(e) = told {
        log::warn!("cannot tell the broker that client {client_id:?} is gone: {e}");
    }
}

/// Messages from a linked broker carry the remote clients' statistics, under the id of the
/// link: counting them would mix another machine's executions into this campaign's stats.
/// They are only forwarded to our clients, which import the testcases.
struct LocalStatsOnly<H>(H);

impl<H, SHM, SP> LlmpHook<SHM, SP> for LocalStatsOnly<H>
where
    H: LlmpHook<SHM, SP>,
{
    fn on_new_message(
        &mut self,
        broker: &mut LlmpBrokerInner<SHM, SP>,
        client_id: ClientId,
        msg_tag: &mut Tag,
        msg_flags: &mut Flags,
        msg: &mut [u8],
        new_msgs: &mut Vec<(Tag, Flags, Vec<u8>)>,
    ) -> Result<LlmpMsgHookResult, Error> {
        if *msg_flags & LLMP_FLAG_FROM_B2B == LLMP_FLAG_FROM_B2B {
            return Ok(LlmpMsgHookResult::ForwardToClients);
        }
        self.0
            .on_new_message(broker, client_id, msg_tag, msg_flags, msg, new_msgs)
    }

    fn on_timeout(&mut self) -> Result<(), Error> {
        self.0.on_timeout()
    }
}

/// LLMP 0.16.1's TCP listener thread panics (`expect("Failed to read message body")`) when a
/// client dies in the middle of its handshake: a client killed right after it starts, which
/// the restarter handles and reports. The broker goes on; the panic's text on stderr would
/// only bury the line that says what happened. Every other panic is reported as before.
fn quiet_handshake_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let in_llmp = info.location().is_some_and(|l| l.file().contains("ll_mp"));
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if !(in_llmp && message.starts_with("Failed to read message body")) {
            default(info);
        }
    }));
}
